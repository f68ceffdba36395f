-- Onboarding invitations (docs/compliance.md, Onboarding): the operator invites a merchant or a store by
-- email to the hosted onboarding page. The link's token is kept hashed; it is valid for 7 days, until it
-- is used, or until a newer invitation for the same tenant replaces it. Finishing the page writes the
-- business profile, submits it, and gives the person a console account with the password they chose.
CREATE TABLE onboarding_invitations (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- `merchant:<id>` or `store:<id>`
  tenant text NOT NULL,
  email text NOT NULL,
  token_sha256 text NOT NULL UNIQUE,
  invited_by text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  -- Used (the page finished) or replaced (a newer invitation): the link no longer opens
  closed_at timestamptz,
  closed_as text CHECK (closed_as IN ('finished', 'replaced')),
  CHECK ((closed_at IS NULL) = (closed_as IS NULL))
);
CREATE INDEX onboarding_invitations_tenant ON onboarding_invitations (tenant, id);
-- Retention: what closed or expired long ago goes (retention.ts)
CREATE INDEX onboarding_invitations_expiry ON onboarding_invitations (expires_at);
