-- A card authorization's rows as the product writes them today (migrations up to 0090), with their columns,
-- their indexes and values of a bench authorization's size: the card transaction, its event, its risk
-- signal, the ledger's hold (a transaction, two entries), the cardholder's bounded account updated and the
-- network's unbounded one credited through a delta row that the rollup deletes. A model: the bench measures
-- the real path (docs/benchmarks.md); this one is there to be changed, shape by shape.
-- schema
CREATE TABLE risk_signals (id bigint GENERATED ALWAYS AS IDENTITY, decision_point text NOT NULL, tenant text NOT NULL,
  object_id text NOT NULL, at timestamptz NOT NULL, amount numeric NOT NULL, currency text NOT NULL, ip text, email text,
  card_fingerprint text, customer_id text, declined boolean NOT NULL, attributes jsonb NOT NULL);
CREATE INDEX ON risk_signals (hashtextextended(tenant || ' ' || decision_point, 0), at);
CREATE INDEX ON risk_signals (hashtextextended(tenant || ' ' || decision_point || ' ' || card_fingerprint, 0), at)
  WHERE card_fingerprint IS NOT NULL;
CREATE INDEX ON risk_signals (hashtextextended(tenant || ' ' || decision_point || ' ' || customer_id, 0), at)
  WHERE customer_id IS NOT NULL;
CREATE INDEX ON risk_signals USING brin (at);
CREATE TABLE events (id text PRIMARY KEY, api text NOT NULL, tenant_id text NOT NULL, type text NOT NULL,
  payload text NOT NULL, target_url text, created_at timestamptz NOT NULL);
CREATE INDEX ON events (hashtextextended(tenant_id, 0), id);
CREATE FUNCTION object_keys(payload text) RETURNS bigint[] LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY[hashtextextended(payload::jsonb->>'customerId', 0), hashtextextended(payload::jsonb->'data'->>'transactionId', 0)] $$;
CREATE INDEX ON events USING gin (object_keys(payload));
CREATE TABLE issuing_transactions (id uuid PRIMARY KEY, seq bigint GENERATED ALWAYS AS IDENTITY, customer_id text NOT NULL,
  partner_id text NOT NULL, card_id uuid NOT NULL, account_id uuid NOT NULL, type text NOT NULL, status text NOT NULL,
  currency text NOT NULL, amount numeric(78,0) NOT NULL, settled_amount numeric(78,0), merchant text NOT NULL,
  decline_reason text, hold_id text, hold_expires_at timestamptz, created_at timestamptz NOT NULL,
  authorized_at timestamptz, settled_at timestamptz, updated_at timestamptz NOT NULL, network_reference text,
  held_amount numeric(78,0), refunded_amount numeric(78,0) NOT NULL DEFAULT 0, clearing_count integer NOT NULL DEFAULT 0,
  force_post boolean NOT NULL DEFAULT false, original_transaction_id uuid, disputed_amount numeric(78,0) NOT NULL DEFAULT 0,
  mcc text, merchant_country text, merchant_id text, channel text, declined_by text);
CREATE INDEX ON issuing_transactions (hashtextextended(customer_id, 0), seq);
CREATE INDEX ON issuing_transactions (hashtextextended(partner_id, 0), seq);
CREATE INDEX ON issuing_transactions (created_at);
CREATE INDEX ON issuing_transactions (hold_expires_at) WHERE status = 'authorized';
CREATE INDEX ON issuing_transactions (seq);
CREATE UNIQUE INDEX ON issuing_transactions (network_reference) WHERE network_reference IS NOT NULL;
CREATE TABLE ledger_accounts (id text PRIMARY KEY, asset text NOT NULL, is_bounded boolean NOT NULL,
  posted numeric(78,0) NOT NULL, pending_debits numeric(78,0) NOT NULL, pending_credits numeric(78,0) NOT NULL);
CREATE TABLE ledger_transactions (id text PRIMARY KEY, operation_id text NOT NULL UNIQUE, request_hash text NOT NULL,
  kind text NOT NULL, status text NOT NULL, asset text NOT NULL, hold_id text, expires_at timestamptz,
  metadata jsonb NOT NULL, created_at timestamptz NOT NULL, resolved_at timestamptz);
CREATE INDEX ON ledger_transactions USING brin (created_at);
CREATE TABLE ledger_entries (transaction_id text NOT NULL, account_id text NOT NULL, asset text NOT NULL,
  amount numeric(78,0) NOT NULL);
CREATE INDEX ON ledger_entries (transaction_id);
CREATE INDEX ON ledger_entries (hashtextextended(account_id, 0), transaction_id);
CREATE TABLE ledger_account_deltas (account_id text NOT NULL, posted numeric(78,0), pending_debits numeric(78,0),
  pending_credits numeric(78,0));
-- the network's account (unbounded, 00) and 50 cardholders' (bounded)
INSERT INTO ledger_accounts
SELECT 'lac_01M92WF88MF495CMBSJXSHYY' || lpad(i::text, 2, '0'), 'EUR', i > 0, 100000000, 0, 0
FROM generate_series(0, 50) i;
-- operation
INSERT INTO issuing_transactions (id, customer_id, partner_id, card_id, account_id, type, status, currency, amount,
  merchant, hold_id, hold_expires_at, created_at, authorized_at, updated_at, held_amount, channel)
VALUES (gen_random_uuid(), 'cust_01M92WF83B17Z2JXYSWZC8NR5Y', 'ptn_01M92WF8237NM2YB21P2F2PH20', gen_random_uuid(),
  gen_random_uuid(), 'card_payment', 'authorized', 'EUR', 150, 'Coffee Shop', 'ltx_01M92WF8AVB5Y9Y9YNHB3A4W0E',
  now() + interval '7 days', now(), now(), now(), 150, 'ecommerce');
INSERT INTO events VALUES ('evt_' || upper(substr(md5(random()::text), 1, 26)), 'issuing',
  'ptn_01M92WF8237NM2YB21P2F2PH20', 'transactionCreated',
  '{"eventType":"transactionCreated","eventId":"evt_01M92WF7D04CPQ6VSGACCW6VPH","customerId":"cust_01M92WF83B17Z2JXYSWZC8NR5Y","data":{"transactionId":"'
  || gen_random_uuid() || '"}}', NULL, now());
INSERT INTO risk_signals (decision_point, tenant, object_id, at, amount, currency, card_fingerprint, customer_id,
  declined, attributes)
VALUES ('issuing.authorization', 'partner:ptn_01M92WF8237NM2YB21P2F2PH20', gen_random_uuid()::text, now(), 150, 'EUR',
  '037051f80fbaa950b40e4a284bbc6c58f358ef423e6d36dc6440e98c0005a298', 'cust_01M92WF83B17Z2JXYSWZC8NR5Y', false,
  '{"~":115,"card":{"id":"5b59aded-4458-4767-8d77-612d6e37b624"},"account":{"id":"bc1779a8-31db-48b7-a3e9-855351b16964","age_days":0},"issuing":{"mcc":"","channel":"ecommerce","three_ds":false,"merchant_id":"","merchant_name":"Coffee Shop","merchant_country":""},"customer":{"country":"","age_days":0}}');
WITH t AS (
  INSERT INTO ledger_transactions VALUES ('ltx_' || upper(substr(md5(random()::text), 1, 26)),
    'issuing-auth:' || gen_random_uuid(), '85b6933c58bb838d82b5d29fdf8ebbb8e11ec472b76f9177b8e9960980387a35', 'hold',
    'pending', 'EUR', NULL, now(), '{}', now(), NULL)
  RETURNING id)
INSERT INTO ledger_entries
SELECT t.id, x.account, 'EUR', x.amount FROM t, (VALUES ('lac_01M92WF88MF495CMBSJXSHYY' || lpad(:n::text, 2, '0'), -150), ('lac_01M92WF88MF495CMBSJXSHYY00', 150)) x (account, amount);
UPDATE ledger_accounts SET pending_debits = pending_debits + 150 WHERE id = 'lac_01M92WF88MF495CMBSJXSHYY' || lpad(:n::text, 2, '0');
INSERT INTO ledger_account_deltas VALUES ('lac_01M92WF88MF495CMBSJXSHYY00', 0, 0, 150);
-- rollup
WITH d AS (DELETE FROM ledger_account_deltas RETURNING pending_credits)
UPDATE ledger_accounts SET pending_credits = pending_credits + (SELECT coalesce(sum(pending_credits), 0) FROM d)
WHERE id = 'lac_01M92WF88MF495CMBSJXSHYY00';
