-- Card issuing cards (spec/card-issuing.md, Cards). Card data is encrypted at rest (AES-256-GCM, bound to
-- the card id); the PAN's keyed fingerprint enforces uniqueness without storing it in clear.
CREATE TABLE issuing_cards (
  id uuid PRIMARY KEY,
  -- creation order (ids are random UUIDs; several cards can share a timestamp)
  seq bigint GENERATED ALWAYS AS IDENTITY,
  customer_id text NOT NULL REFERENCES issuing_customers (id),
  partner_id text NOT NULL REFERENCES partners (id),
  account_id uuid NOT NULL REFERENCES issuing_accounts (id),
  product_id uuid NOT NULL,
  is_virtual boolean NOT NULL,
  label text,
  status text NOT NULL CHECK (status IN ('pending', 'readyToBeActivated', 'active', 'suspended', 'frozen', 'closed')),
  pan_enc text NOT NULL,
  cvv_enc text NOT NULL,
  pin_enc text,
  pan_fingerprint text NOT NULL,
  bin text NOT NULL,
  last4 text NOT NULL,
  expiry_month integer NOT NULL CHECK (expiry_month BETWEEN 1 AND 12),
  expiry_year integer NOT NULL,
  delivery_address jsonb,
  replaces_card_id uuid REFERENCES issuing_cards (id),
  reissue_reason text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
-- A number belongs to one live card; a damaged or expired card's replacement keeps its number.
CREATE UNIQUE INDEX issuing_cards_live_pan ON issuing_cards (pan_fingerprint) WHERE status <> 'closed';
CREATE INDEX issuing_cards_customer ON issuing_cards (customer_id, seq);

-- Every reveal of card secrets, for audit.
CREATE TABLE issuing_card_secret_reveals (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  card_id uuid NOT NULL REFERENCES issuing_cards (id),
  customer_id text NOT NULL,
  request_id text NOT NULL,
  ip text NOT NULL,
  revealed_at timestamptz NOT NULL
);
CREATE INDEX issuing_card_secret_reveals_card ON issuing_card_secret_reveals (card_id, revealed_at);
