-- Screening of everyone on the other side, and the cases a compliance officer works (docs/compliance.md).
--
-- A party is a name the platform screens: a cardholder from their KYC, a payout bank account's holder.
-- It is written when the name is given or changed and screened in that same transaction; a list import
-- screens every party again against the entries it added or changed, in bounded batches that resume
-- from their cursor after a crash (compliance_rescreens).
CREATE TABLE compliance_parties (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- cardholder | bank_account_holder
  kind text NOT NULL,
  -- What the party is, once: `cardholder:<customer id>`, `bank_account_holder:<payout owner>`
  reference text NOT NULL UNIQUE,
  -- Whose money a confirmed match holds: `customer:<id>`, `site:<id>`, `store:<id>`
  subject text NOT NULL,
  -- The tenant it belongs to, as risk scopes are written: `partner:<id>`, `merchant:<id>`, `store:<id>`
  tenant text NOT NULL,
  name text NOT NULL,
  date_of_birth text,
  country text,
  -- Of the name, date of birth and country: a cleared match is raised again only when this changes
  content_sha256 text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

-- A case gathers the alerts about one subject while it is open; a decided case is closed for good and
-- the next alert about the subject opens a new one.
CREATE TABLE compliance_cases (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  subject text NOT NULL,
  tenant text NOT NULL,
  status text NOT NULL CHECK (status IN ('open', 'cleared', 'confirmed')),
  assignee text,
  opened_at timestamptz NOT NULL,
  decided_at timestamptz,
  decided_by text,
  decision_reason text
);
CREATE UNIQUE INDEX compliance_cases_open_subject ON compliance_cases (subject) WHERE status = 'open';
CREATE INDEX compliance_cases_status ON compliance_cases (status, id);
CREATE INDEX compliance_cases_tenant ON compliance_cases (tenant, id);

-- An alert: a party matching one version of one list entry, or a monitoring scenario met. A match is
-- unique per party content and entry version, so a match once cleared is not raised again until the
-- person or the list entry changes; a scenario is unique by its key (what it saw, e.g. its first topup).
CREATE TABLE compliance_alerts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  case_id bigint NOT NULL REFERENCES compliance_cases (id),
  -- The case's tenant, kept on the alert so a tenant's alerts are one index read
  tenant text NOT NULL,
  -- sanctions_match | scenario:<name>
  kind text NOT NULL,
  party_id bigint REFERENCES compliance_parties (id),
  party_sha256 text,
  entry_id bigint REFERENCES sanctions_entries (id),
  scenario_key text UNIQUE,
  score numeric NOT NULL,
  -- The party as screened and the entry's names, dates and countries, side by side; or what the
  -- scenario saw (its parameters and the objects that met it)
  evidence jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (party_id, party_sha256, entry_id),
  CHECK ((kind = 'sanctions_match') = (entry_id IS NOT NULL AND party_id IS NOT NULL AND party_sha256 IS NOT NULL)),
  CHECK ((kind LIKE 'scenario:%') = (scenario_key IS NOT NULL))
);
CREATE INDEX compliance_alerts_case ON compliance_alerts (case_id, id);
CREATE INDEX compliance_alerts_recent ON compliance_alerts (id DESC);
CREATE INDEX compliance_alerts_tenant ON compliance_alerts (tenant, id);

CREATE TABLE compliance_case_notes (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  case_id bigint NOT NULL REFERENCES compliance_cases (id),
  author text NOT NULL,
  body text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX compliance_case_notes_case ON compliance_case_notes (case_id, id);

-- What a case holds: the subject itself (no new card, no payout leaves), and each object stopped with the
-- status it had, so clearing the case gives back exactly what it took.
CREATE TABLE compliance_holds (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  case_id bigint NOT NULL REFERENCES compliance_cases (id),
  subject text NOT NULL,
  -- subject | card | payout
  object_kind text NOT NULL,
  object_id text NOT NULL,
  previous_status text,
  placed_at timestamptz NOT NULL,
  released_at timestamptz
);
CREATE INDEX compliance_holds_case ON compliance_holds (case_id, id);
CREATE INDEX compliance_holds_subject_held ON compliance_holds (subject) WHERE released_at IS NULL;

-- The screening of every party again after an import, against the entries it opened. `cursor` is the
-- last party id screened, committed with that batch's alerts.
CREATE TABLE compliance_rescreens (
  import_id bigint PRIMARY KEY REFERENCES sanctions_imports (id),
  cursor bigint NOT NULL DEFAULT 0,
  screened bigint NOT NULL DEFAULT 0,
  alerts integer NOT NULL DEFAULT 0,
  started_at timestamptz NOT NULL,
  finished_at timestamptz
);
CREATE INDEX compliance_rescreens_unfinished ON compliance_rescreens (import_id) WHERE finished_at IS NULL;
