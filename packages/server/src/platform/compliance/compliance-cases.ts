// Alerts and the cases a compliance officer works (docs/compliance.md, Alerts and cases). A screening's
// match is an alert; the alerts about one subject (a cardholder, a tenant) gather in its open case, and
// the case holds the subject from the moment it opens (compliance-holds.ts): an asset freeze does not
// wait for a person. A person decides: `cleared` (a false positive: the holds released; the same match is
// not raised again until the person or the list entry changes — the alert is unique per party content
// and entry version) or `confirmed` (the holds stay, released only by a later `cleared`). Every step is in
// the audit trail through the admin routes. A monitoring scenario's alert (raiseScenario) opens or joins
// the case the same way but holds nothing until the case is confirmed: its false positives are many.
import type { Clock } from '../clock/clock.ts';
import type { Executor, Tx } from '../db/database.ts';
import type { ComplianceCaseStatus } from '../db/schema.ts';
import { DomainError, notFound } from '../errors/domain-error.ts';
import type { ComplianceHolds } from './compliance-holds.ts';
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

export type CaseDecision = Exclude<ComplianceCaseStatus, 'open'>;

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
}

export interface Alert {
  id: string;
  caseId: string;
  partyId: string | null;
  kind: string;
  entryId: string | null;
  score: number;
  evidence: Record<string, unknown>;
  createdAt: Date;
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
] as const;

export class ComplianceCases {
  constructor(private readonly deps: { clock: Clock; holds: ComplianceHolds }) {}

  /**
   * The party's matches as alerts in its subject's open case (opened, and the subject held, when there was
   * none); a match alerted before for this content of the party and this version of the entry is not
   * raised again. Answers how many alerts are new.
   */
  async raise(tx: Tx, party: AlertedParty, matches: readonly ScreeningMatch[]): Promise<number> {
    if (matches.length === 0) return 0;
    const known = new Set(
      (
        await tx
          .selectFrom('compliance_alerts')
          .select('entry_id')
          .where('party_id', '=', party.id)
          .where('party_sha256', '=', party.contentSha256)
          .where(
            'entry_id',
            'in',
            matches.map((m) => m.entry.id),
          )
          .execute()
      ).map((r) => r.entry_id),
    );
    const fresh = matches.filter((m) => !known.has(m.entry.id));
    if (fresh.length === 0) return 0;
    const caseId = await this.openCase(tx, party);
    // A sanctions match holds at once: an asset freeze does not wait for a person to look
    await this.hold(tx, caseId, party.subject);
    const now = this.deps.clock.now();
    const inserted = await tx
      .insertInto('compliance_alerts')
      .values(
        fresh.map((m) => ({
          case_id: caseId,
          tenant: party.tenant,
          party_id: party.id,
          party_sha256: party.contentSha256,
          kind: 'sanctions_match',
          entry_id: m.entry.id,
          score: m.score.toFixed(3),
          evidence: JSON.stringify(evidenceOf(party, m)),
          created_at: now,
        })),
      )
      .onConflict((oc) => oc.columns(['party_id', 'party_sha256', 'entry_id']).doNothing())
      .returning('id')
      .execute();
    return inserted.length;
  }

  /**
   * A monitoring scenario met (aml-scenarios.ts): an alert in the subject's open case, raised once per
   * key. It holds nothing until a person confirms the case. Answers whether it is new.
   */
  async raiseScenario(
    tx: Tx,
    alert: {
      subject: string;
      tenant: string;
      scenario: string;
      key: string;
      evidence: Record<string, unknown>;
    },
  ): Promise<boolean> {
    const seen = await tx
      .selectFrom('compliance_alerts')
      .select('id')
      .where('scenario_key', '=', alert.key)
      .executeTakeFirst();
    if (seen) return false;
    const caseId = await this.openCase(tx, alert);
    const inserted = await tx
      .insertInto('compliance_alerts')
      .values({
        case_id: caseId,
        tenant: alert.tenant,
        kind: `scenario:${alert.scenario}`,
        scenario_key: alert.key,
        score: '1',
        evidence: JSON.stringify({ scenario: alert.scenario, ...alert.evidence }),
        created_at: this.deps.clock.now(),
      })
      .onConflict((oc) => oc.column('scenario_key').doNothing())
      .returning('id')
      .executeTakeFirst();
    return inserted !== undefined;
  }

  /** The subject's open case; a new one when it has none */
  private async openCase(tx: Tx, subject: { subject: string; tenant: string }): Promise<string> {
    const opened = await tx
      .insertInto('compliance_cases')
      .values({
        subject: subject.subject,
        tenant: subject.tenant,
        status: 'open',
        opened_at: this.deps.clock.now(),
      })
      .onConflict((oc) => oc.column('subject').where('status', '=', 'open').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (opened) return opened.id;
    const open = await tx
      .selectFrom('compliance_cases')
      .select('id')
      .where('subject', '=', subject.subject)
      .where('status', '=', 'open')
      .executeTakeFirstOrThrow();
    return open.id;
  }

  /** The case holds its subject, unless it does already */
  private async hold(tx: Tx, caseId: string, subject: string): Promise<void> {
    const holding = await tx
      .selectFrom('compliance_holds')
      .select('id')
      .where('case_id', '=', caseId)
      .where('object_kind', '=', 'subject')
      .where('released_at', 'is', null)
      .executeTakeFirst();
    if (!holding) await this.deps.holds.place(tx, caseId, subject);
  }

  /** Cases, newest first; a status and a tenant narrow them */
  async list(
    db: Executor,
    filter: { status?: ComplianceCaseStatus; tenant?: string; before?: string; limit: number },
  ): Promise<CaseSummary[]> {
    let query = casesWithAlertCounts(db).orderBy('c.id', 'desc').limit(filter.limit);
    if (filter.status) query = query.where('c.status', '=', filter.status);
    if (filter.tenant) query = query.where('c.tenant', '=', filter.tenant);
    if (filter.before) query = query.where('c.id', '<', filter.before);
    return (await query.execute()).map(caseOf);
  }

  /** The case with its alerts, notes and holds: its timeline is these in time order */
  async get(db: Executor, caseId: string) {
    if (!isCaseId(caseId)) throw notFound('case');
    const row = await casesWithAlertCounts(db).where('c.id', '=', caseId).executeTakeFirst();
    if (!row) throw notFound('case');
    // One after another: the reader may be a request's one connection
    const alerts = await this.alerts(db, { caseId, limit: 1000 });
    const notes = await db
      .selectFrom('compliance_case_notes')
      .select(['id', 'author', 'body', 'created_at'])
      .where('case_id', '=', caseId)
      .orderBy('id')
      .execute();
    const holds = await this.deps.holds.of(db, caseId);
    return { case: caseOf(row), alerts, notes, holds };
  }

  /** Alerts, newest first (of one case: in the order raised) */
  async alerts(
    db: Executor,
    filter: { caseId?: string; tenant?: string; before?: string; limit: number },
  ): Promise<Alert[]> {
    let query = db
      .selectFrom('compliance_alerts as a')
      .select([
        'a.id',
        'a.case_id',
        'a.party_id',
        'a.kind',
        'a.entry_id',
        'a.score',
        'a.evidence',
        'a.created_at',
      ])
      .limit(filter.limit);
    if (filter.caseId) query = query.where('a.case_id', '=', filter.caseId).orderBy('a.id', 'asc');
    else query = query.orderBy('a.id', 'desc');
    if (filter.tenant) query = query.where('a.tenant', '=', filter.tenant);
    if (filter.before) query = query.where('a.id', '<', filter.before);
    return (await query.execute()).map((r) => ({
      id: r.id,
      caseId: r.case_id,
      partyId: r.party_id,
      kind: r.kind,
      entryId: r.entry_id,
      score: Number(r.score),
      evidence: r.evidence,
      createdAt: r.created_at,
    }));
  }

  async addNote(tx: Tx, caseId: string, author: string, body: string) {
    await this.lock(tx, caseId);
    return tx
      .insertInto('compliance_case_notes')
      .values({ case_id: caseId, author, body, created_at: this.deps.clock.now() })
      .returning(['id', 'author', 'body', 'created_at'])
      .executeTakeFirstOrThrow();
  }

  async assign(tx: Tx, caseId: string, assignee: string | null): Promise<void> {
    const found = await this.lock(tx, caseId);
    if (found.status !== 'open') throw decided(found.status);
    await tx.updateTable('compliance_cases').set({ assignee }).where('id', '=', caseId).execute();
  }

  /**
   * A person's decision: an open case cleared or confirmed; a confirmed one cleared later (delisted, or
   * found wrong). Clearing releases what the case holds, in this transaction.
   */
  async decide(
    tx: Tx,
    caseId: string,
    decision: { decision: CaseDecision; reason: string; by: string },
  ): Promise<{ released: number }> {
    const found = await this.lock(tx, caseId);
    const allowed =
      found.status === 'open' || (found.status === 'confirmed' && decision.decision === 'cleared');
    if (!allowed) throw decided(found.status);
    await tx
      .updateTable('compliance_cases')
      .set({
        status: decision.decision,
        decided_at: this.deps.clock.now(),
        decided_by: decision.by,
        decision_reason: decision.reason,
      })
      .where('id', '=', caseId)
      .execute();
    // Confirmed, the case holds its subject (a scenario's case held nothing until now)
    if (decision.decision === 'confirmed') await this.hold(tx, caseId, found.subject);
    const released = decision.decision === 'cleared' ? await this.deps.holds.release(tx, caseId) : 0;
    return { released };
  }

  private async lock(tx: Tx, caseId: string) {
    if (!isCaseId(caseId)) throw notFound('case');
    const found = await tx
      .selectFrom('compliance_cases')
      .select(['id', 'status', 'subject'])
      .where('id', '=', caseId)
      .forUpdate()
      .executeTakeFirst();
    if (!found) throw notFound('case');
    return found;
  }
}

/** Cases with how many alerts each has */
function casesWithAlertCounts(db: Executor) {
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

/** A case's id is a bigint; anything else names no case */
const isCaseId = (id: string) => /^[1-9]\d{0,17}$/.test(id);

const decided = (status: string) =>
  new DomainError('invalid_state', `the case is ${status}: it cannot be decided that way`, {
    details: { status },
  });

function evidenceOf(party: AlertedParty, m: ScreeningMatch): Record<string, unknown> {
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

function caseOf(row: {
  id: string;
  subject: string;
  tenant: string;
  status: ComplianceCaseStatus;
  assignee: string | null;
  opened_at: Date;
  decided_at: Date | null;
  decided_by: string | null;
  decision_reason: string | null;
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
  };
}
