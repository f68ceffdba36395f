// How a case and an alert's evidence are read and written (compliance-cases.ts): the case's columns with
// its count of alerts, and a match's evidence — the party as screened beside the list entry.
import type { Executor } from '../db/database.ts';
import type { CaseDecisionName, ComplianceCaseStatus } from '../db/schema.ts';
import { entrySummary, type ScreeningMatch } from './screening-index.ts';

/** A screened party as the alert records it */
export interface AlertedParty {
  id: string;
  kind: string;
  subject: string;
  tenant: string;
  contentSha256: string;
  name: string;
  dateOfBirth: string | null;
  country: string | null;
}

export interface CaseSummary {
  id: string;
  subject: string;
  tenant: string;
  status: ComplianceCaseStatus;
  assignee: string | null;
  openedAt: Date;
  decidedAt: Date | null;
  decidedBy: string | null;
  decisionReason: string | null;
  alerts: number;
  /** A decision waiting for a second person (four eyes) */
  proposal: { decision: CaseDecisionName; reason: string; by: string; at: Date } | null;
}

const CASE_COLUMNS = [
  'c.id',
  'c.subject',
  'c.tenant',
  'c.status',
  'c.assignee',
  'c.opened_at',
  'c.decided_at',
  'c.decided_by',
  'c.decision_reason',
  'c.proposed_decision',
  'c.proposed_reason',
  'c.proposed_by',
  'c.proposed_at',
] as const;

/** Cases with how many alerts each has */
export function casesWithAlertCounts(db: Executor) {
  return db
    .selectFrom('compliance_cases as c')
    .select([
      ...CASE_COLUMNS,
      (eb) =>
        eb
          .selectFrom('compliance_alerts as a')
          .select(eb.fn.countAll<string>().as('n'))
          .whereRef('a.case_id', '=', 'c.id')
          .as('alerts'),
    ]);
}

export function evidenceOf(party: AlertedParty, m: ScreeningMatch): Record<string, unknown> {
  return {
    party: {
      kind: party.kind,
      name: party.name,
      dateOfBirth: party.dateOfBirth,
      country: party.country,
    },
    matchedName: m.matchedName,
    score: Math.round(m.score * 1000) / 1000,
    nameScore: Math.round(m.nameScore * 1000) / 1000,
    entry: entrySummary(m.entry),
  };
}

export function caseOf(row: {
  id: string;
  subject: string;
  tenant: string;
  status: ComplianceCaseStatus;
  assignee: string | null;
  opened_at: Date;
  decided_at: Date | null;
  decided_by: string | null;
  decision_reason: string | null;
  proposed_decision: CaseDecisionName | null;
  proposed_reason: string | null;
  proposed_by: string | null;
  proposed_at: Date | null;
  alerts: string | null;
}): CaseSummary {
  return {
    id: row.id,
    subject: row.subject,
    tenant: row.tenant,
    status: row.status,
    assignee: row.assignee,
    openedAt: row.opened_at,
    decidedAt: row.decided_at,
    decidedBy: row.decided_by,
    decisionReason: row.decision_reason,
    alerts: Number(row.alerts ?? 0),
    proposal:
      row.proposed_decision && row.proposed_by && row.proposed_at
        ? {
            decision: row.proposed_decision,
            reason: row.proposed_reason ?? '',
            by: row.proposed_by,
            at: row.proposed_at,
          }
        : null,
  };
}
