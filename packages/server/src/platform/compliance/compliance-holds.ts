// What a compliance case holds (docs/compliance.md, Holds): the subject itself — no new card is issued to a
// held cardholder and no payout of a held tenant leaves — and each object it stopped, with the status the
// object had, so that clearing the case gives back exactly what it took and nothing else. Money is never
// moved by a hold: a held card's account keeps its balance, a held payout keeps its money in transit, and
// reconcile counts both as before. The kinds of subject are the APIs' to hold: issuing registers
// `customer` (its cards suspended), money out `site` and `store` (their payouts held as they are made).
import type { Clock } from '../clock/clock.ts';
import type { Executor, Tx } from '../db/database.ts';

/** One object a case stopped, as a kind's handler reports it */
export interface HeldObject {
  kind: string;
  id: string;
  previousStatus: string | null;
}

export interface HoldKind {
  /** Stops what the subject has now (its cards); the objects stopped, with their statuses before */
  place(tx: Tx, subject: string, caseId: string): Promise<HeldObject[]>;
  /** Gives one object back, if it is still as the hold left it (another decision may have moved it since) */
  release(tx: Tx, object: HeldObject, caseId: string): Promise<void>;
}

export class ComplianceHolds {
  /** Subject kind (`customer`, `site`, `store`) → how its objects are held */
  readonly kinds = new Map<string, HoldKind>();

  constructor(private readonly clock: Clock) {}

  /**
   * Holds the subject for the case, and everything of it its kind stops now. A subject another case
   * already holds keeps its objects with that case; this one holds the subject too, so the objects stay
   * held until both are decided.
   */
  async place(tx: Tx, caseId: string, subject: string): Promise<void> {
    const kind = this.kinds.get(subject.split(':', 1)[0] ?? '');
    const heldBefore = await this.caseHolding(tx, subject);
    const objects: HeldObject[] = [
      { kind: 'subject', id: subject, previousStatus: null },
      ...(heldBefore ? [] : ((await kind?.place(tx, subject, caseId)) ?? [])),
    ];
    await this.insert(tx, caseId, subject, objects);
  }

  /** One more object the held subject's case stopped (a payout made while it was held) */
  async add(tx: Tx, subject: string, object: HeldObject): Promise<void> {
    const held = await this.caseHolding(tx, subject);
    if (!held) throw new Error(`${subject} is not held`);
    await this.insert(tx, held, subject, [object]);
  }

  private async insert(tx: Tx, caseId: string, subject: string, objects: HeldObject[]): Promise<void> {
    const now = this.clock.now();
    await tx
      .insertInto('compliance_holds')
      .values(
        objects.map((o) => ({
          case_id: caseId,
          subject,
          object_kind: o.kind,
          object_id: o.id,
          previous_status: o.previousStatus,
          placed_at: now,
        })),
      )
      .execute();
  }

  /** The open hold's case, when the subject is held */
  async caseHolding(db: Executor, subject: string): Promise<string | undefined> {
    const row = await db
      .selectFrom('compliance_holds')
      .select('case_id')
      .where('subject', '=', subject)
      .where('released_at', 'is', null)
      .where('object_kind', '=', 'subject')
      .executeTakeFirst();
    return row?.case_id;
  }

  /**
   * Gives back everything the case holds: each object its kind releases. Objects of a subject another
   * case still holds pass to that case instead, held as they were.
   */
  async release(tx: Tx, caseId: string): Promise<number> {
    const held = await tx
      .updateTable('compliance_holds')
      .set({ released_at: this.clock.now() })
      .where('case_id', '=', caseId)
      .where('released_at', 'is', null)
      .returning(['subject', 'object_kind', 'object_id', 'previous_status'])
      .execute();
    for (const row of held) {
      if (row.object_kind === 'subject') continue;
      const object = { kind: row.object_kind, id: row.object_id, previousStatus: row.previous_status };
      const stillHeld = await this.caseHolding(tx, row.subject);
      if (stillHeld) {
        await this.insert(tx, stillHeld, row.subject, [object]);
        continue;
      }
      await this.kinds.get(row.subject.split(':', 1)[0] ?? '')?.release(tx, object, caseId);
    }
    return held.length;
  }

  /** What the case holds and held, in order */
  async of(db: Executor, caseId: string) {
    return db
      .selectFrom('compliance_holds')
      .select(['object_kind', 'object_id', 'previous_status', 'placed_at', 'released_at'])
      .where('case_id', '=', caseId)
      .orderBy('id')
      .execute();
  }
}
