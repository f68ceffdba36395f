-- Money out (docs/payouts.md): fee schedules, payout schedules, balance transactions, payouts and the bank
-- files they travel in. A tenant is its `owner` key, 'site:<siteId>' or 'store:<storeId>', as in
-- bank_accounts.

-- What the operator charges a tenant: basis points of the amount plus a fixed amount per currency, with
-- optional overrides per card brand. No row: the configured default.
CREATE TABLE fee_schedules (
  owner text PRIMARY KEY,
  percent_bps integer NOT NULL CHECK (percent_bps BETWEEN 0 AND 10000),
  -- {"EUR": "25"}: minor units per currency, as text
  fixed jsonb NOT NULL,
  -- {"amex": {"percentBps": 290, "fixed": {"EUR": "25"}}}
  brands jsonb NOT NULL,
  refund_fees boolean NOT NULL,
  updated_at timestamptz NOT NULL
);

-- When a tenant is paid. No row: the configured default.
CREATE TABLE payout_schedules (
  owner text PRIMARY KEY,
  interval text NOT NULL CHECK (interval IN ('daily', 'weekly', 'monthly', 'manual')),
  weekly_anchor text,
  monthly_anchor integer,
  -- in major units ("10.00"): read in each currency's own minor units
  minimum text NOT NULL,
  delay_days integer NOT NULL CHECK (delay_days BETWEEN 0 AND 60),
  reserve_bps integer NOT NULL CHECK (reserve_bps BETWEEN 0 AND 10000),
  reserve_days integer NOT NULL CHECK (reserve_days BETWEEN 0 AND 365),
  updated_at timestamptz NOT NULL
);

-- Every movement of a tenant's balance, immutable once written (only payout_id is set, once, when a
-- payout pays it). Per owner and currency the nets sum to the tenant's ledger balance.
CREATE TABLE balance_transactions (
  id text PRIMARY KEY,
  owner text NOT NULL,
  currency text NOT NULL,
  type text NOT NULL,
  source_type text NOT NULL,
  source_id text NOT NULL,
  gross numeric NOT NULL,
  fee numeric NOT NULL,
  net numeric NOT NULL,
  created_at timestamptz NOT NULL,
  available_at timestamptz NOT NULL,
  payout_id text
);
-- The tenant's list (keyset on id)
CREATE INDEX balance_transactions_owner ON balance_transactions (owner, id);
-- What is not yet available (pending and reserved): only the last delay's rows are read
CREATE INDEX balance_transactions_availability ON balance_transactions (owner, currency, available_at);
-- What the next payout pays
CREATE INDEX balance_transactions_unpaid ON balance_transactions (owner, currency, available_at)
  WHERE payout_id IS NULL;
-- A payout's report
CREATE INDEX balance_transactions_payout ON balance_transactions (payout_id, id) WHERE payout_id IS NOT NULL;
-- Revenue by day
CREATE INDEX balance_transactions_created ON balance_transactions (created_at);

CREATE TABLE payouts (
  id text PRIMARY KEY,
  owner text NOT NULL,
  currency text NOT NULL,
  amount numeric NOT NULL CHECK (amount > 0),
  status text NOT NULL CHECK (status IN ('pending', 'in_transit', 'paid', 'failed', 'returned')),
  -- pays every balance transaction that carries its id (its report), or an amount chosen by hand
  itemized boolean NOT NULL,
  -- the bank account as it was when the payout was made
  iban_enc text NOT NULL,
  iban_masked text NOT NULL,
  bic text,
  holder_name text NOT NULL,
  arrival_date text,
  failure_code text,
  bank_file_id text,
  -- the day of the scheduled run that made it (null: made on demand): one per owner, currency and day
  scheduled_for text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX payouts_owner ON payouts (owner, id);
-- The console's list of every payout, newest first
CREATE INDEX payouts_created ON payouts (created_at, id);
CREATE UNIQUE INDEX payouts_scheduled ON payouts (owner, currency, scheduled_for) WHERE scheduled_for IS NOT NULL;
CREATE INDEX payouts_bank_file ON payouts (bank_file_id) WHERE bank_file_id IS NOT NULL;
CREATE INDEX payouts_open ON payouts (status, id) WHERE status IN ('pending', 'in_transit');

-- The days the payout run looked at a tenant's balance in a currency, paid or not (below its minimum, no
-- bank account, not its weekday): once a day, so the run does not read it again every sweep. Kept a week.
CREATE TABLE payout_run_days (
  owner text NOT NULL,
  currency text NOT NULL,
  day text NOT NULL,
  PRIMARY KEY (owner, currency, day)
);
CREATE INDEX payout_run_days_day ON payout_run_days (day);

-- A pain.001 written to the outbox. Recorded (with its payouts' bank_file_id) before the file is renamed
-- into place, so a crash between the two is finished or discarded at restart, never written twice.
CREATE TABLE bank_files (
  id text PRIMARY KEY,
  message_id text NOT NULL UNIQUE,
  currency text NOT NULL,
  file_name text NOT NULL,
  payout_count integer NOT NULL,
  total numeric NOT NULL,
  status text NOT NULL CHECK (status IN ('writing', 'written')),
  created_at timestamptz NOT NULL
);

-- Every file read from the inbox, by its content's hash: the same file twice applies once.
CREATE TABLE bank_inbox_files (
  sha256 text PRIMARY KEY,
  file_name text NOT NULL,
  kind text NOT NULL,
  status text NOT NULL CHECK (status IN ('applied', 'rejected')),
  detail text NOT NULL,
  -- entries that matched no payout, for the console and `tessera reconcile`
  unmatched jsonb NOT NULL,
  received_at timestamptz NOT NULL
);

-- Balances from before balance transactions existed open with one adjustment each, so a site's ledger
-- balance and its balance transactions agree from the start.
INSERT INTO balance_transactions (id, owner, currency, type, source_type, source_id, gross, fee, net,
  created_at, available_at)
SELECT 'btx_opening_' || owner_id || '_' || asset, 'site:' || owner_id, asset, 'adjustment', 'opening_balance',
  owner_id, sum(posted), 0, sum(posted), now(), now()
FROM ledger_accounts
WHERE owner_type = 'payments_site' AND (purpose = 'balance' OR purpose LIKE 'balance:%')
GROUP BY owner_id, asset
HAVING sum(posted) <> 0;

-- Fee and payout schedules are tenant settings cached by every process (migration 0025).
CREATE TRIGGER fee_schedules_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON fee_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION notify_tenant_change();
CREATE TRIGGER payout_schedules_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON payout_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION notify_tenant_change();
