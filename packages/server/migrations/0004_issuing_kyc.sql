-- Card issuing KYC (spec/card-issuing.md, KYC): the steps a customer fills in, the hosted document
-- checks, and the status the partner is told about by kycStatusChanged.

CREATE TABLE issuing_kyc (
  customer_id text PRIMARY KEY REFERENCES issuing_customers (id),
  status text NOT NULL CHECK (status IN ('not_started', 'in_progress', 'pending_review', 'approved', 'rejected')),
  reject_reason text,
  -- step name → the validated data the customer gave
  steps jsonb NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL
);

CREATE TABLE issuing_kyc_verifications (
  id text PRIMARY KEY,
  customer_id text NOT NULL REFERENCES issuing_customers (id),
  kind text NOT NULL CHECK (kind IN ('identity', 'proof_of_address')),
  status text NOT NULL CHECK (status IN ('started', 'verified', 'rejected')),
  vendor_session_id text NOT NULL UNIQUE,
  reject_reason text,
  created_at timestamptz NOT NULL,
  completed_at timestamptz
);
CREATE INDEX issuing_kyc_verifications_customer ON issuing_kyc_verifications (customer_id, kind, created_at);

-- The KYC vendor rail's simulator: its hosted sessions and the documents it was shown.
CREATE TABLE kyc_vendor_sessions (
  id text PRIMARY KEY,
  reference text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('identity', 'proof_of_address')),
  status text NOT NULL CHECK (status IN ('open', 'verified', 'rejected')),
  reject_reason text,
  document_name text,
  document_type text,
  document_bytes integer,
  document_sha256 text,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  completed_at timestamptz
);
