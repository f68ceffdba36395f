// /admin/risk/rules and /admin/risk/decisions (docs/risk.md): the operator's rules for the platform and
// for any tenant, and why an object was refused. A rule's expression is checked against its decision
// point when saved: a wrong attribute or type is a 400 naming the expression, with the position
// (details.position, line, column). Each write is audited with the rest of the admin API, and answers
// once every process has heard of it.
import { z } from 'zod';
import { DomainError } from '../../platform/errors/domain-error.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { int8Cursor } from '../../platform/http/fields.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';
import { DECISION_POINT_NAMES, RULE_ACTIONS } from '../../platform/risk/decision-points.ts';
import type { DecisionRecord, Risk } from '../../platform/risk/risk.ts';
import type { Rule } from '../../platform/risk/risk-rules.ts';
import { checkedScope, scopeRefOf } from '../../platform/risk/risk-scope.ts';
import { tenantChangeSettled } from '../../platform/tenants/tenant-changes.ts';
import type { AdminDeps } from './admin-deps.ts';
import { pageQuery, scopeField, scopeView } from './risk-scope.ts';
import { idParam, nameField, standardErrors, timestamp } from './schemas.ts';

const ruleFields = {
  name: nameField,
  expression: z
    .string()
    .min(1)
    .max(4_000)
    .describe('a CEL expression over the decision point’s attributes; true matches'),
  action: z.enum(RULE_ACTIONS).describe('what a match does; the decision point says which it takes'),
  mode: z.enum(['active', 'shadow']).describe('shadow: evaluated and recorded, never acting'),
  priority: z.number().int().min(0).max(1_000_000).describe('lower first; the first active match decides'),
};
const ruleBody = z
  .strictObject({
    ...ruleFields,
    scope: scopeField,
    decisionPoint: z.enum(DECISION_POINT_NAMES),
    mode: ruleFields.mode.default('active'),
    priority: ruleFields.priority.default(100),
  })
  .meta({
    example: {
      name: 'card testing',
      scope: { kind: 'platform' },
      decisionPoint: 'payments.charge',
      expression: 'velocity.ip.count_10m >= 20 || velocity.ip.declines_1h >= 5',
      action: 'block',
      mode: 'active',
      priority: 10,
    },
  });
const rulePatch = z
  .strictObject({
    name: ruleFields.name.optional(),
    expression: ruleFields.expression.optional(),
    action: ruleFields.action.optional(),
    mode: ruleFields.mode.optional(),
    priority: ruleFields.priority.optional(),
  })
  .meta({ example: { mode: 'shadow', priority: 20 } });
const ruleView = z.object({
  id: z.string(),
  name: z.string(),
  scope: scopeView,
  decisionPoint: z.string(),
  expression: z.string(),
  action: z.string(),
  mode: z.string(),
  priority: z.number().int(),
  createdAt: timestamp,
  updatedAt: timestamp,
});
const decisionView = z.object({
  id: z.string(),
  tenant: z.string(),
  decisionPoint: z.string(),
  objectId: z.string(),
  ruleId: z.string(),
  ruleName: z.string(),
  action: z.string(),
  mode: z.string(),
  acted: z.boolean().describe('this rule decided (the first active match)'),
  attributes: z.record(z.string(), z.unknown()).describe('the values the rules read'),
  at: timestamp,
});
const presentRule = (r: Rule) => ({
  id: r.id,
  name: r.name,
  scope: scopeRefOf(r.scope),
  decisionPoint: r.decisionPoint,
  expression: r.expression,
  action: r.action,
  mode: r.mode,
  priority: r.priority,
  createdAt: r.createdAt.toISOString(),
  updatedAt: r.updatedAt.toISOString(),
});
const presentDecision = (d: DecisionRecord) => ({ ...d, at: d.at.toISOString() });

const backtestBody = z
  .strictObject({
    scope: scopeField.describe('the tenant whose history is read'),
    decisionPoint: z.enum(DECISION_POINT_NAMES),
    expression: ruleFields.expression,
    from: timestamp,
    to: timestamp,
    sampleSize: z.number().int().min(0).max(100).default(20),
  })
  .meta({
    example: {
      scope: { kind: 'merchant', id: '2001' },
      decisionPoint: 'payments.charge',
      expression: 'velocity.card.count_24h >= 3 && amount >= 5000',
      from: '2026-01-01T00:00:00Z',
      to: '2026-12-01T00:00:00Z',
    },
  });
const counts = z.object({ matched: z.number().int(), all: z.number().int() });
const backtestView = z.object({
  evaluated: z.number().int().describe('the tenant’s evaluations at the point in the period'),
  matched: z.number().int().describe('how many the rule would have matched'),
  matchedAmounts: z.record(z.string(), z.string()).describe('their amounts by currency, in major units'),
  disputed: counts.describe('disputed later: of the matched, and of all'),
  fraud: counts.describe('disputed later as fraud: of the matched, and of all'),
  failed: z.number().int().describe('evaluations that failed (a division by zero): not matched'),
  judgedIn: z
    .enum(['database', 'process'])
    .describe(
      'where the rule was evaluated: in the database when it has an exact SQL translation (a part with none answered by CEL once per distinct value of what it reads), otherwise each signal by CEL in the process, slower (docs/risk.md, Backtests)',
    ),
  parts: z
    .number()
    .int()
    .describe(
      'slices of the period judged at once, each on its own database connection (TESSERA_BACKTEST_PARTS); 1 when the history was judged in one',
    ),
  sample: z.array(
    z.object({ objectId: z.string(), at: timestamp, amount: z.string(), currency: z.string() }),
  ),
});

export async function registerRiskRuleRoutes(app: ZodApp, deps: AdminDeps & { risk: Risk }): Promise<void> {
  const { db, risk } = deps;

  app.post(
    '/risk/rules',
    {
      schema: {
        summary: 'Write a risk rule: a CEL expression at one decision point, for the platform or one tenant',
        tags: ['risk'],
        body: ruleBody,
        response: { 201: ruleView, ...standardErrors },
      },
    },
    async (request, reply) => {
      const { scope, ...draft } = request.body;
      const rule = await risk.rules.create(db, {
        ...draft,
        scope: await checkedScope(db, scope, draft.decisionPoint),
      });
      await tenantChangeSettled(db, request.log);
      return reply.code(201).send(presentRule(rule));
    },
  );

  app.get(
    '/risk/rules',
    {
      schema: {
        summary: 'List risk rules, by id',
        tags: ['risk'],
        querystring: z.object({
          decisionPoint: z.enum(DECISION_POINT_NAMES).optional(),
          scope: z
            .string()
            .max(120)
            .optional()
            .describe('platform, merchant:<id>, store:<id> or partner:<id>'),
          ...pageQuery,
        }),
        response: {
          200: z.object({ data: z.array(ruleView), nextAfter: z.string().nullable() }),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const q = request.query;
      const rules = await risk.rules.list(
        db,
        {
          ...(q.scope ? { scopes: [q.scope] } : {}),
          ...(q.decisionPoint ? { decisionPoint: q.decisionPoint } : {}),
        },
        { ...(q.after ? { after: q.after } : {}), limit: q.limit },
      );
      return {
        data: rules.map(presentRule),
        nextAfter: rules.length === q.limit ? (rules.at(-1)?.id ?? null) : null,
      };
    },
  );

  app.get(
    '/risk/rules/:id',
    {
      schema: {
        summary: 'Retrieve a risk rule',
        tags: ['risk'],
        params: idParam,
        response: { 200: ruleView, ...standardErrors },
      },
    },
    async (request) => presentRule(await risk.rules.get(db, request.params.id)),
  );

  app.patch(
    '/risk/rules/:id',
    {
      schema: {
        summary: 'Change a risk rule (its scope and decision point stay); checked as a new rule is',
        tags: ['risk'],
        params: idParam,
        body: rulePatch,
        response: { 200: ruleView, ...standardErrors },
      },
    },
    async (request) => {
      const rule = await risk.rules.update(db, request.params.id, stripUndefined(request.body));
      await tenantChangeSettled(db, request.log);
      return presentRule(rule);
    },
  );

  app.delete(
    '/risk/rules/:id',
    {
      schema: {
        summary: 'Delete a risk rule (its past decisions stay)',
        tags: ['risk'],
        params: idParam,
        response: { 204: z.null(), ...standardErrors },
      },
    },
    async (request, reply) => {
      await risk.rules.remove(db, request.params.id);
      await tenantChangeSettled(db, request.log);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/risk/rules/backtest',
    {
      schema: {
        summary:
          'Evaluate a draft rule over a tenant’s history: what it would have matched, its amounts, how many were later disputed',
        description:
          'A backtest that runs past TESSERA_BACKTEST_TIMEOUT_SECONDS (default 120) is stopped and refused with a 422 (limit_exceeded, field `to`): backtest a shorter period.',
        tags: ['risk'],
        body: backtestBody,
        response: { 200: backtestView, ...standardErrors },
      },
    },
    async (request) => {
      const { scope, ...draft } = request.body;
      const tenant = await checkedScope(db, scope, draft.decisionPoint);
      if (tenant === 'platform') {
        throw new DomainError('validation_failed', 'a backtest reads one tenant’s history: give its scope', {
          field: 'scope.kind',
        });
      }
      const result = await risk.backtest(db, {
        ...draft,
        tenant,
        from: new Date(draft.from),
        to: new Date(draft.to),
      });
      return {
        ...result,
        matchedAmounts: Object.fromEntries(
          Object.entries(result.matchedAmounts).map(([currency, minor]) => [
            currency,
            formatAmountIn(minor, currency),
          ]),
        ),
        sample: result.sample.map((s) => ({
          objectId: s.objectId,
          at: s.at.toISOString(),
          amount: formatAmountIn(s.amount, s.currency),
          currency: s.currency,
        })),
      };
    },
  );

  app.get(
    '/risk/decisions',
    {
      schema: {
        summary: 'Why an object was refused: the rules that matched it (active or shadow), newest first',
        tags: ['risk'],
        querystring: z.object({
          objectId: z.string().max(100).optional().describe('a payments transaction id, …'),
          ruleId: z.string().max(100).optional(),
          tenant: z.string().max(120).optional().describe('merchant:<id>, store:<id> or partner:<id>'),
          before: int8Cursor('a decision id').optional().describe('the last id of the previous page'),
          limit: pageQuery.limit,
        }),
        response: {
          200: z.object({ data: z.array(decisionView), nextBefore: z.string().nullable() }),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const q = request.query;
      const decisions = await risk.decisions(
        db,
        {
          ...(q.objectId ? { objectId: q.objectId } : {}),
          ...(q.ruleId ? { ruleId: q.ruleId } : {}),
          ...(q.tenant ? { tenants: [q.tenant] } : {}),
        },
        { ...(q.before ? { before: q.before } : {}), limit: q.limit },
      );
      return {
        data: decisions.map(presentDecision),
        nextBefore: decisions.length === q.limit ? (decisions.at(-1)?.id ?? null) : null,
      };
    },
  );
}

function stripUndefined<T extends Record<string, unknown>>(
  value: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as never;
}
