-- What xMoney's transaction view answers of the card beside its brand and masked number: the holder's
-- name and the expiry (MM/YY). Neither is the card number; both are kept with the masked number only.
ALTER TABLE payments_transactions ADD COLUMN card_holder_name text;
ALTER TABLE payments_transactions ADD COLUMN card_expiry text;
