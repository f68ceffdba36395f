-- Monitoring scenarios judged by a sweep (docs/compliance.md, Monitoring): each goes through time in
-- slices, and keeps here how far it has judged — the slice's alerts and the cursor commit together, so a
-- crash judges the slice again and an alert raised twice is one (its key is unique).
CREATE TABLE compliance_scenario_runs (
  scenario text PRIMARY KEY,
  through timestamptz NOT NULL
);

-- Rapid movement reads the topups completed in its slice
CREATE INDEX issuing_topups_completed ON issuing_topups (completed_at) WHERE status = 'completed';
