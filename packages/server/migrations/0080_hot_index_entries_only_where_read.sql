-- Index entries the hot inserts wrote that no read ever uses (issue 54; docs/benchmarks.md, "Half the WAL
-- per write, the third cuts"). Each one is 66-70 bytes of the write-ahead log per insert.
--
-- A unique key on a column still empty when the row is written logs an entry for its NULL, though NULLs
-- never conflict and nothing looks one up: a card transaction's network reference (set only for the
-- payments API's on-us payments), a crypto order's payment (set once it is paid). Each becomes a unique
-- index on the values alone; a lookup by value (`network_reference = $1`) implies NOT NULL, so it still
-- finds it. A crypto order's payment also had a second, plain index on the same values (migration 0035):
-- the unique one serves its reads.
CREATE UNIQUE INDEX IF NOT EXISTS issuing_transactions_network_reference
  ON issuing_transactions (network_reference) WHERE network_reference IS NOT NULL;
ALTER TABLE issuing_transactions DROP CONSTRAINT issuing_transactions_network_reference_key;
CREATE UNIQUE INDEX IF NOT EXISTS crypto_orders_payment_once
  ON crypto_orders (payment_id) WHERE payment_id IS NOT NULL;
ALTER TABLE crypto_orders DROP CONSTRAINT crypto_orders_payment_id_key;
DROP INDEX crypto_orders_payment;

-- A ledger hold's expiry was indexed for a sweep that no domain runs: each domain expires its own holds
-- from its own records (a card transaction's hold_expires_at, a payments authorization's auth_expires_at)
-- and calls expireHold. The hold keeps its expires_at; only the index on it goes.
DROP INDEX ledger_transactions_due_holds;
