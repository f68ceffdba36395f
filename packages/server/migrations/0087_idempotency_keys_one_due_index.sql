-- A key's row with one index for both sweeps, and its scope and key as the rest of their digest (issue 54;
-- docs/benchmarks.md, "Half the WAL per write, the fifth cuts").
--
-- Two indexes were written with every keyed write: the replay window's end (`idempotency_keys_answered`,
-- for the sweep that drops answers) and the retention's end (`idempotency_keys_retention`, for the sweep
-- that deletes tombstones). A row waits for one sweep at a time, so one column says when the next one is
-- due: `due_at` is the replay window's end while the row holds its answer, and the sweep that drops the
-- answer moves it to the retention's end. Both sweeps then read the low end of one index and find only rows
-- due for them or the other (idempotency-store.ts, purgeExpired).
--
-- The scope and the key were kept in clear beside their digest so that a lookup could compare them; the
-- other 16 bytes of the same SHA-256 (`key_check`) compare as well: two keys would have to share a whole
-- SHA-256 to answer for each other. (To find a key's row by hand: docs/operations.md, Idempotency keys.)
-- On a large table, run the ADD COLUMN and the UPDATE in batches and build idempotency_keys_due
-- CONCURRENTLY first, as for 0084 (docs/operations.md, Upgrading a large database).
ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS key_check bytea,
  ADD COLUMN IF NOT EXISTS due_at timestamptz;
UPDATE idempotency_keys
  SET key_check = substr(sha256(convert_to(scope || E'\n' || key, 'UTF8')), 17, 16),
    due_at = CASE WHEN response_body IS NULL AND response_body_enc IS NULL THEN retain_until ELSE expires_at END
  WHERE key_check IS NULL;
CREATE INDEX IF NOT EXISTS idempotency_keys_due ON idempotency_keys (due_at);
ALTER TABLE idempotency_keys
  ALTER COLUMN key_check SET NOT NULL,
  ALTER COLUMN due_at SET NOT NULL,
  DROP COLUMN scope,
  DROP COLUMN key,
  DROP COLUMN expires_at,
  DROP COLUMN retain_until;
