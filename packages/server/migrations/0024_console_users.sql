-- The console's people: an operator (every tenant) or a member of one partner, merchant or store.
-- Passwords are argon2id hashes; a TOTP secret is encrypted (the platform must read it to check a code).
CREATE TABLE console_users (
  id text PRIMARY KEY,
  email text NOT NULL UNIQUE,
  password_hash text NOT NULL,
  role text NOT NULL CHECK (role IN ('operator', 'member')),
  tenant_kind text CHECK (tenant_kind IN ('partner', 'merchant', 'store')),
  tenant_id text,
  totp_secret_enc text,
  -- The last TOTP time step accepted: a code is good once.
  totp_last_step bigint,
  failed_signins integer NOT NULL DEFAULT 0,
  locked_until timestamptz,
  created_at timestamptz NOT NULL,
  CHECK ((role = 'operator') = (tenant_kind IS NULL)),
  CHECK ((tenant_kind IS NULL) = (tenant_id IS NULL))
);

-- A signed-in browser. Only the cookie's SHA-256 is kept; user_id is null for the sandbox's admin-token
-- sign-in. `stage` is 'totp' between a right password and its second factor.
CREATE TABLE console_sessions (
  id_hash text PRIMARY KEY,
  user_id text REFERENCES console_users (id) ON DELETE CASCADE,
  csrf_token text NOT NULL,
  stage text NOT NULL CHECK (stage IN ('totp', 'active')),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX console_sessions_user ON console_sessions (user_id);
