-- The events' creation-time index dropped (issue 54; docs/benchmarks.md, "Half the WAL per write, the fifth
-- cuts"): `events_created (created_at, id)` logged an entry with every event, for the event lists' time
-- windows. An event's id starts with the time it was made, to the millisecond, and since this version its
-- `created_at` is that very time (outbox.ts), so a window is a range of ids: the primary key serves it, and
-- a tenant's `(hash, id)` index within a tenant (events-service.ts). Nothing else reads events by time.
DROP INDEX IF EXISTS events_created;
