-- Four eyes on money (docs/console.md, Approvals): a tenant's policy says above which amount a console
-- refund or payout, and whether a change of the payout bank account, needs a second person's approval.
-- Such an action is kept as a request until another member (or an operator) approves it — it then runs,
-- in the approval's own transaction — or rejects it, or it expires. What the action will do is stored
-- encrypted (a new bank account's IBAN is in it).
CREATE TABLE approval_policies (
  tenant_kind text NOT NULL CHECK (tenant_kind IN ('merchant', 'store')),
  tenant_id text NOT NULL,
  bank_account_change boolean NOT NULL,
  expires_after_seconds integer NOT NULL CHECK (expires_after_seconds > 0),
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_kind, tenant_id)
);

-- Amounts strictly above `above` (minor units of the currency) need approval; a currency not listed needs none.
CREATE TABLE approval_thresholds (
  tenant_kind text NOT NULL,
  tenant_id text NOT NULL,
  action text NOT NULL CHECK (action IN ('refund', 'payout')),
  currency text NOT NULL,
  above numeric(38, 0) NOT NULL CHECK (above >= 0),
  PRIMARY KEY (tenant_kind, tenant_id, action, currency),
  FOREIGN KEY (tenant_kind, tenant_id) REFERENCES approval_policies ON DELETE CASCADE
);

CREATE TABLE approval_requests (
  id text PRIMARY KEY,
  tenant_kind text NOT NULL CHECK (tenant_kind IN ('merchant', 'store')),
  tenant_id text NOT NULL,
  action text NOT NULL CHECK (action IN ('refund', 'payout', 'bankAccountChange')),
  -- What it acts on: a transaction id, or the site or store ('site:1', 'store:str_…')
  object_id text NOT NULL,
  currency text,
  amount numeric(38, 0),
  -- What the action does, in words, as the requester confirmed it (no secret: the IBAN masked)
  summary text NOT NULL,
  payload_enc text NOT NULL,
  requested_by text NOT NULL,
  requested_by_email text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired')),
  decided_by text,
  decided_by_email text,
  decided_at timestamptz,
  -- Where the approved action's result is (a console address)
  outcome text,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX approval_requests_tenant ON approval_requests (tenant_kind, tenant_id, created_at DESC, id DESC);
CREATE INDEX approval_requests_recent ON approval_requests (created_at DESC, id DESC);
CREATE INDEX approval_requests_due ON approval_requests (expires_at) WHERE status = 'pending';
