-- The payout run's once-a-day memo remembers what it saw, not only that it looked: a tenant looked at while
-- its schedule was manual, below its minimum or without a bank account is looked at again the same day as
-- soon as its schedule, bank account or available balance changes (docs/payouts.md, The scheduled run).
-- `paid`: the look made the day's scheduled payout. `seen`: the schedule's and bank account's change
-- times and the available total and count it saw; a row from before this migration saw nothing, so the
-- next round looks again.
ALTER TABLE payout_run_days ADD COLUMN paid boolean NOT NULL DEFAULT false;
ALTER TABLE payout_run_days ADD COLUMN seen text;
