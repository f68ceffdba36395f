-- The bank account a payments site or a crypto store is paid out to (docs/payouts.md). The IBAN must be
-- usable to write a bank file, so it is encrypted (AES-256-GCM, bound to its owner), not hashed; the
-- masked form is what every answer shows.
CREATE TABLE bank_accounts (
  -- 'site:<siteId>' or 'store:<storeId>'
  owner text PRIMARY KEY,
  iban_enc text NOT NULL,
  iban_masked text NOT NULL,
  country text NOT NULL,
  bic text,
  holder_name text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
