-- One stored card per card and customer: saving the same card again reuses it. The number is matched by
-- a keyed fingerprint (HMAC, never the number); cards saved before this version have none and are
-- left as they are.
ALTER TABLE payments_cards ADD COLUMN pan_fingerprint text;
CREATE UNIQUE INDEX payments_cards_one_per_card ON payments_cards (customer_id, pan_fingerprint)
  WHERE status = 'active' AND pan_fingerprint IS NOT NULL;
