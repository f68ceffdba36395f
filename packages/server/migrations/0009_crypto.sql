-- The crypto merchant API (spec/crypto-merchant.md) and the two rails it stands on: the blockchain
-- (simulated transfers with confirmations) and FX rates (operator-pinned overrides).

-- Rails -----------------------------------------------------------------------------------------------

-- The FX simulator's pinned rates (sandbox: POST /sandbox/fx/rates); scaled by 10^18.
CREATE TABLE fx_rate_overrides (
  from_currency text NOT NULL,
  to_currency text NOT NULL,
  rate_e18 numeric(78, 0) NOT NULL CHECK (rate_e18 > 0),
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (from_currency, to_currency)
);

-- Deposit addresses the chain rail handed out, and what each belongs to.
CREATE TABLE chain_addresses (
  address text PRIMARY KEY,
  network text NOT NULL,
  asset text NOT NULL,
  reference text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX chain_addresses_reference ON chain_addresses (reference, network, asset);

-- The simulated chain: transfers in (to a deposit address) and out (payouts), confirmed by time.
CREATE TABLE chain_transfers (
  id text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  network text NOT NULL,
  asset text NOT NULL,
  direction text NOT NULL CHECK (direction IN ('in', 'out')),
  address text NOT NULL,
  -- minor units of the asset (its ledger exponent)
  amount numeric(78, 0) NOT NULL CHECK (amount > 0),
  offramp boolean NOT NULL DEFAULT false,
  reference text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'confirmed')),
  confirmations_required integer NOT NULL,
  broadcast_at timestamptz NOT NULL,
  confirms_at timestamptz NOT NULL,
  confirmed_at timestamptz
);
CREATE INDEX chain_transfers_due ON chain_transfers (confirms_at) WHERE status = 'pending';

-- Crypto merchant API ---------------------------------------------------------------------------------

-- Session keys (u_test_/u_live_ + 24), stored as SHA-256.
CREATE TABLE crypto_api_keys (
  id text PRIMARY KEY,
  store_id text NOT NULL REFERENCES stores (id),
  key_hash text NOT NULL UNIQUE,
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  created_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX crypto_api_keys_store ON crypto_api_keys (store_id) WHERE revoked_at IS NULL;

CREATE TABLE crypto_orders (
  id uuid PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  store_id text NOT NULL REFERENCES stores (id),
  reference text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'paid', 'expired', 'canceled',
    'refund_proposed', 'refund_processing', 'refund_completed')),
  currency text NOT NULL,
  total numeric(78, 0) NOT NULL CHECK (total > 0),
  amount_details jsonb,
  line_items jsonb NOT NULL,
  customer jsonb NOT NULL,
  return_url text NOT NULL,
  cancel_url text,
  callback_url text,
  -- the payment option the buyer picked (or the sandbox paid with); locked once a payment is seen
  pay_asset text,
  pay_network text,
  deposit_address text,
  quote_id text,
  payment_locked boolean NOT NULL DEFAULT false,
  payment_id uuid UNIQUE,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX crypto_orders_store ON crypto_orders (store_id, seq);
CREATE INDEX crypto_orders_due ON crypto_orders (expires_at) WHERE status = 'pending';

-- Exchange-rate quotes: asked for by the store (POST /stores/exchange_rates) or made for a buyer on the
-- hosted page; valid 60 seconds.
CREATE TABLE crypto_quotes (
  id text PRIMARY KEY,
  store_id text NOT NULL REFERENCES stores (id),
  order_id uuid REFERENCES crypto_orders (id),
  kind text NOT NULL CHECK (kind IN ('crypto', 'fiat')),
  from_currency text NOT NULL,
  to_currency text NOT NULL,
  rate_e18 numeric(78, 0) NOT NULL CHECK (rate_e18 > 0),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);

-- What the buyer sent, transfer by transfer: valued in the order's currency when seen.
CREATE TABLE crypto_deposits (
  id text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  order_id uuid NOT NULL REFERENCES crypto_orders (id),
  store_id text NOT NULL REFERENCES stores (id),
  asset text NOT NULL,
  network text NOT NULL,
  amount numeric(78, 0) NOT NULL CHECK (amount > 0),
  rate_e18 numeric(78, 0) NOT NULL,
  fiat_value numeric(78, 0) NOT NULL,
  -- valued at a fresh rate because no valid quote covered it
  requoted boolean NOT NULL,
  -- arrived after the order had ended (paid, expired or canceled)
  late boolean NOT NULL,
  offramp boolean NOT NULL,
  status text NOT NULL CHECK (status IN ('detected', 'confirmed')),
  confirmations_required integer NOT NULL,
  ledger_hold_id text NOT NULL,
  detected_at timestamptz NOT NULL,
  confirmed_at timestamptz
);
CREATE INDEX crypto_deposits_order ON crypto_deposits (order_id, seq);

CREATE TABLE crypto_payments (
  id uuid PRIMARY KEY,
  order_id uuid NOT NULL UNIQUE REFERENCES crypto_orders (id),
  store_id text NOT NULL REFERENCES stores (id),
  currency text NOT NULL,
  total numeric(78, 0) NOT NULL CHECK (total > 0),
  asset text NOT NULL,
  network text NOT NULL,
  crypto_amount numeric(78, 0) NOT NULL,
  rate_e18 numeric(78, 0) NOT NULL,
  offramp boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
ALTER TABLE crypto_orders ADD FOREIGN KEY (payment_id) REFERENCES crypto_payments (id) DEFERRABLE INITIALLY DEFERRED;

CREATE TABLE crypto_refunds (
  id uuid PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  payment_id uuid NOT NULL REFERENCES crypto_payments (id),
  order_id uuid NOT NULL REFERENCES crypto_orders (id),
  store_id text NOT NULL REFERENCES stores (id),
  status text NOT NULL CHECK (status IN ('proposed', 'accepted', 'rejected', 'complete', 'expired')),
  amount numeric(78, 0) NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  reason text,
  -- what goes back on chain: the same share of the crypto received as amount is of the payment total
  crypto_amount numeric(78, 0) NOT NULL,
  asset text NOT NULL,
  network text NOT NULL,
  refund_address text,
  -- the order status to return to when the proposal is rejected or expires
  order_status_before text NOT NULL,
  -- the buyer's link to the hosted decision page (a capability; stored hashed)
  decision_token_hash text NOT NULL UNIQUE,
  ledger_hold_id text,
  payout_id text,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  decided_at timestamptz,
  completed_at timestamptz
);
-- Spec rule 2: at most one active refund per payment (rejected and expired ones are history).
CREATE UNIQUE INDEX crypto_refunds_one_active ON crypto_refunds (payment_id)
  WHERE status IN ('proposed', 'accepted', 'complete');
CREATE INDEX crypto_refunds_due ON crypto_refunds (expires_at) WHERE status = 'proposed';
