// Risk rules on money out (docs/risk.md, Decision points `payout` and `bank_account.change`): who a site's
// or a store's rules belong to (a site's are its merchant's), the facts about the tenant every money-out
// signal carries, and a decision made and recorded in the caller's transaction. Money out is not a
// one-statement write: the signal and the matched rules are a statement of their own in it.
import { daysSince } from '../clock/clock.ts';
import type { Executor } from '../db/database.ts';
import { DomainError } from '../errors/domain-error.ts';
import type { DecisionPointName } from '../risk/decision-points.ts';
import type { Risk } from '../risk/risk.ts';
import { recordEvaluation, type Signal, type Verdict } from '../risk/risk-engine.ts';
import type { Owner } from './terms.ts';

export interface MoneyOutTenant {
  /** The rules' scope: `merchant:<id>` for a site, `store:<id>` for a store */
  scope: string;
  /** `tenant` as the rules read it */
  attributes: { kind: string; id: string; age_days: bigint };
}

/** The site's merchant (or the store) whose rules apply, and its age. */
export async function moneyOutTenant(db: Executor, owner: Owner, now: Date): Promise<MoneyOutTenant> {
  if (owner.kind === 'site') {
    const site = await db
      .selectFrom('sites')
      .select(['merchant_id', 'created_at'])
      .where('id', '=', owner.siteId)
      .executeTakeFirstOrThrow();
    return {
      scope: `merchant:${site.merchant_id}`,
      attributes: { kind: 'site', id: String(owner.siteId), age_days: daysSince(site.created_at, now) },
    };
  }
  const store = await db
    .selectFrom('stores')
    .select('created_at')
    .where('id', '=', owner.storeId)
    .executeTakeFirstOrThrow();
  return {
    scope: `store:${owner.storeId}`,
    attributes: { kind: 'store', id: owner.storeId, age_days: daysSince(store.created_at, now) },
  };
}

/**
 * The rules' verdict at a money-out decision point, recorded against the object when a rule matched (or a
 * sandbox test value acted). The signal row is written for every evaluation, so velocity and backtests
 * have the tenant's history before its first rule.
 */
export async function decideMoneyOut(
  risk: Risk,
  db: Executor,
  facts: {
    point: Extract<DecisionPointName, 'payout' | 'bank_account.change'>;
    tenant: MoneyOutTenant;
    objectId: string;
    at: Date;
    amount: bigint;
    currency: string;
    attributes: Record<string, unknown>;
  },
): Promise<Verdict> {
  const signal: Signal = risk.engine.complete({
    point: facts.point,
    tenant: facts.tenant.scope,
    at: facts.at,
    amount: facts.amount,
    currency: facts.currency,
    keys: { ip: null, email: null, cardFingerprint: null, customerId: null },
    attributes: { ...facts.attributes, tenant: facts.tenant.attributes },
  });
  const verdict = await risk.engine.decide(db, signal);
  await recordEvaluation(db, signal, facts.objectId, verdict.action === 'block', verdict);
  return verdict;
}

/** A payout a rule blocked: not made, its items available again (the decision is recorded under `id`) */
export interface RefusedPayout {
  refused: true;
  id: string;
}

export const isRefused = (made: object | undefined): made is RefusedPayout =>
  made !== undefined && 'refused' in made;

/** A payout asked for: a rule's block is the answer (403, reason `risk_blocked`, no rule named). */
export function orRefused<T extends object>(made: T | RefusedPayout): T;
export function orRefused<T extends object>(made: T | RefusedPayout | undefined): T | undefined;
export function orRefused<T extends object>(made: T | RefusedPayout | undefined): T | undefined {
  if (!isRefused(made)) return made;
  throw new DomainError('forbidden', 'this payout cannot be made; contact the platform', {
    details: { reason: 'risk_blocked', payoutId: made.id },
  });
}
