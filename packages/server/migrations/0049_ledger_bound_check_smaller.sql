-- A ledger account's bound as the smallest table constraint that holds it (docs/architecture.md, Ledger;
-- docs/benchmarks.md, The account's bound, smaller).
--
-- The one CHECK left on ledger_accounts (migration 0043) held five conditions: pending amounts not
-- negative, and for a bounded account posted >= 0 and posted - pending_debits >= 0. Postgres reads that
-- constraint's stored expression again, plans and compiles it on every UPDATE of an account (migration
-- 0048): counted with valgrind, about 145,000 of the 755,000 instructions a one-statement transfer costs
-- its backend. The pending amounts' conditions are one-column ones, so they become domains like those of
-- 0048 (parsed once per connection, under the names ledger_accounts_pending_debits_check and
-- ledger_accounts_pending_credits_check). What stays a table constraint is the bound alone, and with
-- pending_debits >= 0 it is one comparison: posted >= pending_debits implies posted >= 0, and
-- posted - pending_debits >= 0 is the comparison itself. Nothing is accepted that was refused before.
--
-- As in 0048: the old constraint is dropped first (an ALTER COLUMN TYPE re-validates the checks naming the
-- column, with a scan), the columns change to domains without constraints (binary-compatible: no rewrite,
-- indexes kept), and the new constraints are added NOT VALID (the rows already there held the old one).
DROP VIEW ledger_balances;
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_bounded;
CREATE DOMAIN ledger_accounts_pending_debits AS numeric(78, 0);
CREATE DOMAIN ledger_accounts_pending_credits AS numeric(78, 0);
ALTER TABLE ledger_accounts
  ALTER COLUMN pending_debits TYPE ledger_accounts_pending_debits,
  ALTER COLUMN pending_credits TYPE ledger_accounts_pending_credits;
ALTER DOMAIN ledger_accounts_pending_debits
  ADD CONSTRAINT ledger_accounts_pending_debits_check CHECK (VALUE >= 0) NOT VALID;
ALTER DOMAIN ledger_accounts_pending_credits
  ADD CONSTRAINT ledger_accounts_pending_credits_check CHECK (VALUE >= 0) NOT VALID;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_bounded
  CHECK (NOT is_bounded OR posted >= pending_debits) NOT VALID;

-- as in migration 0048
CREATE VIEW ledger_balances AS
SELECT a.id, a.owner_type, a.owner_id, a.asset, a.purpose, a.is_bounded, a.created_at,
  a.posted + coalesce(d.posted, 0) + coalesce(c.posted, 0) AS posted,
  a.pending_debits + coalesce(d.pending_debits, 0) AS pending_debits,
  a.pending_credits + coalesce(d.pending_credits, 0) + coalesce(c.pending_credits, 0) AS pending_credits
FROM ledger_accounts a
LEFT JOIN LATERAL (
  SELECT sum(x.posted) AS posted, sum(x.pending_debits) AS pending_debits, sum(x.pending_credits) AS pending_credits
  FROM ledger_account_deltas x WHERE x.account_id = a.id AND NOT a.is_bounded
) d ON true
LEFT JOIN LATERAL (
  SELECT sum(y.posted) AS posted, sum(y.pending_credits) AS pending_credits
  FROM ledger_account_credits y WHERE y.account_id = a.id AND a.is_bounded
) c ON true;
