-- Card issuing topups (spec/card-issuing.md, Topups): money coming onto a customer's account.
CREATE TABLE issuing_topups (
  id text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  customer_id text NOT NULL REFERENCES issuing_customers (id),
  partner_id text NOT NULL REFERENCES partners (id),
  account_id uuid NOT NULL REFERENCES issuing_accounts (id),
  kind text NOT NULL CHECK (kind IN ('fiat')),
  method text NOT NULL CHECK (method IN ('bank_transfer')),
  status text NOT NULL CHECK (status IN ('pending', 'completed', 'expired')),
  currency text NOT NULL,
  amount numeric(78, 0) NOT NULL CHECK (amount > 0),
  -- the payment reference the customer quotes on the bank transfer
  reference text NOT NULL UNIQUE,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  completed_at timestamptz
);
CREATE INDEX issuing_topups_customer ON issuing_topups (customer_id, seq);
CREATE INDEX issuing_topups_usage ON issuing_topups (customer_id, currency, created_at) WHERE status <> 'expired';
CREATE INDEX issuing_topups_due ON issuing_topups (expires_at) WHERE status = 'pending';
