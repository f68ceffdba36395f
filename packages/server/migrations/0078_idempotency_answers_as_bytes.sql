-- A keyed write's stored answer, as bytes: a first byte that says how it is kept (in clear, sealed, or
-- deflated and sealed), then the answer; sealed, the nonce, the ciphertext and the tag as they are. The text
-- column held the same in base64 ("v1:<nonce>:<ciphertext+tag>"), a third more bytes on a row written with
-- every keyed write (docs/benchmarks.md, issue 54). Answers stored before this stay readable in
-- response_body_enc until their replay window (24 hours) passes and the purge empties them; a later
-- migration can drop that column.
-- (On a large existing database, add the column and build the index CONCURRENTLY before upgrading:
-- docs/operations.md, Upgrading a large database.)
ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS response_body bytea;
CREATE INDEX IF NOT EXISTS idempotency_keys_answered ON idempotency_keys (expires_at)
  WHERE response_body IS NOT NULL OR response_body_enc IS NOT NULL;
DROP INDEX idempotency_keys_purgeable;
