// Where spending controls live (migration 0054): each scope's controls, and the spend counters of the cards
// and accounts whose controls carry limits. An authorization under limits reads its counters locked, so two
// authorizations of one card never both pass a limit that only one fits under.
import { sql } from 'kysely';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Executor, Tx } from '../../platform/db/database.ts';
import {
  type AuthorizationFacts,
  CONTROL_SCOPES,
  type ControlScope,
  countsSpend,
  fromStored,
  isEmpty,
  NOTHING_SPENT,
  type Refusal,
  refusalOf,
  type ScopedControls,
  type Spend,
  type SpendingControls,
  type StoredControls,
  toStored,
} from './spending-controls.ts';

/** The card an authorization is for, as far as its controls go */
export interface ControlledCard {
  id: string;
  account_id: string;
  partner_id: string;
}

const SCOPE_ORDER: Record<ControlScope, number> = { partner: 0, account: 1, card: 2, cardholder: 3 };

/** The subject whose controls a scope holds: the partner, the account or the card */
const subjectOf = (card: ControlledCard, scope: ControlScope) =>
  scope === 'partner' ? card.partner_id : scope === 'account' ? card.account_id : card.id;

export class SpendingControlsStore {
  constructor(private readonly clock: Clock) {}

  /** The controls of these subjects at these scopes (those that have some), the partner's first, in one read. */
  async ofSubjects(db: Executor, subjects: readonly [string, ControlScope][]): Promise<ScopedControls[]> {
    const wanted = new Set(subjects.map(([id, scope]) => `${scope}:${id}`));
    const rows = await db
      .selectFrom('issuing_spending_controls')
      .select(['subject_id', 'scope', 'controls'])
      .where('subject_id', 'in', [...new Set(subjects.map(([id]) => id))])
      .execute();
    return rows
      .filter((r) => wanted.has(`${r.scope}:${r.subject_id}`))
      .map((r) => ({ scope: r.scope, controls: fromStored(r.controls as StoredControls) }))
      .sort((a, b) => SCOPE_ORDER[a.scope] - SCOPE_ORDER[b.scope]);
  }

  /** Saves a scope's controls; controls that say nothing remove them (the card's fast path returns). */
  async put(
    tx: Tx,
    subject: { subjectId: string; scope: ControlScope; partnerId: string },
    controls: SpendingControls,
  ): Promise<void> {
    if (isEmpty(controls)) {
      await tx
        .deleteFrom('issuing_spending_controls')
        .where('subject_id', '=', subject.subjectId)
        .where('scope', '=', subject.scope)
        .execute();
      return;
    }
    const row = {
      subject_id: subject.subjectId,
      scope: subject.scope,
      partner_id: subject.partnerId,
      controls: JSON.stringify(toStored(controls)),
      updated_at: this.clock.now(),
    };
    await tx
      .insertInto('issuing_spending_controls')
      .values(row)
      .onConflict((oc) =>
        oc
          .columns(['subject_id', 'scope'])
          .doUpdateSet({ controls: row.controls, updated_at: row.updated_at }),
      )
      .execute();
  }

  /** Every scope's controls that apply to the card, the partner's first. */
  applying(db: Executor, card: ControlledCard): Promise<ScopedControls[]> {
    return this.ofSubjects(
      db,
      CONTROL_SCOPES.map((scope) => [subjectOf(card, scope), scope]),
    );
  }

  /**
   * The control that refuses the authorization, if one does. Limits are read from the counters, locked until
   * the transaction ends so that `count` adds to what was checked.
   */
  async refusal(
    tx: Tx,
    card: ControlledCard,
    facts: AuthorizationFacts,
    scoped: readonly ScopedControls[],
  ): Promise<Refusal | undefined> {
    if (scoped.length === 0) return undefined;
    const spent = await this.lockSpend(tx, counted(card, scoped));
    return refusalOf(facts, scoped, (scope) => spent.get(counterOf(card, scope)) ?? NOTHING_SPENT);
  }

  /** Adds an approved authorization to the counters its controls keep (locked by `refusal`). */
  async count(
    tx: Tx,
    card: ControlledCard,
    scoped: readonly ScopedControls[],
    amount: bigint,
  ): Promise<void> {
    const subjects = counted(card, scoped);
    if (subjects.length === 0) return;
    const { day, month } = this.period();
    await sql`
      UPDATE issuing_spend_counters SET
        day_amount = CASE WHEN day = ${day}::date THEN day_amount + ${amount.toString()}::numeric
          ELSE ${amount.toString()}::numeric END,
        day_count = CASE WHEN day = ${day}::date THEN day_count + 1 ELSE 1 END,
        day = ${day}::date,
        month_amount = CASE WHEN month = ${month}::date THEN month_amount + ${amount.toString()}::numeric
          ELSE ${amount.toString()}::numeric END,
        month = ${month}::date,
        lifetime_amount = lifetime_amount + ${amount.toString()}::numeric
      WHERE subject_id = ANY(${subjects}::uuid[])`.execute(tx);
  }

  /** The subjects' spend in the current UTC day and month, their rows made if new and locked in id order. */
  private async lockSpend(tx: Tx, subjects: string[]): Promise<Map<string, Spend>> {
    const spent = new Map<string, Spend>();
    if (subjects.length === 0) return spent;
    const { day, month } = this.period();
    await sql`
      INSERT INTO issuing_spend_counters (subject_id, day, month)
      SELECT s, ${day}::date, ${month}::date FROM unnest(${subjects}::uuid[]) s
      ON CONFLICT (subject_id) DO NOTHING`.execute(tx);
    const { rows } = await sql<{
      subject_id: string;
      day_amount: string;
      day_count: number;
      month_amount: string;
      lifetime_amount: string;
    }>`
      SELECT subject_id,
        CASE WHEN day = ${day}::date THEN day_amount ELSE 0 END AS day_amount,
        CASE WHEN day = ${day}::date THEN day_count ELSE 0 END AS day_count,
        CASE WHEN month = ${month}::date THEN month_amount ELSE 0 END AS month_amount,
        lifetime_amount
      FROM issuing_spend_counters WHERE subject_id = ANY(${subjects}::uuid[])
      ORDER BY subject_id FOR UPDATE`.execute(tx);
    for (const r of rows) {
      spent.set(r.subject_id, {
        dayAmount: BigInt(r.day_amount),
        dayCount: r.day_count,
        monthAmount: BigInt(r.month_amount),
        lifetimeAmount: BigInt(r.lifetime_amount),
      });
    }
    return spent;
  }

  /** The current UTC day and month, as the counters' dates */
  private period(): { day: string; month: string } {
    const day = this.clock.now().toISOString().slice(0, 10);
    return { day, month: `${day.slice(0, 8)}01` };
  }
}

/** Whose spend a scope's limits count: the account's for the account's controls, the card's for the rest */
const counterOf = (card: ControlledCard, scope: ControlScope) =>
  scope === 'account' ? card.account_id : card.id;

/** The counters the controls keep, sorted (the order their rows are locked in) */
function counted(card: ControlledCard, scoped: readonly ScopedControls[]): string[] {
  const subjects = new Set(
    scoped.filter((s) => countsSpend(s.controls)).map((s) => counterOf(card, s.scope)),
  );
  return [...subjects].sort();
}
