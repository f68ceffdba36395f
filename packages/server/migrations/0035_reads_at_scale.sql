-- Reads that stay fast on a year of data (docs/scale.md): every list the APIs and the console offer is
-- served by an index matching its filter and order, and the console's overview reads a daily rollup.
-- (On a large existing database, build these with CREATE INDEX CONCURRENTLY before upgrading: the
-- migration then finds them and skips them.)

-- payments: GET /order?externalOrderId= and the console's search by the merchant's order id
CREATE INDEX IF NOT EXISTS payments_orders_external ON payments_orders (external_order_id)
  WHERE external_order_id IS NOT NULL;
-- payments: GET /order?customerId= and GET /transaction?customerId=, newest first
CREATE INDEX IF NOT EXISTS payments_orders_customer ON payments_orders (merchant_id, customer_id, id);
CREATE INDEX IF NOT EXISTS payments_transactions_customer ON payments_transactions (merchant_id, customer_id, id);

-- crypto: the console's search by reference and payment id; its order list newest first (all stores)
CREATE INDEX IF NOT EXISTS crypto_orders_reference ON crypto_orders (reference);
CREATE INDEX IF NOT EXISTS crypto_orders_payment ON crypto_orders (payment_id) WHERE payment_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS crypto_orders_seq ON crypto_orders (seq);

-- issuing: the console's card transactions newest first, per partner and for the operator
CREATE INDEX IF NOT EXISTS issuing_transactions_partner ON issuing_transactions (partner_id, seq);
CREATE INDEX IF NOT EXISTS issuing_transactions_seq ON issuing_transactions (seq);

-- the ledger: an account's entries newest first (transaction ids grow with time)
CREATE INDEX IF NOT EXISTS ledger_entries_account_transaction ON ledger_entries (account_id, transaction_id);
DROP INDEX IF EXISTS ledger_entries_account;

-- the console's overview: failed deliveries are few; this finds them without reading the others
CREATE INDEX IF NOT EXISTS webhook_deliveries_failed ON webhook_deliveries (event_id) WHERE status = 'failed';

-- The overview's figures per day, API, tenant and currency: succeeded payments and their volume, counted
-- by the console-daily-figures sweep once a day is over (pages/console/overview-rollup.ts); today is
-- counted live from the tables.
CREATE TABLE console_daily_figures (
  api text NOT NULL,
  tenant_id text NOT NULL,
  day date NOT NULL,
  currency text NOT NULL,
  count bigint NOT NULL,
  volume numeric(78, 0) NOT NULL,
  PRIMARY KEY (api, tenant_id, day, currency)
);
CREATE INDEX console_daily_figures_day ON console_daily_figures (day);

-- The creation-time indexes the rollup's recomputation reads a day range by.
CREATE INDEX IF NOT EXISTS payments_transactions_created ON payments_transactions (created_at);
CREATE INDEX IF NOT EXISTS crypto_payments_created ON crypto_payments (created_at);
CREATE INDEX IF NOT EXISTS issuing_transactions_created ON issuing_transactions (created_at);

-- Retention (docs/operations.md): delivered attempts and sandbox messages are deleted by age.
CREATE INDEX IF NOT EXISTS webhook_attempts_started ON webhook_attempts (started_at);
CREATE INDEX IF NOT EXISTS sandbox_messages_created ON sandbox_messages (created_at);
-- The days the rollup holds (one row per day computed, so a day with no payments is known to be empty).
CREATE TABLE console_daily_figures_days (day date PRIMARY KEY, computed_at timestamptz NOT NULL);
