-- bigint-keys.sql with the fewest records that keep every read the product serves: the card transaction's
-- creation-time and sequence indexes left to its time-ordered id (a UUIDv7: lists and time windows by id),
-- the ledger transaction keyed by its operation's digest (the key that makes a posting exactly-once, so no
-- second unique index) and listing its legs' accounts, so that its legs are found by the account index
-- (no index on the legs by transaction). Still every row: the signal, the event, the transaction, the
-- ledger's transaction and legs, the account's update, the network's delta.
-- schema
CREATE TABLE risk_signals (id bigint GENERATED ALWAYS AS IDENTITY, decision_point smallint NOT NULL, tenant bigint NOT NULL,
  object_id uuid NOT NULL, at timestamptz NOT NULL, amount numeric NOT NULL, currency text NOT NULL, ip text, email text,
  card_fingerprint bytea, customer_id bigint, declined boolean NOT NULL, attributes jsonb NOT NULL);
CREATE INDEX ON risk_signals (tenant, decision_point, at);
CREATE INDEX ON risk_signals (hashtextextended(encode(card_fingerprint, 'hex'), 0), at) WHERE card_fingerprint IS NOT NULL;
CREATE INDEX ON risk_signals (customer_id, at) WHERE customer_id IS NOT NULL;
CREATE INDEX ON risk_signals USING brin (at);
CREATE TABLE events (id bigint PRIMARY KEY, api smallint NOT NULL, tenant_id bigint NOT NULL, type smallint NOT NULL,
  payload text NOT NULL, target_url text, created_at timestamptz NOT NULL);
CREATE SEQUENCE events_id;
CREATE INDEX ON events (tenant_id, id);
CREATE FUNCTION object_keys(payload text) RETURNS bigint[] LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY[hashtextextended(payload::jsonb->>'customerId', 0), hashtextextended(payload::jsonb->'data'->>'transactionId', 0)] $$;
CREATE INDEX ON events USING gin (object_keys(payload));
CREATE TABLE issuing_transactions (id uuid PRIMARY KEY, customer_id bigint NOT NULL,
  partner_id bigint NOT NULL, card_id uuid NOT NULL, account_id uuid NOT NULL, type smallint NOT NULL, status smallint NOT NULL,
  currency text NOT NULL, amount numeric(78,0) NOT NULL, settled_amount numeric(78,0), merchant text NOT NULL,
  decline_reason text, hold_id uuid, hold_expires_at timestamptz, created_at timestamptz NOT NULL,
  authorized_at timestamptz, settled_at timestamptz, updated_at timestamptz NOT NULL, network_reference text,
  held_amount numeric(78,0), refunded_amount numeric(78,0) NOT NULL DEFAULT 0, clearing_count integer NOT NULL DEFAULT 0,
  force_post boolean NOT NULL DEFAULT false, original_transaction_id uuid, disputed_amount numeric(78,0) NOT NULL DEFAULT 0,
  mcc text, merchant_country text, merchant_id text, channel text, declined_by text);
CREATE INDEX ON issuing_transactions (customer_id, id);
CREATE INDEX ON issuing_transactions (partner_id, id);
CREATE INDEX ON issuing_transactions (hold_expires_at) WHERE status = 2;
CREATE UNIQUE INDEX ON issuing_transactions (network_reference) WHERE network_reference IS NOT NULL;
CREATE TABLE ledger_accounts (id bigint PRIMARY KEY, asset text NOT NULL, is_bounded boolean NOT NULL,
  posted numeric(78,0) NOT NULL, pending_debits numeric(78,0) NOT NULL, pending_credits numeric(78,0) NOT NULL);
CREATE TABLE ledger_transactions (operation_id uuid PRIMARY KEY, request_hash bytea NOT NULL,
  kind smallint NOT NULL, status smallint NOT NULL, asset text NOT NULL, hold_id uuid, expires_at timestamptz,
  metadata jsonb NOT NULL, accounts bigint[] NOT NULL, created_at timestamptz NOT NULL, resolved_at timestamptz);
CREATE INDEX ON ledger_transactions USING brin (created_at);
CREATE TABLE ledger_entries (transaction_id uuid NOT NULL, account_id bigint NOT NULL, asset text NOT NULL,
  amount numeric(78,0) NOT NULL);
CREATE INDEX ON ledger_entries (account_id, transaction_id);
CREATE TABLE ledger_account_deltas (account_id bigint NOT NULL, posted numeric(78,0), pending_debits numeric(78,0),
  pending_credits numeric(78,0));
INSERT INTO ledger_accounts SELECT i, 'EUR', i > 0, 100000000, 0, 0 FROM generate_series(0, 50) i;
-- operation
INSERT INTO issuing_transactions (id, customer_id, partner_id, card_id, account_id, type, status, currency, amount,
  merchant, hold_id, hold_expires_at, created_at, authorized_at, updated_at, held_amount, channel)
VALUES (gen_random_uuid(), 1234567, 2345, gen_random_uuid(), gen_random_uuid(), 1, 2, 'EUR', 150, 'Coffee Shop',
  gen_random_uuid(), now() + interval '7 days', now(), now(), now(), 150, 'ecommerce');
INSERT INTO events VALUES (nextval('events_id'), 1, 2345, 3,
  '{"eventType":"transactionCreated","eventId":"evt_01M92WF7D04CPQ6VSGACCW6VPH","customerId":"cust_01M92WF83B17Z2JXYSWZC8NR5Y","data":{"transactionId":"'
  || gen_random_uuid() || '"}}', NULL, now());
INSERT INTO risk_signals (decision_point, tenant, object_id, at, amount, currency, card_fingerprint, customer_id,
  declined, attributes)
VALUES (4, 2345, gen_random_uuid(), now(), 150, 'EUR',
  decode('037051f80fbaa950b40e4a284bbc6c58f358ef423e6d36dc6440e98c0005a298', 'hex'), 1234567, false,
  '{"~":115,"card":{"id":"5b59aded-4458-4767-8d77-612d6e37b624"},"account":{"id":"bc1779a8-31db-48b7-a3e9-855351b16964","age_days":0},"issuing":{"mcc":"","channel":"ecommerce","three_ds":false,"merchant_id":"","merchant_name":"Coffee Shop","merchant_country":""},"customer":{"country":"","age_days":0}}');
WITH t AS (
  INSERT INTO ledger_transactions VALUES (gen_random_uuid(),
    decode('85b6933c58bb838d82b5d29fdf8ebbb8e11ec472b76f9177b8e9960980387a35', 'hex'), 1, 1, 'EUR', NULL, now(), '{}',
    ARRAY[:n, 0]::bigint[], now(), NULL)
  RETURNING operation_id AS id)
INSERT INTO ledger_entries SELECT t.id, x.account, 'EUR', x.amount FROM t, (VALUES (:n, -150), (0, 150)) x (account, amount);
UPDATE ledger_accounts SET pending_debits = pending_debits + 150 WHERE id = :n;
INSERT INTO ledger_account_deltas VALUES (0, 0, 0, 150);
-- rollup
WITH d AS (DELETE FROM ledger_account_deltas RETURNING pending_credits)
UPDATE ledger_accounts SET pending_credits = pending_credits + (SELECT coalesce(sum(pending_credits), 0) FROM d)
WHERE id = 0;
