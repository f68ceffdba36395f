-- Card issuing accounts (spec/card-issuing.md, Accounts): one per customer and currency while open,
-- each backed by a bounded ledger account (its balance can never go below zero).
CREATE TABLE issuing_accounts (
  id uuid PRIMARY KEY,
  -- creation order (ids are random UUIDs; several accounts can share a timestamp)
  seq bigint GENERATED ALWAYS AS IDENTITY,
  customer_id text NOT NULL REFERENCES issuing_customers (id),
  partner_id text NOT NULL REFERENCES partners (id),
  currency text NOT NULL,
  status text NOT NULL CHECK (status IN ('open', 'closed')),
  ledger_account_id text NOT NULL REFERENCES ledger_accounts (id),
  created_at timestamptz NOT NULL,
  closed_at timestamptz
);
CREATE UNIQUE INDEX issuing_accounts_one_open_per_currency ON issuing_accounts (customer_id, currency) WHERE status = 'open';
CREATE INDEX issuing_accounts_customer ON issuing_accounts (customer_id, seq);
