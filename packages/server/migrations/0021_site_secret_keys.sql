-- Each site's secret key, the real service's `sk_<env>_<key>`: the 32-character key that was the site's
-- IPN secret is now also a Bearer credential of the payments API and the key of the hosted checkout's
-- checksum. Its hash finds the site from a Bearer credential (filled in by the server at start for sites
-- created before this migration, since only the server can decrypt the key). A rotation keeps the
-- previous key valid until `previous_secret_key_until`.
ALTER TABLE sites RENAME COLUMN ipn_secret_enc TO secret_key_enc;
ALTER TABLE sites
  ADD COLUMN secret_key_hash text,
  ADD COLUMN previous_secret_key_enc text,
  ADD COLUMN previous_secret_key_hash text,
  ADD COLUMN previous_secret_key_until timestamptz;
CREATE UNIQUE INDEX sites_secret_key_hash ON sites (secret_key_hash);
CREATE UNIQUE INDEX sites_previous_secret_key_hash ON sites (previous_secret_key_hash);

-- Orders made by the hosted checkout (a browser form posted to the checkout host) or its embedded form,
-- whose browser goes back to backUrl with the encrypted result; and card-save checkouts, whose small
-- authorization is voided as soon as it is approved.
ALTER TABLE payments_orders
  ADD COLUMN checkout text CHECK (checkout IN ('hosted', 'embedded')),
  ADD COLUMN card_verification boolean NOT NULL DEFAULT false;
