// Alerts and the cases a compliance officer works (docs/compliance.md, Alerts and cases). A screening's
// match is an alert; the alerts about one subject (a cardholder, a tenant) gather in its open case, and
// the case holds the subject from the moment it opens (compliance-holds.ts): an asset freeze does not
// wait for a person. A person decides: `cleared` (a false positive: the holds released; the same match is
// not raised again until the person or the list entry changes — the alert is unique per party content
// and entry version) or `confirmed` (the holds stay, released only by a later `cleared`). Every step is in
// the audit trail through the admin routes. A monitoring scenario's alert (raiseScenario) opens or joins
// the case the same way but holds nothing until the case is confirmed: its false positives are many.
import { sql } from 'kysely';
import type { Clock } from '../clock/clock.ts';
import type { Executor, Tx } from '../db/database.ts';
import type { ComplianceCaseStatus } from '../db/schema.ts';
import { DomainError, notFound } from '../errors/domain-error.ts';
import {
  type AlertedParty,
  type CaseSummary,
  caseOf,
  casesWithAlertCounts,
  evidenceOf,
} from './case-rows.ts';
import type { ComplianceHolds } from './compliance-holds.ts';
import type { ScreeningMatch } from './screening-index.ts';

export type { AlertedParty, CaseSummary };

export type CaseDecision = Exclude<ComplianceCaseStatus, 'open'>;

/** Which decisions need a second person (TESSERA_COMPLIANCE_FOUR_EYES): none, clearing, or both */
export type FourEyesPolicy = 'off' | 'cleared' | 'all';

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

export class ComplianceCases {
  constructor(private readonly deps: { clock: Clock; holds: ComplianceHolds; fourEyes: FourEyesPolicy }) {}

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
   * key. It holds nothing until a person confirms the case, unless `hold` says the scenario is itself a
   * list hit (money from a listed address), which holds at once as a sanctions match does. Answers
   * whether it is new.
   */
  async raiseScenario(
    tx: Tx,
    alert: {
      subject: string;
      tenant: string;
      scenario: string;
      key: string;
      evidence: Record<string, unknown>;
      hold?: boolean;
    },
  ): Promise<boolean> {
    const seen = await tx
      .selectFrom('compliance_alerts')
      .select('id')
      .where('scenario_key', '=', alert.key)
      .executeTakeFirst();
    if (seen) return false;
    const caseId = await this.openCase(tx, alert);
    if (alert.hold) await this.hold(tx, caseId, alert.subject);
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
      .select(['id', 'proposed_decision'])
      .where('subject', '=', subject.subject)
      .where('status', '=', 'open')
      .executeTakeFirstOrThrow();
    // New evidence: a decision proposed without it waits no longer for a second person
    if (open.proposed_decision) {
      await tx
        .updateTable('compliance_cases')
        .set({ proposed_decision: null, proposed_reason: null, proposed_by: null, proposed_at: null })
        .where('id', '=', open.id)
        .execute();
    }
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
    filter: {
      caseId?: string;
      tenant?: string;
      /** Sanctions matches only, or monitoring scenarios' alerts only (each a partial index) */
      kind?: 'matches' | 'scenarios';
      before?: string;
      limit: number;
    },
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
    // A literal, so the plan of any execution can use the kind's partial index (migration 0067)
    if (filter.kind)
      query = query.where('a.kind', filter.kind === 'matches' ? '=' : '<>', sql.lit('sanctions_match'));
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
   * found wrong). Clearing releases what the case holds, in this transaction. Under four eyes
   * (TESSERA_COMPLIANCE_FOUR_EYES) a decision the policy names is first proposed: it waits on the case,
   * with a note saying so, until someone else makes the same decision; another decision replaces it, and
   * the proposer never seconds their own.
   */
  async decide(
    tx: Tx,
    caseId: string,
    decision: { decision: CaseDecision; reason: string; by: string },
  ): Promise<{ released: number; proposed: boolean }> {
    const found = await this.lock(tx, caseId);
    const allowed =
      found.status === 'open' || (found.status === 'confirmed' && decision.decision === 'cleared');
    if (!allowed) throw decided(found.status);
    const now = this.deps.clock.now();
    const policy = this.deps.fourEyes;
    if (policy === 'all' || (policy === 'cleared' && decision.decision === 'cleared')) {
      const same = found.proposed_decision === decision.decision;
      if (same && found.proposed_by === decision.by) {
        throw new DomainError(
          'invalid_state',
          'four eyes: the decision you proposed waits for another person to make it',
          { details: { proposedBy: found.proposed_by } },
        );
      }
      if (!same) {
        await tx
          .updateTable('compliance_cases')
          .set({
            proposed_decision: decision.decision,
            proposed_reason: decision.reason,
            proposed_by: decision.by,
            proposed_at: now,
          })
          .where('id', '=', caseId)
          .execute();
        await tx
          .insertInto('compliance_case_notes')
          .values({
            case_id: caseId,
            author: decision.by,
            body: `Proposed ${decision.decision} (a second person decides): ${decision.reason}`,
            created_at: now,
          })
          .execute();
        return { released: 0, proposed: true };
      }
    }
    await tx
      .updateTable('compliance_cases')
      .set({
        status: decision.decision,
        decided_at: now,
        decided_by: decision.by,
        decision_reason: decision.reason,
        proposed_decision: null,
        proposed_reason: null,
        proposed_by: null,
        proposed_at: null,
      })
      .where('id', '=', caseId)
      .execute();
    // Confirmed, the case holds its subject (a scenario's case held nothing until now)
    if (decision.decision === 'confirmed') await this.hold(tx, caseId, found.subject);
    const released = decision.decision === 'cleared' ? await this.deps.holds.release(tx, caseId) : 0;
    return { released, proposed: false };
  }

  private async lock(tx: Tx, caseId: string) {
    if (!isCaseId(caseId)) throw notFound('case');
    const found = await tx
      .selectFrom('compliance_cases')
      .select(['id', 'status', 'subject', 'proposed_decision', 'proposed_by'])
      .where('id', '=', caseId)
      .forUpdate()
      .executeTakeFirst();
    if (!found) throw notFound('case');
    return found;
  }
}

/** A case's id is a bigint; anything else names no case */
const isCaseId = (id: string) => /^[1-9]\d{0,17}$/.test(id);

const decided = (status: string) =>
  new DomainError('invalid_state', `the case is ${status}: it cannot be decided that way`, {
    details: { status },
  });
