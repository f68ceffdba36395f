-- The overview's "how is my business doing" (docs/console.md, Overview): beside each day's succeeded
-- payments, those declined or failed (the success rate), the refunds and the disputes, per API, tenant and
-- currency. Adding a column with a constant default rewrites nothing. A day counted before this migration
-- has shape 1 and none of these figures: the console-daily-figures sweep counts those days again, newest
-- first, a few a run (overview-rollup.ts), and the overview reads from the rollup only the days of shape 2.
ALTER TABLE console_daily_figures
  ADD COLUMN failed bigint NOT NULL DEFAULT 0,
  ADD COLUMN refunds bigint NOT NULL DEFAULT 0,
  ADD COLUMN refund_volume numeric(78, 0) NOT NULL DEFAULT 0,
  ADD COLUMN disputes bigint NOT NULL DEFAULT 0,
  ADD COLUMN dispute_volume numeric(78, 0) NOT NULL DEFAULT 0;
ALTER TABLE console_daily_figures_days ADD COLUMN shape smallint NOT NULL DEFAULT 1;
