-- Card transactions of issued cards and their 3D Secure challenges (spec/card-issuing.md, Transactions).
CREATE TABLE issuing_transactions (
  id uuid PRIMARY KEY,
  -- creation order (ids are random UUIDs; several transactions can share a timestamp)
  seq bigint GENERATED ALWAYS AS IDENTITY,
  customer_id text NOT NULL REFERENCES issuing_customers (id),
  partner_id text NOT NULL REFERENCES partners (id),
  card_id uuid NOT NULL REFERENCES issuing_cards (id),
  account_id uuid NOT NULL REFERENCES issuing_accounts (id),
  type text NOT NULL CHECK (type IN ('card_payment')),
  status text NOT NULL CHECK (status IN ('pending_3ds', 'authorized', 'declined', 'settled', 'reversed', 'expired')),
  currency text NOT NULL,
  amount numeric(78, 0) NOT NULL CHECK (amount > 0),
  settled_amount numeric(78, 0),
  merchant text NOT NULL,
  decline_reason text,
  hold_id text,
  -- when an authorization hold lapses without clearing (injected clock)
  hold_expires_at timestamptz,
  created_at timestamptz NOT NULL,
  authorized_at timestamptz,
  settled_at timestamptz,
  updated_at timestamptz NOT NULL
);
CREATE INDEX issuing_transactions_customer ON issuing_transactions (customer_id, seq);
CREATE INDEX issuing_transactions_hold_due ON issuing_transactions (hold_expires_at) WHERE status = 'authorized';

CREATE TABLE issuing_3ds_challenges (
  id uuid PRIMARY KEY,
  transaction_id uuid NOT NULL UNIQUE REFERENCES issuing_transactions (id),
  customer_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'authorized', 'declined', 'cancelled', 'timeout', 'failed')),
  auth_type text,
  requested_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  decided_at timestamptz
);
CREATE INDEX issuing_3ds_challenges_due ON issuing_3ds_challenges (expires_at) WHERE status = 'pending';
CREATE INDEX issuing_3ds_challenges_customer ON issuing_3ds_challenges (customer_id) WHERE status = 'pending';
