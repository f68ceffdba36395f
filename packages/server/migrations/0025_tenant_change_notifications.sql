-- Every process keeps verified credentials and tenant settings in memory (docs/architecture.md,
-- Credential cache). Postgres itself announces every change to the tables they come from: a statement
-- trigger NOTIFYs tessera_tenants at commit, whoever made the change (the API, the console, the CLI, an
-- operator's psql), so no code path can forget to. The payload is a number from one sequence; each
-- process records the newest it has heard, so a revocation can wait until every live process has.
CREATE SEQUENCE tenant_changes_seq;

CREATE FUNCTION notify_tenant_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('tessera_tenants', nextval('tenant_changes_seq')::text);
  RETURN NULL;
END;
$$;

CREATE TRIGGER merchants_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON merchants
  FOR EACH STATEMENT EXECUTE FUNCTION notify_tenant_change();
CREATE TRIGGER merchant_api_keys_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON merchant_api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION notify_tenant_change();
CREATE TRIGGER sites_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON sites
  FOR EACH STATEMENT EXECUTE FUNCTION notify_tenant_change();
CREATE TRIGGER stores_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON stores
  FOR EACH STATEMENT EXECUTE FUNCTION notify_tenant_change();
CREATE TRIGGER crypto_api_keys_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON crypto_api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION notify_tenant_change();
CREATE TRIGGER partners_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON partners
  FOR EACH STATEMENT EXECUTE FUNCTION notify_tenant_change();

ALTER TABLE tessera_processes ADD COLUMN tenants_version bigint NOT NULL DEFAULT 0;
