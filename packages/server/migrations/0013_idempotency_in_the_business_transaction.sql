-- Idempotency keys are written in the same transaction as the request's effect, with its answer, so a
-- row exists only for a request that finished: there is no "in progress" status any more (the live
-- request holds a transaction-scoped advisory lock instead, which a dead process cannot keep).
-- The stored answer is encrypted (it can hold credentials shown once) and purged when the replay
-- window ends; the row itself stays as a tombstone until retain_until, so a late retry is refused
-- instead of running a second time.
DELETE FROM idempotency_keys WHERE status = 'in_progress';
ALTER TABLE idempotency_keys DROP COLUMN status;
ALTER TABLE idempotency_keys ADD COLUMN response_body_enc text;
UPDATE idempotency_keys SET response_body = NULL;
ALTER TABLE idempotency_keys DROP COLUMN response_body;
ALTER TABLE idempotency_keys ALTER COLUMN response_status SET NOT NULL;
ALTER TABLE idempotency_keys ALTER COLUMN response_content_type SET NOT NULL;
ALTER TABLE idempotency_keys ADD COLUMN retain_until timestamptz;
UPDATE idempotency_keys SET retain_until = expires_at + interval '29 days';
ALTER TABLE idempotency_keys ALTER COLUMN retain_until SET NOT NULL;
CREATE INDEX idempotency_keys_retention ON idempotency_keys (retain_until);
CREATE INDEX idempotency_keys_purgeable ON idempotency_keys (expires_at) WHERE response_body_enc IS NOT NULL;
DROP INDEX idempotency_keys_expiry;
