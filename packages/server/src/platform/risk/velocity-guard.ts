// A key's velocity on the one-statement write paths (docs/risk.md, Velocity on the one-statement paths): a
// card authorization of a known card and a crypto order send one statement and read nothing before it. When
// their rules read a card's, an email's or a customer's velocity, the rules are first evaluated on all the
// rest (rule-residual.ts); what is left is checked by a guard part in the write's own statement, which
// counts the velocity there and raises (statement_guard, TG001) when a rule may match. Then nothing was
// written, and the caller decides the usual way (velocity read first) and writes again: two round trips
// more (the refused statement and the read) only for the payments a rule may refuse, none for the others.

import type { Executor } from '../db/database.ts';
import { pgErrorCode } from '../db/database.ts';
import type { StatementPart } from '../db/statement-batch.ts';
import type { VelocityFeature } from './decision-points.ts';
import type { RiskEngine, Signal, Verdict } from './risk-engine.ts';
import { type Residual, residualSql, Undecidable } from './rule-residual.ts';
import { type VelocityProbe, velocityColumns, withTenant } from './velocity.ts';

/** A verdict to write with; when it rests on a key's velocity not read yet, the guard that checks it. */
export interface Prejudged {
  verdict: Verdict | undefined;
  /** A part for the write's statement: it raises when a rule may match (isVelocityGuardFailure) */
  guard?: StatementPart;
}

const GUARD_REASON = 'a risk rule may match on velocity';

/**
 * The verdict, without reading a key's velocity where the rules can be decided without it or checked in
 * the write's statement. Undefined verdict: no rules at the point (as RiskEngine.decideIfRuled).
 */
export async function prejudge(engine: RiskEngine, db: Executor, signal: Signal): Promise<Prejudged> {
  const forced = engine.testOutcome(signal);
  if (forced) return { verdict: forced };
  const ruleSet = await engine.ruleSet(db, signal.point, signal.tenant);
  if (ruleSet.rules.length === 0) return { verdict: undefined };
  const keyed = ruleSet.velocity.filter((f) => f.key !== 'tenant');
  if (keyed.length === 0 || ruleSet.rules.some((r) => !r.residual)) {
    return { verdict: await engine.decide(db, signal) };
  }
  const [lists, tenant] = await Promise.all([
    engine.listsFor(db, signal.tenant),
    engine.tenantVelocity(db, signal, ruleSet.velocity),
  ]);
  const attributes = { ...signal.attributes, velocity: withTenant({}, tenant) };
  const residuals: Residual[] = [];
  try {
    for (const rule of ruleSet.rules) {
      const residual = rule.residual?.(attributes, lists) ?? { kind: 'known', value: true };
      if (residual.kind === 'known' && residual.value === false) continue;
      // A rule that matches whatever the velocity is recorded with it: read it
      if (residual.kind === 'known') return { verdict: await engine.decide(db, signal) };
      residuals.push(residual);
    }
  } catch (err) {
    if (err instanceof Undecidable) return { verdict: await engine.decide(db, signal) };
    throw err;
  }
  const allowed: Verdict = { action: 'allow', matched: [], attributes: signal.attributes };
  if (residuals.length === 0) return { verdict: allowed };
  return { verdict: allowed, guard: velocityGuard(signal, keyed, residuals) };
}

/** The guard part: the key velocity the rules read, counted in the statement, and their residuals on it. */
function velocityGuard(
  probe: VelocityProbe,
  features: readonly VelocityFeature[],
  residuals: readonly Residual[],
): StatementPart {
  const columns = velocityColumns(probe, features);
  const parameters = [...columns.parameters];
  const parameter = (value: bigint) => `$${parameters.push(value.toString())}`;
  const conditions = residuals.map((r) => residualSql(r, columns.sqlOf, parameter));
  return {
    // OFFSET 0 keeps the counts a subquery of their own, each counted once: pulled up into the condition,
    // each key's count would be made again for every feature of it the condition reads
    sql: `SELECT statement_guard(NOT (${conditions.join(' OR ')}), '${GUARD_REASON}')
      FROM (SELECT ${columns.sql || '1 AS nothing'} OFFSET 0) v`,
    parameters,
    returns: true,
  };
}

/** The guard raised: a rule may match, nothing of the statement was written. */
export const isVelocityGuardFailure = (err: unknown) =>
  pgErrorCode(err) === 'TG001' && (err as Error).message === GUARD_REASON;
