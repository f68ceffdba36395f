-- A case's parties by its subject (docs/compliance.md, goAML): the goAML export names everyone screened
-- under the case's subject; with a million parties screened (the re-screen's scale) that read is this
-- index's, not a scan of them all. Parties are written as names are given, never on a payment's path.
CREATE INDEX compliance_parties_subject ON compliance_parties (subject) WHERE retired_at IS NULL;
