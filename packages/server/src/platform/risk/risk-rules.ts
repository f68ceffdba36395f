// Risk rules (docs/risk.md, Rules): saved type-checked, read compiled. A decision point's rules for one
// tenant (its own and the platform's) are compiled once per change and kept in the tenant cache: a trigger
// announces every change of risk_rules (migration 0053), so every process recompiles within a second.

import type { Selectable } from 'kysely';
import { noteChange } from '../audit/audit-changes.ts';
import type { Clock } from '../clock/clock.ts';
import { whenCommitted } from '../db/connection-scope.ts';
import type { Executor } from '../db/database.ts';
import type { RiskRulesTable } from '../db/schema.ts';
import { DomainError, notFound } from '../errors/domain-error.ts';
import { newId } from '../ids.ts';
import type { TenantCache } from '../tenants/tenant-cache.ts';
import {
  DECISION_POINTS,
  type DecisionPointName,
  featureName,
  type RiskScope,
  type RuleAction,
  type VelocityFeature,
  velocityFeatures,
} from './decision-points.ts';
import type { RiskLists } from './risk-lists.ts';
import { planResidual, type ResidualPlan } from './rule-residual.ts';

export type { RiskScope } from './decision-points.ts';

import {
  type CompiledExpression,
  checkExpression,
  compileExpression,
  ExpressionError,
} from './rule-expression.ts';

export interface RuleDraft {
  name: string;
  scope: RiskScope;
  decisionPoint: DecisionPointName;
  expression: string;
  action: RuleAction;
  mode: 'active' | 'shadow';
  priority: number;
}

export interface Rule extends RuleDraft {
  id: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface CompiledRule {
  id: string;
  name: string;
  action: RuleAction;
  mode: 'active' | 'shadow';
  priority: number;
  isPlatform: boolean;
  expression: CompiledExpression;
  /** What is left of it once all but a key's velocity is known (undefined: it cannot be put into SQL) */
  residual: ResidualPlan | undefined;
}

/** A decision point's rules for one tenant, in the order they are evaluated, and what they read. */
export interface RuleSet {
  rules: CompiledRule[];
  velocity: VelocityFeature[];
}

const byName = new Map(velocityFeatures().map((f) => [featureName(f), f]));

export const toRule = (row: Selectable<RiskRulesTable>): Rule => ({
  id: row.id,
  name: row.name,
  scope: row.scope,
  decisionPoint: row.decision_point as DecisionPointName,
  expression: row.expression,
  action: row.action as RuleAction,
  mode: row.mode,
  priority: row.priority,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export class RiskRules {
  constructor(
    private readonly deps: {
      clock: Clock;
      cache: TenantCache;
      lists: RiskLists;
      /**
       * Rolls a tenant's signals up into minutes ahead of its first decision (tenant-windows.ts): a
       * tenant's first roll-up reads back 30 days, paid here by the save, not by a payment. Never throws.
       */
      prepareTenantWindows?: (
        tenant: RiskScope,
        point: DecisionPointName,
        features: VelocityFeature[],
      ) => Promise<void>;
    },
  ) {}

  /** POST /admin/risk/rules: checked against the decision point, its lists known in its scope. */
  async create(db: Executor, draft: RuleDraft): Promise<Rule> {
    const features = await this.check(db, draft);
    const now = this.deps.clock.now();
    const row = await db
      .insertInto('risk_rules')
      .values({
        id: newId('riskRule', now.getTime()),
        scope: draft.scope,
        decision_point: draft.decisionPoint,
        name: draft.name,
        expression: draft.expression,
        action: draft.action,
        mode: draft.mode,
        priority: draft.priority,
        velocity_features: features,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.columns(['scope', 'name']).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!row)
      throw new DomainError('conflict', `a rule named ${draft.name} exists in this scope`, { field: 'name' });
    await this.prepare(draft.scope, draft.decisionPoint, features);
    return toRule(row);
  }

  async get(db: Executor, id: string, scopes?: readonly RiskScope[]): Promise<Rule> {
    let query = db.selectFrom('risk_rules').selectAll().where('id', '=', id);
    if (scopes) query = query.where('scope', 'in', scopes);
    const row = await query.executeTakeFirst();
    if (!row) throw notFound('rule');
    return toRule(row);
  }

  /** The rules of some scopes (all when none given), by decision point and priority; a page after `after`. */
  async list(
    db: Executor,
    filter: { scopes?: readonly RiskScope[]; decisionPoint?: DecisionPointName },
    page: { after?: string; limit: number },
  ): Promise<Rule[]> {
    let query = db.selectFrom('risk_rules').selectAll().orderBy('id').limit(page.limit);
    if (filter.scopes) query = query.where('scope', 'in', filter.scopes);
    if (filter.decisionPoint) query = query.where('decision_point', '=', filter.decisionPoint);
    if (page.after) query = query.where('id', '>', page.after);
    return (await query.execute()).map(toRule);
  }

  /** PATCH: any of the draft's fields but its scope and decision point; the result checked as a new rule is. */
  async update(
    db: Executor,
    id: string,
    patch: Partial<Omit<RuleDraft, 'scope' | 'decisionPoint'>>,
    scopes?: readonly RiskScope[],
  ): Promise<Rule> {
    const before = await this.get(db, id, scopes);
    const after: RuleDraft = { ...before, ...patch };
    const features = await this.check(db, after);
    const row = await db
      .updateTable('risk_rules')
      .set({
        name: after.name,
        expression: after.expression,
        action: after.action,
        mode: after.mode,
        priority: after.priority,
        velocity_features: features,
        updated_at: this.deps.clock.now(),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: unknown) => {
        if ((err as { code?: string }).code === '23505') {
          throw new DomainError('conflict', `a rule named ${after.name} exists in this scope`, {
            field: 'name',
          });
        }
        throw err;
      });
    noteChange('risk rule', describe(before), describe(after));
    await this.prepare(after.scope, after.decisionPoint, features);
    return toRule(row);
  }

  /**
   * A tenant's rule that reads its windows has them rolled up once the save is committed, before the
   * answer (the roll-up reads the signals, not the rule). A platform rule's are rolled up by each tenant's
   * first decision.
   */
  private async prepare(scope: RiskScope, point: DecisionPointName, features: string[]): Promise<void> {
    const prepare = this.deps.prepareTenantWindows;
    const read = features.map((name) => byName.get(name)).filter((f) => f !== undefined);
    if (!prepare || scope === 'platform' || !read.some((f) => f.key === 'tenant')) return;
    await whenCommitted(() => prepare(scope, point, read));
  }

  async remove(db: Executor, id: string, scopes?: readonly RiskScope[]): Promise<void> {
    const before = await this.get(db, id, scopes);
    await db.deleteFrom('risk_rules').where('id', '=', id).execute();
    noteChange('risk rule', describe(before), null);
  }

  /**
   * A decision point's rules for a tenant, compiled: the platform's and the tenant's, by priority (the
   * platform's first on a tie), with the velocity features any of them reads.
   */
  async ruleSet(db: Executor, point: DecisionPointName, tenant: RiskScope): Promise<RuleSet> {
    const found = await this.deps.cache.get<RuleSet>(`risk-rules:${point}:${tenant}`, async () => {
      const rows = await db
        .selectFrom('risk_rules')
        .selectAll()
        .where('decision_point', '=', point)
        .where('scope', 'in', ['platform', tenant])
        .execute();
      const rules = rows
        .map((row) => ({
          id: row.id,
          name: row.name,
          action: row.action as RuleAction,
          mode: row.mode,
          priority: row.priority,
          isPlatform: row.scope === 'platform',
          expression: compileExpression(point, row.expression),
          residual: planResidual(point, row.expression),
        }))
        .sort(
          (a, b) =>
            a.priority - b.priority || Number(b.isPlatform) - Number(a.isPlatform) || (a.id < b.id ? -1 : 1),
        );
      const names = new Set(rows.flatMap((row) => row.velocity_features));
      const velocity = [...names].flatMap((name) => byName.get(name) ?? []);
      return { value: { rules, velocity } };
    });
    return found ?? { rules: [], velocity: [] };
  }

  /** Checks a draft: its action at its decision point, its expression's types, the lists it names. */
  private async check(db: Executor, draft: RuleDraft): Promise<string[]> {
    const point = DECISION_POINTS[draft.decisionPoint];
    if (!(point.actions as readonly string[]).includes(draft.action)) {
      throw new DomainError(
        'validation_failed',
        `action must be one of ${point.actions.join(', ')} at ${draft.decisionPoint}`,
        { field: 'action' },
      );
    }
    let checked: ReturnType<typeof checkExpression>;
    try {
      checked = checkExpression(draft.decisionPoint, draft.expression);
    } catch (err) {
      if (!(err instanceof ExpressionError)) throw err;
      throw new DomainError(
        'validation_failed',
        `expression: ${err.message} (line ${err.line}, column ${err.column})`,
        { field: 'expression', details: { position: err.position, line: err.line, column: err.column } },
      );
    }
    const known = await this.deps.lists.namesIn(db, draft.scope);
    const unknown = checked.lists.find((name) => !known.has(name));
    if (unknown !== undefined) {
      throw new DomainError('validation_failed', `expression: no list named ${unknown} in this scope`, {
        field: 'expression',
        details: { position: draft.expression.indexOf(unknown) },
      });
    }
    return checked.velocity.map(featureName);
  }
}

const describe = (rule: RuleDraft) => ({
  name: rule.name,
  expression: rule.expression,
  action: rule.action,
  mode: rule.mode,
  priority: rule.priority,
});
