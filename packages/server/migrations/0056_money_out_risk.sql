-- Risk rules on money out (docs/risk.md, Decision points `payout` and `bank_account.change`).
-- A payout a rule holds waits, its money already out of the balance, in status `held` until a person
-- releases it (then `pending`, on to the bank) or refuses it (then `failed`, the money back).
ALTER TABLE payouts DROP CONSTRAINT payouts_status_check;
ALTER TABLE payouts ADD CONSTRAINT payouts_status_check
  CHECK (status IN ('held', 'pending', 'in_transit', 'paid', 'failed', 'returned')) NOT VALID;
ALTER TABLE payouts VALIDATE CONSTRAINT payouts_status_check;

-- A change of a payout bank account a rule holds: the new account, encrypted as bank_accounts keeps it,
-- waits here for a person; payouts keep going to the account in place until it is applied.
CREATE TABLE bank_account_changes (
  id text PRIMARY KEY,
  -- 'site:<siteId>' or 'store:<storeId>'
  owner text NOT NULL,
  iban_enc text NOT NULL,
  iban_masked text NOT NULL,
  country text NOT NULL,
  bic text,
  holder_name text NOT NULL,
  status text NOT NULL CHECK (status IN ('held', 'applied', 'refused')),
  created_at timestamptz NOT NULL,
  decided_at timestamptz
);
-- The owner's held change (one at a time: a newer request replaces it) and its history, newest first.
CREATE INDEX bank_account_changes_owner ON bank_account_changes (owner, id);
CREATE UNIQUE INDEX bank_account_changes_held ON bank_account_changes (owner) WHERE status = 'held';
