-- An attempt cut short because Tessera shut down is recorded but does not count: the delivery is due
-- again at once and the next attempt takes the same number.
ALTER TABLE webhook_attempts ADD COLUMN abandoned boolean NOT NULL DEFAULT false;
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_delivery_id_attempt_number_key;
CREATE UNIQUE INDEX webhook_attempts_number ON webhook_attempts (delivery_id, attempt_number) WHERE NOT abandoned;
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id);
