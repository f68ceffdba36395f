-- The ids an event is about, found from its payload instead of stored beside it (issue 54;
-- docs/benchmarks.md, "Half the WAL per write, the third cuts"). The object_ids column repeated what the
-- payload says (57-97 bytes of an event's row, the ids as text once more), and its GIN index held each id
-- as text: 40-50 bytes an id in every entry the index's pending list logs. Now the rule of migration 0016
-- is a function of the payload (the outbox's objectIdsOf is the same rule, and a test holds them equal),
-- and the index holds an 8-byte hash of each id. A read names the hash to find the candidate events, and
-- keeps those whose ids name the object (platform/events/object-ids.ts).
-- (On a large existing database, create the two functions and build events_object_keys with CREATE INDEX
-- CONCURRENTLY before upgrading: the migration then finds it, and only drops the column and the old index;
-- docs/operations.md, Upgrading a large database.)
-- PL/pgSQL, not SQL: its statement's plan is kept for the session (25 µs a call), where a SQL function's
-- is made again at every call (250 µs).
CREATE OR REPLACE FUNCTION event_object_ids(payload text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  body jsonb := payload::jsonb;
BEGIN
  RETURN ARRAY(
    SELECT f.value #>> '{}'
    FROM (
      SELECT key, value FROM jsonb_each(CASE WHEN jsonb_typeof(body) = 'object' THEN body ELSE '{}' END)
      UNION ALL
      SELECT key, value FROM jsonb_each(CASE WHEN jsonb_typeof(body -> 'data') = 'object' THEN body -> 'data' ELSE '{}' END)
      UNION ALL
      SELECT key, value FROM jsonb_each(CASE WHEN jsonb_typeof(body -> 'resource') = 'object' THEN body -> 'resource' ELSE '{}' END)
    ) f
    WHERE (f.key ~ '(Id|_id)$' OR f.key = 'reference') AND f.key NOT IN ('eventId', 'event_id')
      AND jsonb_typeof(f.value) IN ('string', 'number') AND f.value <> '""');
END
$$;

-- (An id named twice is hashed twice; GIN keeps one entry per distinct key of a row.) Its search path is
-- the migration's, so the index finds event_object_ids wherever it is computed (a restore runs with an
-- empty one).
CREATE OR REPLACE FUNCTION event_object_keys(payload text) RETURNS bigint[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SET search_path FROM CURRENT AS $$
BEGIN
  RETURN ARRAY(SELECT hashtextextended(id, 0) FROM unnest(event_object_ids(payload)) id);
END
$$;

CREATE INDEX IF NOT EXISTS events_object_keys ON events USING gin (event_object_keys(payload));
DROP INDEX events_object_ids;
ALTER TABLE events DROP COLUMN object_ids;
