-- Card issuing: customers of partners and their authentication (spec/card-issuing.md, Authentication).

CREATE TABLE issuing_customers (
  id text PRIMARY KEY,
  partner_id text NOT NULL REFERENCES partners (id),
  -- the partner's own user id (partner flow)
  external_user_id text,
  -- lower-cased
  email text,
  email_verified_at timestamptz,
  password_hash text,
  -- normalised: lower-case 0x… (EVM) or erd1… (MultiversX)
  wallet_address text,
  status text NOT NULL CHECK (status IN ('pending_verification', 'active')),
  two_factor_enabled boolean NOT NULL DEFAULT false,
  failed_logins integer NOT NULL DEFAULT 0,
  locked_until timestamptz,
  created_at timestamptz NOT NULL,
  UNIQUE (partner_id, email),
  UNIQUE (partner_id, external_user_id),
  UNIQUE (partner_id, wallet_address),
  CHECK (email IS NOT NULL OR external_user_id IS NOT NULL OR wallet_address IS NOT NULL)
);

-- Opaque refresh tokens, stored hashed, rotated on every use; a family shares one login.
CREATE TABLE issuing_refresh_tokens (
  id text PRIMARY KEY,
  customer_id text NOT NULL REFERENCES issuing_customers (id),
  family_id text NOT NULL,
  token_hash text NOT NULL UNIQUE,
  status text NOT NULL CHECK (status IN ('active', 'rotated', 'revoked')),
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX issuing_refresh_tokens_family ON issuing_refresh_tokens (family_id);

-- One-time codes (email verification, two-factor) and wallet sign-in messages.
CREATE TABLE issuing_auth_challenges (
  id text PRIMARY KEY,
  partner_id text NOT NULL REFERENCES partners (id),
  purpose text NOT NULL CHECK (purpose IN ('email_verification', 'wallet_register', 'wallet_login', 'two_factor')),
  customer_id text REFERENCES issuing_customers (id),
  -- the email or wallet address the challenge is for
  subject text NOT NULL,
  code_hash text,
  message text,
  attempts integer NOT NULL DEFAULT 0,
  sends integer NOT NULL DEFAULT 0,
  expires_at timestamptz NOT NULL,
  consumed_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX issuing_auth_challenges_subject ON issuing_auth_challenges (partner_id, purpose, subject);

-- The notifier rail's simulator: messages the sandbox "sent", readable by the operator.
CREATE TABLE sandbox_messages (
  id text PRIMARY KEY,
  channel text NOT NULL CHECK (channel IN ('email', 'sms')),
  recipient text NOT NULL,
  subject text NOT NULL,
  body text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX sandbox_messages_recipient ON sandbox_messages (recipient, created_at);
