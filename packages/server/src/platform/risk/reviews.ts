// Reviews (docs/risk.md, Reviews): a payment a rule sent to review waits, authorized and not captured,
// for a person. Approved, the API that owns it goes on (a payments charge is captured); refused, it is
// undone (voided) and the payer told as the wire tells any void; not decided before it expires, the
// refusal applies. The outcome and the review's new status commit together. The API registers what an
// outcome does at its decision point.
import type { Selectable } from 'kysely';
import type { PolicyAction } from '../approvals/approvals.ts';
import type { Clock } from '../clock/clock.ts';
import type { Executor, Tx } from '../db/database.ts';
import type { RiskReviewsTable } from '../db/schema.ts';
import type { Transact } from '../db/transact.ts';
import { transactEach } from '../db/transact.ts';
import { DomainError, notFound } from '../errors/domain-error.ts';
import { newId } from '../ids.ts';
import {
  type DecisionPointName,
  type RiskScope,
  type RuleOnObject,
  ruleOnObject,
} from './decision-points.ts';

export interface Review extends RuleOnObject {
  status: 'pending' | 'approved' | 'refused' | 'expired';
  createdAt: Date;
  expiresAt: Date;
  decidedAt: Date | null;
  decidedBy: string | null;
}

/** What an outcome does to the object, in the review's transaction (an API's own step). */
export type ReviewOutcome = (tx: Tx, objectId: string, approved: boolean) => Promise<void>;

/**
 * Which of the tenant's four-eyes policies approving a review falls under (docs/console.md, Approvals):
 * approving a held payout is paying it out, a held crypto refund refunding, a held change of bank account
 * changing it. Registered by the API that owns the decision point, for the points that let money out.
 */
export type ReviewApproval = (
  db: Executor,
  objectId: string,
) => Promise<{
  action: PolicyAction;
  money?: { currency: string; amount: bigint };
  /** What approving does, in words, for the request a second person reads */
  summary: string;
}>;

/** How long a review waits at most (an authorization that expires sooner ends it sooner) */
export const REVIEW_HOURS = 72;

const toReview = (row: Selectable<RiskReviewsTable>): Review => ({
  ...ruleOnObject(row),
  status: row.status,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  decidedAt: row.decided_at,
  decidedBy: row.decided_by,
});

export class RiskReviews {
  readonly outcomes = new Map<DecisionPointName, ReviewOutcome>();
  readonly approvals = new Map<DecisionPointName, ReviewApproval>();

  constructor(private readonly deps: { clock: Clock; transact: Transact; db: Executor }) {}

  /** A review of an object, in the transaction that held it. */
  async open(
    tx: Tx,
    review: {
      tenant: RiskScope;
      point: DecisionPointName;
      objectId: string;
      ruleId: string;
      ruleName: string;
      until?: Date | null;
    },
  ): Promise<void> {
    const now = this.deps.clock.now();
    const longest = new Date(now.getTime() + REVIEW_HOURS * 3_600_000);
    await tx
      .insertInto('risk_reviews')
      .values({
        id: newId('riskReview', now.getTime()),
        tenant: review.tenant,
        decision_point: review.point,
        object_id: review.objectId,
        rule_id: review.ruleId,
        rule_name: review.ruleName,
        status: 'pending',
        created_at: now,
        expires_at: review.until && review.until < longest ? review.until : longest,
      })
      .execute();
  }

  async list(
    db: Executor,
    filter: { tenants?: readonly RiskScope[]; status: Review['status'] },
    page: { after?: string; limit: number },
  ): Promise<Review[]> {
    let query = db
      .selectFrom('risk_reviews')
      .selectAll()
      .where('status', '=', filter.status)
      .orderBy('id')
      .limit(page.limit);
    if (filter.tenants) query = query.where('tenant', 'in', filter.tenants);
    if (page.after) query = query.where('id', '>', page.after);
    return (await query.execute()).map(toReview);
  }

  async get(db: Executor, id: string, tenants?: readonly RiskScope[]): Promise<Review> {
    let query = db.selectFrom('risk_reviews').selectAll().where('id', '=', id);
    if (tenants) query = query.where('tenant', 'in', tenants);
    const row = await query.executeTakeFirst();
    if (!row) throw notFound('review');
    return toReview(row);
  }

  /** A person decides: the outcome and the review's status in one transaction; a decided review is a 409. */
  decide(id: string, approved: boolean, by: string, tenants?: readonly RiskScope[]): Promise<Review> {
    return this.deps.transact(async (tx) => {
      let query = tx.selectFrom('risk_reviews').selectAll().where('id', '=', id).forUpdate();
      if (tenants) query = query.where('tenant', 'in', tenants);
      const row = await query.executeTakeFirst();
      if (!row) throw notFound('review');
      if (row.status !== 'pending') {
        throw new DomainError('invalid_state', `the review is ${row.status}`, {
          details: { status: row.status },
        });
      }
      return toReview(await this.close(tx, row, approved ? 'approved' : 'refused', by));
    });
  }

  /** Sweep: reviews nobody decided in time are refused (the object undone), status `expired`. */
  async expireDue(): Promise<number> {
    const due = await this.deps.db
      .selectFrom('risk_reviews')
      .select('id')
      .where('status', '=', 'pending')
      .where('expires_at', '<=', this.deps.clock.now())
      .limit(200)
      .execute();
    return transactEach(this.deps.transact, due, async (tx, { id }) => {
      const row = await tx
        .selectFrom('risk_reviews')
        .selectAll()
        .where('id', '=', id)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (row?.status !== 'pending') return false;
      await this.close(tx, row, 'expired', null);
      return true;
    });
  }

  private async close(
    tx: Tx,
    row: { id: string; decision_point: string; object_id: string },
    status: 'approved' | 'refused' | 'expired',
    by: string | null,
  ) {
    const outcome = this.outcomes.get(row.decision_point as DecisionPointName);
    if (!outcome) throw new Error(`no review outcome for ${row.decision_point}`);
    await outcome(tx, row.object_id, status === 'approved');
    return tx
      .updateTable('risk_reviews')
      .set({ status, decided_at: this.deps.clock.now(), decided_by: by })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }
}
