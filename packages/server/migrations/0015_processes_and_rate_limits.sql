-- Several Tessera processes on one database.

-- Every live process, with a heartbeat; what it has seen of the shared sandbox clock, so an advance
-- answers only once every live process reads the new time.
CREATE TABLE tessera_processes (
  id text PRIMARY KEY,
  pid integer NOT NULL,
  host text NOT NULL,
  started_at timestamptz NOT NULL,
  seen_at timestamptz NOT NULL,
  clock_offset_ms bigint NOT NULL DEFAULT 0
);

-- Per-credential rate limits shared by every process: each process leases a slice of a window's quota
-- at a time, so the database sees one write per slice, not one per request.
CREATE TABLE rate_limit_windows (
  key text NOT NULL,
  window_start timestamptz NOT NULL,
  granted integer NOT NULL,
  PRIMARY KEY (key, window_start)
);
CREATE INDEX rate_limit_windows_start ON rate_limit_windows (window_start);
