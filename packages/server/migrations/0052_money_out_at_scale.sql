-- Money out on a year of data (docs/payouts.md; docs/scale.md, Money out on a year of data). The indexes on
-- the big tables are `IF NOT EXISTS`: on a database with millions of rows, build them first with CREATE
-- INDEX CONCURRENTLY (docs/operations.md, Upgrading a large database).

-- Each tenant's balance per currency and UTC day, summed once the day is over by the balance-days sweep:
-- the day's gross, fees and net, how many movements carried a fee (the revenue report's count), and the
-- closing balance (every movement up to the day's end). The balance-by-day and revenue reports read these
-- rows plus the live rows of the days not yet summed; a day without movements has no row.
CREATE TABLE balance_days (
  owner text NOT NULL,
  currency text NOT NULL,
  day date NOT NULL,
  gross numeric NOT NULL,
  fee numeric NOT NULL,
  net numeric NOT NULL,
  fee_count bigint NOT NULL,
  closing numeric NOT NULL,
  PRIMARY KEY (owner, currency, day)
);
-- The revenue report: every tenant's days in a range
CREATE INDEX balance_days_day ON balance_days (day);

-- The days the sweep has summed, with when: one unbroken run from the first day with movements, so the
-- reports know which days to read from balance_days and which from the rows.
CREATE TABLE balance_days_summed (
  day date PRIMARY KEY,
  summed_at timestamptz NOT NULL
);

-- Reconcile's proofs: for each UTC day proved, the cumulative sums both sides of checks 1 (balances) and 6
-- (revenue) came to at its end, per tenant and currency. A later run starts from the newest one and reads
-- only the days after it; `tessera reconcile --full` proves every day again from the first.
CREATE TABLE reconcile_marks (
  day date PRIMARY KEY,
  sums jsonb NOT NULL,
  proved_at timestamptz NOT NULL
);

-- Every reconcile run's result, for the console's Reports page (the newest) and the curious; kept 400 runs.
CREATE TABLE reconcile_runs (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  date date NOT NULL,
  full_run boolean NOT NULL,
  clean boolean NOT NULL,
  checked jsonb NOT NULL,
  findings jsonb NOT NULL,
  duration_ms integer NOT NULL,
  ran_at timestamptz NOT NULL
);

-- A payout of a large backlog, made in batches of at most 10,000 balance transactions, each batch its own
-- transaction: the payout's id, chosen before its first batch, marks the items it takes; the payout row and
-- its ledger posting are written with the last batch. One per tenant and currency at a time; a process
-- killed between batches leaves this row, and the next payout run (or payout) of the tenant goes on from it.
CREATE TABLE payout_assemblies (
  payout_id text PRIMARY KEY,
  owner text NOT NULL,
  currency text NOT NULL,
  -- what becomes available up to this time is paid (later rows wait for the next payout)
  cut_at timestamptz NOT NULL,
  scheduled_for text,
  items bigint NOT NULL,
  total numeric NOT NULL,
  started_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX payout_assemblies_owner ON payout_assemblies (owner, currency);

-- The payout run's look remembers when it looked: a tenant is looked at again the same day only when one
-- of its unpaid balance transactions became available since (an index probe), its schedule or bank
-- account changed, or a run is explicit. `seen` now holds the schedule's and bank account's change times.
ALTER TABLE payout_run_days ADD COLUMN looked_at timestamptz;

-- Balance transactions of the rarer types within a tenant (refunds, chargebacks, payouts…): the list
-- filtered by one of them. Captures and their fees, most of the rows and of the hot path's writes, are
-- left out: the tenant's list by id finds them at once.
CREATE INDEX IF NOT EXISTS balance_transactions_owner_type ON balance_transactions (owner, type, id)
  WHERE type NOT IN ('capture', 'fee');

-- Reconcile reads the ledger's transactions of a day: a BRIN index on their time (rows arrive in time
-- order) is a few pages, and an insert into the newest, not yet summarized range writes nothing to it.
CREATE INDEX IF NOT EXISTS ledger_transactions_created_brin ON ledger_transactions USING brin (created_at)
  WITH (autosummarize = off);

-- The audit trail by time, alone and within a tenant (GET /admin/audit-events?from=&to=): newest first by
-- (at, seq), a page read from the index without the whole window (times never go back along the chain).
CREATE INDEX IF NOT EXISTS audit_events_at ON audit_events (at, seq);
CREATE INDEX IF NOT EXISTS audit_events_tenant_at ON audit_events (tenant_kind, tenant_id, at, seq)
  WHERE tenant_id IS NOT NULL;
