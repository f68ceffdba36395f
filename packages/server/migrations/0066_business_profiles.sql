-- Merchants' and stores' business profiles (docs/compliance.md, Onboarding): who the business is, who owns
-- and runs it, and a reviewer's decision. One row per tenant; the profile is kept as validated JSON (its
-- fields are read whole, never queried one by one), its status and the decision as columns.
CREATE TABLE business_profiles (
  -- `merchant:<id>` or `store:<id>`
  tenant text PRIMARY KEY,
  status text NOT NULL CHECK (status IN ('draft', 'submitted', 'approved', 'rejected', 'more_information')),
  profile jsonb NOT NULL,
  decision_reason text,
  submitted_at timestamptz,
  decided_at timestamptz,
  decided_by text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX business_profiles_status ON business_profiles (status, updated_at);

-- An owner or director removed from a profile is no longer screened; their alerts stay with their cases
ALTER TABLE compliance_parties ADD COLUMN retired_at timestamptz;
