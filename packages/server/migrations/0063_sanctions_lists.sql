-- Sanctions lists (docs/compliance.md): each official file (the EU's, the UN's, OFAC's) imported once by
-- its content hash, in one transaction, its entries versioned — a changed entry is a new version, a
-- removed one is closed by the import that no longer has it — so a screening's evidence names the exact
-- version it matched, and what a list said on any day can be read back.
CREATE TABLE sanctions_imports (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source text NOT NULL CHECK (source IN ('eu', 'un', 'ofac')),
  sha256 text NOT NULL,
  -- The file's own publication date, when it says
  generated_at timestamptz,
  imported_at timestamptz NOT NULL,
  -- Who imported it: the operator's admin token, a console user, the CLI
  imported_by text NOT NULL,
  entries integer NOT NULL,
  added integer NOT NULL,
  changed integer NOT NULL,
  removed integer NOT NULL,
  UNIQUE (source, sha256)
);

CREATE TABLE sanctions_entries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source text NOT NULL,
  -- The list's own id: the EU's logicalId, the UN's DATAID, OFAC's uid
  source_id text NOT NULL,
  version integer NOT NULL,
  -- The entry as read (platform/compliance/sanctions-entry.ts, ListEntry)
  content jsonb NOT NULL,
  content_sha256 text NOT NULL,
  added_by bigint NOT NULL REFERENCES sanctions_imports (id),
  -- The import that changed or removed this version; null while it is the list's current one
  closed_by bigint REFERENCES sanctions_imports (id),
  UNIQUE (source, source_id, version)
);
CREATE UNIQUE INDEX sanctions_entries_current ON sanctions_entries (source, source_id) WHERE closed_by IS NULL;

-- Every process holds the lists' index in memory; an import is heard everywhere as tenant changes are
CREATE TRIGGER sanctions_imports_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON sanctions_imports
  FOR EACH STATEMENT EXECUTE FUNCTION notify_tenant_change();
