-- Topups paid by card on the hosted page (through the card network rail) and crypto topups (a deposit
-- address on the chain rail, credited at a quoted rate once confirmed).
ALTER TABLE issuing_topups DROP CONSTRAINT issuing_topups_kind_check;
ALTER TABLE issuing_topups ADD CONSTRAINT issuing_topups_kind_check CHECK (kind IN ('fiat', 'crypto'));
ALTER TABLE issuing_topups DROP CONSTRAINT issuing_topups_method_check;
ALTER TABLE issuing_topups ADD CONSTRAINT issuing_topups_method_check CHECK (method IN ('bank_transfer', 'card', 'crypto'));
ALTER TABLE issuing_topups DROP CONSTRAINT issuing_topups_status_check;
ALTER TABLE issuing_topups ADD CONSTRAINT issuing_topups_status_check CHECK (status IN ('pending', 'confirming', 'completed', 'expired'));

ALTER TABLE issuing_topups
  -- the hosted page's address (/hosted/issuing/topups/{payment_token}): unguessable, per topup
  ADD COLUMN payment_token uuid UNIQUE,
  -- the card network's reference of the latest card attempt, and why the last one failed
  ADD COLUMN network_reference text UNIQUE,
  ADD COLUMN last_decline text,
  -- crypto: what to send where, at which rate (account currency per unit of the asset, scaled 10^18)
  ADD COLUMN crypto_asset text,
  ADD COLUMN crypto_network text,
  ADD COLUMN crypto_amount numeric(78, 0),
  ADD COLUMN deposit_address text,
  ADD COLUMN rate_e18 numeric(78, 0),
  ADD COLUMN fee numeric(78, 0),
  ADD COLUMN crypto_received numeric(78, 0),
  ADD COLUMN credited_amount numeric(78, 0),
  ADD COLUMN confirmations integer,
  ADD COLUMN confirmations_required integer,
  ADD COLUMN transfer_broadcast_at timestamptz;
CREATE INDEX issuing_topups_confirming ON issuing_topups (id) WHERE status = 'confirming';

CREATE TABLE issuing_topup_quotes (
  id text PRIMARY KEY,
  customer_id text NOT NULL REFERENCES issuing_customers (id),
  asset text NOT NULL,
  network text NOT NULL,
  currency text NOT NULL,
  rate_e18 numeric(78, 0) NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);
