-- A tenant's events by a hash of the tenant's id and the event's id (issue 54; docs/benchmarks.md, "Half the
-- WAL per write, the fifth cuts"). `events_tenant_created` held the API's name, the tenant's id and the
-- creation time beside the event's id in every entry, written with every event; the reads it served list a
-- tenant's events newest first by id, which it could not give in that order. `(hashtextextended(tenant_id,
-- 0), id)` is a narrower entry that gives exactly that order; a time window's lower end is an id's
-- (events-service.ts), and every read names the hash and the id itself (platform/db/owner-hash.ts).
-- (On a large table, build it first with CREATE INDEX CONCURRENTLY; the migration then only drops the old one.)
CREATE INDEX IF NOT EXISTS events_tenant_hash ON events (hashtextextended(tenant_id, 0), id);
DROP INDEX IF EXISTS events_tenant_created;
