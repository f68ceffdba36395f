-- A site as the card network knows it (docs/payments.md, Sites): its merchant category code (ISO 18245) and
-- its country (ISO 3166 alpha-2), sent with each authorization. An issued card charged on the payments API
-- (the on-us path) meets its spending controls by them, as a network authorization does.
ALTER TABLE sites
  ADD COLUMN mcc text CHECK (mcc ~ '^[0-9]{4}$'),
  ADD COLUMN country text CHECK (country ~ '^[A-Z]{2}$');
