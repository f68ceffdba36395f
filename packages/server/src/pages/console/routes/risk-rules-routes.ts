// Console › Risk › Rules (docs/risk.md, Console): the rules a viewer may see, the rule editor — a CEL
// expression checked when saved, the refusal shown on the form with its line and column, the attributes
// of each decision point beside it — and a backtest of a draft over a tenant's history before it acts.
// Every write goes through the same risk services as the admin API and reaches every process before the
// answer (tenantChangeSettled).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { sendConsolePage } from '../../../platform/console/console-http.ts';
import {
  details,
  doneNotice,
  type FormField,
  filterForm,
  link,
  listView,
} from '../../../platform/console/console-layout.ts';
import { type Html, h } from '../../../platform/console/html-template.ts';
import {
  confirmedAction,
  fieldOf,
  textBody,
  textQuery,
  viewerOf,
} from '../../../platform/console/route-kit.ts';
import { status, statusFact, when } from '../../../platform/console/values.ts';
import { RULE_ACTIONS } from '../../../platform/risk/decision-points.ts';
import type { Rule } from '../../../platform/risk/risk-rules.ts';
import { tenantChangeSettled } from '../../../platform/tenants/tenant-changes.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';
import {
  attributeReference,
  decisionTable,
  expressionField,
  pageAfter,
  pointOf,
  pointsFor,
  riskScopesOf,
  riskTabs,
  tenantsOf,
  writeScope,
} from './risk-console-kit.ts';

const PAGE = 50;
const MODES = ['active', 'shadow'] as const;
const priorityField = z.coerce.number().int().min(0).max(1_000_000);
const nameField = z.string().trim().min(1).max(200);

function ruleTable(rules: Rule[], next: string | null): Html {
  return listView({
    caption: 'Rules, by id',
    rows: rules,
    empty: 'No rules yet: every decision allows.',
    nextHref: next,
    columns: [
      { label: 'Rule', cell: (r) => link(`/console/risk/rules/${r.id}`, r.name) },
      { label: 'Scope', cell: (r) => r.scope },
      { label: 'Decision point', cell: (r) => r.decisionPoint },
      { label: 'Action', cell: (r) => r.action },
      { label: 'Mode', cell: (r) => status(r.mode, 'risk.mode') },
      { label: 'Priority', cell: (r) => r.priority },
    ],
  });
}

export async function registerRiskRulesConsoleRoutes(
  app: FastifyInstance,
  deps: PlatformConsoleDeps,
): Promise<void> {
  const { db, risk } = deps.services;

  app.get('/risk/rules', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const f = textQuery(request);
    const point = pointsFor(viewer).find((p) => p === f.decisionPoint);
    const scopes = riskScopesOf(viewer);
    const rules = await risk.rules.list(
      db,
      {
        ...(scopes ? { scopes } : f.scope ? { scopes: [f.scope] } : {}),
        ...(point ? { decisionPoint: point } : {}),
      },
      { ...(f.after ? { after: f.after } : {}), limit: PAGE },
    );
    const filters = filterForm(
      '/console/risk/rules',
      [
        { name: 'decisionPoint', label: 'Decision point', options: pointsFor(viewer) },
        ...(scopes ? [] : [{ name: 'scope', label: 'Scope (platform, merchant:ID, …)' }]),
      ],
      f,
    );
    const more = pageAfter('/console/risk/rules', f, rules, PAGE);
    return sendConsolePage(
      request,
      reply,
      deps,
      'Risk rules',
      h`${riskTabs('rules')}${doneNotice(f.done)}<p>${link('/console/risk/rules/new', 'New rule…')} ${link('/console/risk/backtest', 'Backtest a draft…')}</p>${filters}${ruleTable(rules, more)}`,
    );
  });

  /** The editor's fields, filled from the form just sent (a refusal keeps what was typed) or the rule. */
  const ruleFields = (request: FastifyRequest, from: Partial<Rule> = {}, withPoint = true): FormField[] => {
    const viewer = viewerOf(request, deps);
    const q = { ...textQuery(request), ...textBody(request) };
    const value = (name: keyof Rule, fallback: string) =>
      q[name] ?? (from[name] !== undefined ? String(from[name]) : fallback);
    return [
      { name: 'name', label: 'Name', value: value('name', ''), required: true },
      ...(withPoint && viewer.role === 'operator'
        ? [
            {
              name: 'scope',
              label: 'Scope',
              value: q.scope ?? 'platform',
              hint: 'platform (every tenant), merchant:ID, store:ID or partner:ID',
            },
          ]
        : []),
      ...(withPoint
        ? [
            {
              name: 'decisionPoint',
              label: 'Decision point',
              options: pointsFor(viewer),
              value: value('decisionPoint', pointsFor(viewer)[0] ?? ''),
            },
          ]
        : []),
      {
        name: 'expression',
        label: 'Expression (CEL: true matches)',
        type: 'textarea',
        value: value('expression', ''),
        required: true,
        hint: 'e.g. velocity.ip.count_10m >= 20 || card.country != billing_country',
      },
      {
        name: 'action',
        label: 'Action',
        options: RULE_ACTIONS,
        value: value('action', 'block'),
        hint: 'the decision point says which it takes (below)',
      },
      {
        name: 'mode',
        label: 'Mode',
        options: MODES,
        value: value('mode', 'shadow'),
        hint: 'shadow: evaluated and recorded, never acting',
      },
      { name: 'priority', label: 'Priority (lower first)', type: 'number', value: value('priority', '100') },
    ];
  };
  const draftOf = (body: Record<string, string | undefined>) => ({
    name: fieldOf(nameField, body, 'name'),
    expression: fieldOf(expressionField, body, 'expression'),
    action: fieldOf(z.enum(RULE_ACTIONS), body, 'action'),
    mode: fieldOf(z.enum(MODES), body, 'mode'),
    priority: fieldOf(priorityField, body, 'priority'),
  });

  const create = confirmedAction<Record<string, never>>(
    deps,
    async (request) => ({
      title: 'New risk rule',
      explain: h`${riskTabs('rules')}<p>A rule is checked against its decision point’s attributes when saved. Start it in shadow: it is evaluated and recorded, never acting, and its decisions show what it would do.</p>`,
      fields: ruleFields(request),
      submit: 'Save rule',
      trailer: attributeReference(pointsFor(viewerOf(request, deps))),
    }),
    async (request, _params, body) => {
      const viewer = viewerOf(request, deps);
      const point = pointOf(viewer, body.decisionPoint);
      const draft = draftOf(body);
      const scope = await writeScope(db, viewer, body.scope, point);
      const rule = await risk.rules.create(db, { ...draft, scope, decisionPoint: point });
      await tenantChangeSettled(db, request.log);
      return `/console/risk/rules/${rule.id}?done=saved`;
    },
  );
  app.get('/risk/rules/new', create.get);
  app.post('/risk/rules/new', create.post);

  app.get<{ Params: { id: string } }>('/risk/rules/:id', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const rule = await risk.rules.get(db, request.params.id, riskScopesOf(viewer));
    const decisions = await risk.decisions(db, { ruleId: rule.id, ...tenantsOf(viewer) }, { limit: 20 });
    const content = h`${riskTabs('rules')}${doneNotice(textQuery(request).done)}${details([
      ['Scope', rule.scope],
      ['Decision point', rule.decisionPoint],
      ['Expression', h`<code>${rule.expression}</code>`],
      ['Action', rule.action],
      ['Mode', statusFact(rule.mode, 'risk.mode')],
      ['Priority', rule.priority],
      ['Created', when(rule.createdAt)],
      ['Changed', when(rule.updatedAt)],
    ])}<p class="inline">${link(`/console/risk/rules/${rule.id}/edit`, 'Edit…')} ${link(
      `/console/risk/backtest?${new URLSearchParams({ decisionPoint: rule.decisionPoint, expression: rule.expression, ...(rule.scope === 'platform' ? {} : { scope: rule.scope }) })}`,
      'Backtest…',
    )} ${link(`/console/risk/rules/${rule.id}/delete`, 'Delete…')} ${link(`/console/risk/decisions?ruleId=${rule.id}`, 'All its decisions')}</p>${decisionTable(viewer, decisions, 'Its newest decisions')}`;
    return sendConsolePage(request, reply, deps, `Rule ${rule.name}`, content);
  });

  const edit = confirmedAction<{ id: string }>(
    deps,
    async (request, { id }) => {
      const rule = await risk.rules.get(db, id, riskScopesOf(viewerOf(request, deps)));
      return {
        title: `Edit rule ${rule.name}`,
        explain: h`<p>${rule.decisionPoint}, scope ${rule.scope}: those stay. The change reaches every process before this page answers.</p>`,
        fields: ruleFields(request, rule, false),
        submit: 'Save changes',
        trailer: attributeReference([rule.decisionPoint]),
      };
    },
    async (request, { id }, body) => {
      const rule = await risk.rules.update(db, id, draftOf(body), riskScopesOf(viewerOf(request, deps)));
      await tenantChangeSettled(db, request.log);
      return `/console/risk/rules/${rule.id}?done=saved`;
    },
  );
  app.get('/risk/rules/:id/edit', edit.get);
  app.post('/risk/rules/:id/edit', edit.post);

  const remove = confirmedAction<{ id: string }>(
    deps,
    async (request, { id }) => {
      const rule = await risk.rules.get(db, id, riskScopesOf(viewerOf(request, deps)));
      return {
        title: `Delete rule ${rule.name}`,
        explain: h`<p>${rule.decisionPoint} stops evaluating <code>${rule.expression}</code>. Its past decisions stay.</p>`,
        fields: [],
        submit: 'Delete rule',
        danger: true,
      };
    },
    async (request, { id }) => {
      await risk.rules.remove(db, id, riskScopesOf(viewerOf(request, deps)));
      await tenantChangeSettled(db, request.log);
      return '/console/risk/rules?done=removed';
    },
  );
  app.get('/risk/rules/:id/delete', remove.get);
  app.post('/risk/rules/:id/delete', remove.post);
}
