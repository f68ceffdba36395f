-- Hosted-page and 3D Secure tokens are no longer stored: a token is now its object's id and an HMAC of
-- it (platform/crypto/capability-tokens.ts). Tokens issued before this version stop working.
ALTER TABLE payments_transactions DROP COLUMN return_token;
ALTER TABLE issuing_topups DROP COLUMN payment_token;
-- The requester's return URL carries its own token: the card network keeps it encrypted.
ALTER TABLE card_network_challenges ADD COLUMN return_url_enc text;
ALTER TABLE card_network_challenges ALTER COLUMN return_url DROP NOT NULL;
UPDATE card_network_challenges SET return_url = NULL;
