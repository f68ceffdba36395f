-- The audit trail (docs/operations.md, Audit trail): every action a person takes through the admin API or
-- the console — signing in (or failing to), every write — one record, written in the same transaction as
-- the action (a refused action's record commits with its refusal). Records are numbered without gaps and
-- hash-chained: each holds the hash of the one before, so an edited or deleted record breaks the chain
-- (`tessera audit verify`). Rows are never updated or deleted: a trigger refuses it.
CREATE TABLE audit_events (
  seq bigint PRIMARY KEY,
  at timestamptz NOT NULL,
  actor_kind text NOT NULL,
  actor text NOT NULL,
  source text,
  action text NOT NULL,
  object_id text,
  tenant_kind text,
  tenant_id text,
  detail jsonb NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('succeeded', 'refused', 'failed')),
  status integer,
  request_id text,
  prev_hash text NOT NULL,
  hash text NOT NULL
);
CREATE INDEX audit_events_actor ON audit_events (actor, seq);
CREATE INDEX audit_events_tenant ON audit_events (tenant_kind, tenant_id, seq) WHERE tenant_id IS NOT NULL;
CREATE INDEX audit_events_object ON audit_events (object_id, seq) WHERE object_id IS NOT NULL;
CREATE INDEX audit_events_action ON audit_events (action, seq);

CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_events is append-only';
END;
$$;
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_events
  FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only();
