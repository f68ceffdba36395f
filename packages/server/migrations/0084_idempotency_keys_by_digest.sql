-- A key's row found by a 16-byte digest of its scope and key (issue 54; docs/benchmarks.md, "Half the WAL
-- per write, the fourth cuts"): the primary key on (scope, key) held the caller's scope and the client's
-- key as text in every entry, some 90 bytes, where the first 16 bytes of their SHA-256 make a 24-byte
-- index tuple, written with every keyed write. A lookup names the digest and then the scope and the key
-- themselves (idempotency-store.ts), so two keys that shared a digest would still never answer for each
-- other. The request's hash is kept as its 32 bytes instead of 64 hex characters, and the content type
-- most answers have (application/json; charset=utf-8) as NULL.
-- (On a large existing database, add the columns, fill them in batches and build idempotency_keys_digest
-- CONCURRENTLY before upgrading: the statements below then find nothing to do but the swap;
-- docs/operations.md, Upgrading a large database.)
ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS key_digest uuid,
  ADD COLUMN IF NOT EXISTS request_sha256 bytea;
UPDATE idempotency_keys
  SET key_digest = encode(substr(sha256(convert_to(scope || E'\n' || key, 'UTF8')), 1, 16), 'hex')::uuid,
    request_sha256 = decode(request_hash, 'hex')
  WHERE key_digest IS NULL;
CREATE UNIQUE INDEX IF NOT EXISTS idempotency_keys_digest ON idempotency_keys (key_digest);
ALTER TABLE idempotency_keys
  ALTER COLUMN key_digest SET NOT NULL,
  ALTER COLUMN request_sha256 SET NOT NULL,
  ALTER COLUMN response_content_type DROP NOT NULL,
  DROP COLUMN request_hash,
  DROP CONSTRAINT idempotency_keys_pkey,
  ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY USING INDEX idempotency_keys_digest;
