-- Cardholder disputes (docs/issuing.md, Disputes): the partner disputes a cleared card payment for its
-- customer; the program may credit the account provisionally; the card network decides; the credit is
-- kept or taken back. One row per dispute; its lifecycle is issuing/disputes/dispute.ts.
CREATE TABLE issuing_disputes (
  id uuid PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  partner_id text NOT NULL REFERENCES partners (id),
  customer_id text NOT NULL REFERENCES issuing_customers (id),
  transaction_id uuid NOT NULL REFERENCES issuing_transactions (id),
  account_id uuid NOT NULL REFERENCES issuing_accounts (id),
  currency text NOT NULL,
  amount numeric(78, 0) NOT NULL CHECK (amount > 0),
  reason text NOT NULL,
  explanation text,
  status text NOT NULL CHECK (status IN ('under_review', 'won', 'lost')),
  -- what the program credited the account when the dispute opened (0: none)
  provisional_credit numeric(78, 0) NOT NULL DEFAULT 0,
  -- a lost dispute's provisional credit the account no longer held: the program's loss
  unrecovered_amount numeric(78, 0) NOT NULL DEFAULT 0,
  -- when the sandbox network decides by itself (injected clock)
  decide_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  decided_at timestamptz,
  updated_at timestamptz NOT NULL
);
CREATE INDEX issuing_disputes_transaction ON issuing_disputes (transaction_id);
CREATE INDEX issuing_disputes_partner ON issuing_disputes (partner_id, seq);
CREATE INDEX issuing_disputes_due ON issuing_disputes (decide_at) WHERE status = 'under_review';

-- What open and won disputes claim of a payment: a refund or a further dispute gets at most what is left
-- of the cleared amount after refunds and these.
ALTER TABLE issuing_transactions
  ADD COLUMN disputed_amount numeric(78, 0) NOT NULL DEFAULT 0 CHECK (disputed_amount >= 0);
