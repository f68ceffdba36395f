-- Risk (docs/risk.md): rules written in CEL, evaluated at each place money moves, with block and allow lists,
-- every evaluation's attributes kept for velocity and backtests, and every matched rule's decision recorded.
-- A scope is text: 'platform', 'merchant:<id>', 'store:<id>' or 'partner:<id>'.

CREATE TABLE risk_rules (
  id text PRIMARY KEY,
  scope text NOT NULL,
  decision_point text NOT NULL,
  name text NOT NULL,
  expression text NOT NULL,
  action text NOT NULL,
  mode text NOT NULL CHECK (mode IN ('active', 'shadow')),
  priority integer NOT NULL,
  -- The velocity features the expression reads (velocity.ip.count_10m, …): only these are counted per write
  velocity_features text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (scope, name)
);
CREATE INDEX risk_rules_point ON risk_rules (decision_point, scope);

CREATE TABLE risk_lists (
  id text PRIMARY KEY,
  scope text NOT NULL,
  name text NOT NULL,
  kind text NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (scope, name)
);

CREATE TABLE risk_list_items (
  list_id text NOT NULL REFERENCES risk_lists (id) ON DELETE CASCADE,
  value text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (list_id, value)
);

-- Rules and lists are cached by every process like tenant settings (migration 0025): a change is heard
-- everywhere within a second, whoever made it.
CREATE TRIGGER risk_rules_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON risk_rules
  FOR EACH STATEMENT EXECUTE FUNCTION notify_tenant_change();
CREATE TRIGGER risk_lists_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON risk_lists
  FOR EACH STATEMENT EXECUTE FUNCTION notify_tenant_change();
CREATE TRIGGER risk_list_items_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON risk_list_items
  FOR EACH STATEMENT EXECUTE FUNCTION notify_tenant_change();

-- One row per evaluation at a decision point, written with the object in the write's own statement,
-- whether or not any rule exists: the keys velocity counts by (typed columns, indexed) and every other
-- attribute as it was (jsonb), so a backtest reads history as it was and velocity as it was then.
CREATE TABLE risk_signals (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  decision_point text NOT NULL,
  -- The tenant the object belongs to ('merchant:<id>', …): velocity and backtests are per tenant
  tenant text NOT NULL,
  object_id text NOT NULL,
  at timestamptz NOT NULL,
  amount numeric NOT NULL,
  currency text NOT NULL,
  ip text,
  email text,
  card_fingerprint text,
  customer_id text,
  -- Refused (by the network, the issuer or a rule): declines per card and per IP
  declined boolean NOT NULL,
  attributes jsonb NOT NULL
);
CREATE INDEX risk_signals_tenant ON risk_signals (tenant, decision_point, at);
CREATE INDEX risk_signals_ip ON risk_signals (tenant, ip, at) WHERE ip IS NOT NULL;
CREATE INDEX risk_signals_email ON risk_signals (tenant, email, at) WHERE email IS NOT NULL;
CREATE INDEX risk_signals_card ON risk_signals (tenant, card_fingerprint, at) WHERE card_fingerprint IS NOT NULL;
CREATE INDEX risk_signals_customer ON risk_signals (tenant, customer_id, at) WHERE customer_id IS NOT NULL;
-- Retention deletes by age; rows arrive in time order, so a BRIN index finds the old ones for almost no WAL
CREATE INDEX risk_signals_at ON risk_signals USING brin (at);

-- A rule that matched (active or shadow), with the values it read: why an object was refused, held or challenged.
CREATE TABLE risk_decisions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant text NOT NULL,
  decision_point text NOT NULL,
  object_id text NOT NULL,
  rule_id text NOT NULL,
  rule_name text NOT NULL,
  action text NOT NULL,
  mode text NOT NULL,
  -- Whether this decision acted (the first active rule by priority that matched)
  acted boolean NOT NULL,
  attributes jsonb NOT NULL,
  at timestamptz NOT NULL
);
CREATE INDEX risk_decisions_object ON risk_decisions (object_id, id);
CREATE INDEX risk_decisions_rule ON risk_decisions (rule_id, id);
CREATE INDEX risk_decisions_tenant ON risk_decisions (tenant, id);
CREATE INDEX risk_decisions_at ON risk_decisions USING brin (at);

-- A charge a rule sent to review: authorized, not captured, until a person approves (captured) or refuses
-- (voided), or it expires and the refusal applies. One per object.
CREATE TABLE risk_reviews (
  id text PRIMARY KEY,
  tenant text NOT NULL,
  decision_point text NOT NULL,
  object_id text NOT NULL UNIQUE,
  rule_id text NOT NULL,
  rule_name text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'approved', 'refused', 'expired')),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  decided_at timestamptz,
  decided_by text
);
-- The queue (a status, by id) per tenant and across tenants, and the expiry sweep
CREATE INDEX risk_reviews_tenant ON risk_reviews (tenant, status, id);
CREATE INDEX risk_reviews_status ON risk_reviews (status, id);
CREATE INDEX risk_reviews_due ON risk_reviews (expires_at) WHERE status = 'pending';
