-- The compliance role (docs/console.md, Roles; docs/compliance.md, Four eyes): an operator's person who
-- works compliance cases and reviews onboarding applications. It is an operator's role — compliance is
-- the operator's duty and a tenant never sees its own cases (tipping off).
ALTER TABLE console_users
  DROP CONSTRAINT console_users_access,
  DROP CONSTRAINT console_users_access_scope;
ALTER TABLE console_users
  ADD CONSTRAINT console_users_access CHECK (
    access IN ('operator', 'operator-viewer', 'compliance', 'viewer', 'developer', 'finance', 'admin')
  ),
  ADD CONSTRAINT console_users_access_scope CHECK (
    (role = 'operator') = (access IN ('operator', 'operator-viewer', 'compliance'))
  );

-- Four eyes on a case's decision (TESSERA_COMPLIANCE_FOUR_EYES): the first person's decision waits here,
-- proposed, until a second person makes the same one; only then is the case decided.
ALTER TABLE compliance_cases
  ADD COLUMN proposed_decision text CHECK (proposed_decision IN ('cleared', 'confirmed')),
  ADD COLUMN proposed_reason text,
  ADD COLUMN proposed_by text,
  ADD COLUMN proposed_at timestamptz,
  ADD CONSTRAINT compliance_cases_proposal CHECK (
    (proposed_decision IS NULL) = (proposed_by IS NULL)
    AND (proposed_decision IS NULL) = (proposed_reason IS NULL)
    AND (proposed_decision IS NULL) = (proposed_at IS NULL)
  );

-- The console's Screening and Monitoring pages list the sanctions matches and the scenarios' alerts apart
CREATE INDEX compliance_alerts_matches ON compliance_alerts (id) WHERE kind = 'sanctions_match';
CREATE INDEX compliance_alerts_scenarios ON compliance_alerts (id) WHERE kind <> 'sanctions_match';
