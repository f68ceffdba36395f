-- The one-column CHECK constraints of the tables every request writes, as domains (docs/architecture.md,
-- Schema; docs/benchmarks.md, Checks as domains).
--
-- Postgres keeps a table's CHECK constraints as text and, on every INSERT or UPDATE statement, parses,
-- plans and compiles each of them again: about 6 µs per constraint, every time (a single-row insert into a
-- table with six such checks took 0.07 ms instead of 0.035). A domain's constraints are parsed and planned
-- once per connection and kept in its type cache; a write only compiles them, and only for the columns it
-- assigns (six domain columns: 0.04 ms). A payments order (with a new card) wrote rows under 19 such checks, a card
-- authorization under 12, a ledger transfer under 4.
--
-- Each column below gets a domain of its own, <table>_<column>, over the column's type, whose constraint
-- <table>_<column>_check holds exactly what the table's constraint held. The order of the steps keeps the
-- upgrade cheap on a year of data: the table's CHECK is dropped first (an ALTER COLUMN TYPE re-validates
-- the checks that name the column, with a scan); the column changes to the domain while the domain has no
-- constraint (a binary-compatible change: no rewrite, and indexes on the column are kept — only partial
-- indexes whose predicate names it are rebuilt); then the constraint is added NOT VALID (every value
-- written from now on is checked; the rows already there held it under the table's constraint).
-- Multi-column conditions (a ledger account's bound) stay table constraints. To widen an enumeration
-- later, replace the domain's constraint (ALTER DOMAIN ... DROP CONSTRAINT / ADD CONSTRAINT ... NOT VALID).
DROP VIEW ledger_balances;

CREATE TEMPORARY TABLE checks_as_domains (tbl text, col text, old_check text, expr text) ON COMMIT DROP;
INSERT INTO checks_as_domains VALUES
  ('ledger_entries', 'amount', 'ledger_entries_amount_check', 'VALUE <> 0'),
  ('ledger_transactions', 'kind', 'ledger_transactions_kind_status', $$VALUE IN ('transfer', 'hold', 'hold_post')$$),
  ('ledger_transactions', 'status', 'ledger_transactions_kind_status',
    $$VALUE IN ('posted', 'pending', 'voided', 'expired', 'settled')$$),
  ('ledger_account_credits', 'posted', 'ledger_account_credits_amounts', 'VALUE >= 0'),
  ('ledger_account_credits', 'pending_credits', 'ledger_account_credits_amounts', 'VALUE >= 0'),
  ('events', 'api', 'events_api_check', $$VALUE IN ('issuing', 'payments', 'crypto')$$),
  ('payments_orders', 'amount', 'payments_orders_amount_check', 'VALUE > 0'),
  ('payments_orders', 'checkout', 'payments_orders_checkout_check', $$VALUE IN ('hosted', 'embedded')$$),
  ('payments_orders', 'interval_type', 'payments_orders_interval_type_check', $$VALUE IN ('day', 'month')$$),
  ('payments_orders', 'order_type', 'payments_orders_order_type_check',
    $$VALUE IN ('purchase', 'recurring', 'managed', 'credit')$$),
  ('payments_orders', 'status', 'payments_orders_status_check',
    $$VALUE IN ('start', 'in-progress', 'retrying', 'expiring', 'complete-ok', 'complete-failed', 'canceled')$$),
  ('payments_transactions', 'amount', 'payments_transactions_amount_check', 'VALUE > 0'),
  ('payments_transactions', 'initiator', 'payments_transactions_initiator_check', $$VALUE IN ('customer', 'merchant')$$),
  ('payments_transactions', 'method', 'payments_transactions_method_check', $$VALUE IN ('card', 'wallet')$$),
  ('payments_transactions', 'mode', 'payments_transactions_mode_check', $$VALUE IN ('auth', 'authAndCapture', 'credit')$$),
  ('payments_transactions', 'status', 'payments_transactions_status_check',
    $$VALUE IN ('start', 'in-progress', 'complete-ok', 'complete-failed', 'cancel-ok', 'refund-ok', 'void-ok', '3d-pending', 'charge-back')$$),
  ('payments_transactions', 'type', 'payments_transactions_type_check',
    $$VALUE IN ('deposit', 'refund', 'credit', 'chargeback', 'representment')$$),
  ('payments_cards', 'kind', 'payments_cards_kind_check', $$VALUE IN ('card', 'networkToken')$$),
  ('payments_cards', 'status', 'payments_cards_status_check', $$VALUE IN ('active', 'deleted')$$),
  ('issuing_transactions', 'amount', 'issuing_transactions_amount_check', 'VALUE > 0'),
  ('issuing_transactions', 'disputed_amount', 'issuing_transactions_disputed_amount_check', 'VALUE >= 0'),
  ('issuing_transactions', 'held_amount', 'issuing_transactions_held_amount_check', 'VALUE >= 0'),
  ('issuing_transactions', 'refunded_amount', 'issuing_transactions_refunded_amount_check', 'VALUE >= 0'),
  ('issuing_transactions', 'status', 'issuing_transactions_status_check',
    $$VALUE IN ('pending_3ds', 'authorized', 'declined', 'settled', 'reversed', 'expired')$$),
  ('issuing_transactions', 'type', 'issuing_transactions_type_check', $$VALUE IN ('card_payment', 'refund')$$),
  ('card_network_authorizations', 'route', 'card_network_authorizations_route_check', $$VALUE IN ('simulator', 'on-us')$$),
  ('card_network_authorizations', 'status', 'card_network_authorizations_status_check',
    $$VALUE IN ('approved', 'declined', 'challenge', 'released')$$),
  ('crypto_orders', 'status', 'crypto_orders_status_check',
    $$VALUE IN ('pending', 'paid', 'expired', 'canceled', 'refund_proposed', 'refund_processing', 'refund_completed')$$),
  ('crypto_orders', 'total', 'crypto_orders_total_check', 'VALUE > 0'),
  ('crypto_quotes', 'kind', 'crypto_quotes_kind_check', $$VALUE IN ('crypto', 'fiat')$$),
  ('crypto_quotes', 'rate_e18', 'crypto_quotes_rate_e18_check', 'VALUE > 0'),
  ('crypto_payments', 'total', 'crypto_payments_total_check', 'VALUE > 0');

DO $do$
DECLARE
  c record;
BEGIN
  FOR c IN SELECT d.*, format_type(a.atttypid, a.atttypmod) AS base
    FROM checks_as_domains d JOIN pg_attribute a ON a.attrelid = d.tbl::regclass AND a.attname = d.col LOOP
    EXECUTE format('CREATE DOMAIN %I AS %s', c.tbl || '_' || c.col, c.base);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT IF EXISTS %I', c.tbl, c.old_check);
  END LOOP;
  -- one ALTER TABLE per table, so a partial index naming several of its columns is rebuilt once
  FOR c IN SELECT tbl, string_agg(format('ALTER COLUMN %I TYPE %I', col, tbl || '_' || col), ', ') AS changes
    FROM checks_as_domains GROUP BY tbl LOOP
    EXECUTE format('ALTER TABLE %I %s', c.tbl, c.changes);
  END LOOP;
  FOR c IN SELECT * FROM checks_as_domains LOOP
    EXECUTE format('ALTER DOMAIN %I ADD CONSTRAINT %I CHECK (%s) NOT VALID', c.tbl || '_' || c.col,
      c.tbl || '_' || c.col || '_check', c.expr);
  END LOOP;
END
$do$;

-- as in migration 0039
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
