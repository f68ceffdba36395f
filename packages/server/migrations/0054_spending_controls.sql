-- Spending controls of issued cards (docs/issuing.md, Spending controls): what a partner sets for its whole
-- program, for an account or for a card, and what a cardholder sets for their own card; an authorization
-- must pass all that apply. One row per subject and scope; a subject without controls has no row, so the
-- one-statement authorization checks only that none exists.
CREATE TABLE issuing_spending_controls (
  -- the partner's id (scope 'partner'), an account's id ('account') or a card's id ('card', 'cardholder')
  subject_id text NOT NULL,
  scope text NOT NULL CHECK (scope IN ('partner', 'account', 'card', 'cardholder')),
  partner_id text NOT NULL REFERENCES partners (id),
  -- {allowedMccs, blockedMccs, allowedCountries, blockedCountries, channels, maxPerAuthorization, limits,
  -- maxCountPerDay, currency}: amounts in minor units as decimal strings (issuing/cards/spending-controls.ts)
  controls jsonb NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (subject_id, scope)
);

-- What a card, or an account, has spent in the current UTC day and month and over its life: kept only for
-- subjects whose controls carry limits, written under the row's lock by each authorization they approve
-- (a row per card or account, never one that a whole partner's authorizations write).
CREATE TABLE issuing_spend_counters (
  subject_id uuid PRIMARY KEY,
  day date NOT NULL,
  day_amount numeric(78, 0) NOT NULL DEFAULT 0,
  day_count integer NOT NULL DEFAULT 0,
  month date NOT NULL,
  month_amount numeric(78, 0) NOT NULL DEFAULT 0,
  lifetime_amount numeric(78, 0) NOT NULL DEFAULT 0
);

-- Where and how a card was used (the authorization request's merchant data), and which control declined it.
ALTER TABLE issuing_transactions
  ADD COLUMN mcc text,
  ADD COLUMN merchant_country text,
  ADD COLUMN merchant_id text,
  ADD COLUMN channel text,
  -- '<scope>.<control>' of the spending control that declined it (decline_reason 'spending_control')
  ADD COLUMN declined_by text;
