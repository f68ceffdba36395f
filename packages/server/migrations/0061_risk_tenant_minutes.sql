-- A tenant's velocity by whole minutes (docs/risk.md, Velocity: the tenant's windows). A tenant's count over
-- 10 minutes, an hour, a day or 30 days is the sum of these rows, never a scan of its signals: a busy tenant
-- has hundreds of thousands of signals in a day. Rows are rolled up from risk_signals once per minute and
-- tenant by whichever process first needs the minute (never by the write path: no row that every payment
-- of a tenant updates); the frontier says up to where a tenant's point is rolled up.
CREATE TABLE risk_signal_minutes (
  tenant text NOT NULL,
  decision_point text NOT NULL,
  minute timestamptz NOT NULL,
  currency text NOT NULL,
  signals bigint NOT NULL,
  amount numeric NOT NULL,
  declines bigint NOT NULL,
  PRIMARY KEY (tenant, decision_point, minute, currency)
);
-- Retention deletes by age (the rows arrive in time order)
CREATE INDEX risk_signal_minutes_minute ON risk_signal_minutes USING brin (minute);

CREATE TABLE risk_signal_minutes_frontier (
  tenant text NOT NULL,
  decision_point text NOT NULL,
  -- Every signal before this minute is in risk_signal_minutes
  through timestamptz NOT NULL,
  PRIMARY KEY (tenant, decision_point)
);
