// Console › Risk › Rules (docs/risk.md, Console): the rules a viewer may see, the rule editor — a CEL
// expression checked when saved, the refusal shown on the form with its line and column, the attributes
// of each decision point beside it — and a backtest of a draft over a tenant's history before it acts.
// Every write goes through the same risk services as the admin API and reaches every process before the
// answer (tenantChangeSettled).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { contextOf, sendConsolePage } from '../../../platform/console/console-http.ts';
import {
  details,
  doneNotice,
  type FormField,
  filterForm,
  link,
  listView,
  money,
  postForm,
  status,
  when,
} from '../../../platform/console/console-layout.ts';
import { type Html, h } from '../../../platform/console/html-template.ts';
import {
  confirmedAction,
  fieldOf,
  textBody,
  textQuery,
  viewerOf,
} from '../../../platform/console/route-kit.ts';
import { DomainError } from '../../../platform/errors/domain-error.ts';
import {
  COMMON_ATTRIBUTES,
  DECISION_POINTS,
  type DecisionPointName,
  featureName,
  RULE_ACTIONS,
  velocityFeatures,
} from '../../../platform/risk/decision-points.ts';
import type { Rule } from '../../../platform/risk/risk-rules.ts';
import { tenantChangeSettled } from '../../../platform/tenants/tenant-changes.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';
import {
  decisionTable,
  pageAfter,
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
const expressionField = z.string().trim().min(1).max(4_000);

function pointOf(viewer: Parameters<typeof pointsFor>[0], value: string | undefined): DecisionPointName {
  const points = pointsFor(viewer);
  const point = points.find((p) => p === value);
  if (!point)
    throw new DomainError('validation_failed', `decisionPoint must be one of ${points.join(', ')}`, {
      field: 'decisionPoint',
    });
  return point;
}

/** Each decision point's attributes, as the type checker reads them: what an expression may say. */
function attributeReference(points: readonly DecisionPointName[]): Html {
  const velocity = velocityFeatures().map((f) => `velocity.${featureName(f)}`);
  return h`<h2>Attributes</h2>${points.map((point) => {
    const rows: { name: string; type: string; description: string }[] = [];
    for (const [name, doc] of Object.entries(DECISION_POINTS[point].attributes)) {
      if ('type' in doc && typeof doc.type === 'string')
        rows.push({ name, ...(doc as { type: string; description: string }) });
      else
        for (const [member, d] of Object.entries(
          doc as Record<string, { type: string; description: string }>,
        ))
          rows.push({ name: `${name}.${member}`, ...d });
    }
    return h`<details><summary>${point}: ${DECISION_POINTS[point].actions.join(', ')}</summary>
<p>${DECISION_POINTS[point].description}.</p>${listView({
      caption: `Attributes at ${point}`,
      rows,
      columns: [
        { label: 'Attribute', cell: (r) => h`<code>${r.name}</code>` },
        { label: 'Type', cell: (r) => r.type },
        { label: 'What it holds', cell: (r) => r.description },
      ],
    })}</details>`;
  })}<details><summary>Every decision point</summary><p>${Object.entries(COMMON_ATTRIBUTES).map(([name, doc]) => h`<code>${name}</code> (${doc.type}): ${doc.description}. `)}</p></details><details><summary>Velocity (every decision point)</summary><p>Counts and sums (minor units) of the same key over a window, this object included; declines per card and IP over an hour: ${velocity.map((v, i) => h`${i ? ', ' : ''}<code>${v}</code>`)}. Lists: <code>ip in list('blocked_ips')</code>.</p></details>`;
}

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
      { label: 'Mode', cell: (r) => status(r.mode) },
      { label: 'Priority', cell: (r) => r.priority },
    ],
  });
}

export async function registerRiskRulesConsoleRoutes(
  app: FastifyInstance,
  deps: PlatformConsoleDeps,
): Promise<void> {
  const { db, risk, clock } = deps.services;

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
      h`${riskTabs()}${doneNotice(f.done)}<p>${link('/console/risk/rules/new', 'New rule…')} ${link('/console/risk/backtest', 'Backtest a draft…')}</p>${filters}${ruleTable(rules, more)}`,
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
      explain: h`${riskTabs()}<p>A rule is checked against its decision point’s attributes when saved. Start it in shadow: it is evaluated and recorded, never acting, and its decisions show what it would do.</p>`,
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
    const content = h`${riskTabs()}${doneNotice(textQuery(request).done)}${details([
      ['Scope', rule.scope],
      ['Decision point', rule.decisionPoint],
      ['Expression', h`<code>${rule.expression}</code>`],
      ['Action', rule.action],
      ['Mode', status(rule.mode)],
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

  // A draft over a tenant's history: the form, then its answer with the form again to change and rerun.
  const backtestFields = (request: FastifyRequest): FormField[] => {
    const viewer = viewerOf(request, deps);
    const q = { ...textQuery(request), ...textBody(request) };
    const today = clock.now().toISOString().slice(0, 10);
    const monthAgo = new Date(clock.now().getTime() - 30 * 86_400_000).toISOString().slice(0, 10);
    return [
      ...(viewer.role === 'operator'
        ? [
            {
              name: 'scope',
              label: 'Tenant (merchant:ID, store:ID, partner:ID)',
              value: q.scope ?? '',
              required: true,
            },
          ]
        : []),
      {
        name: 'decisionPoint',
        label: 'Decision point',
        options: pointsFor(viewer),
        value: q.decisionPoint ?? '',
      },
      {
        name: 'expression',
        label: 'Expression (CEL)',
        type: 'textarea',
        value: q.expression ?? '',
        required: true,
      },
      { name: 'from', label: 'From (UTC day)', type: 'date', value: q.from ?? monthAgo },
      { name: 'to', label: 'To (UTC day, included)', type: 'date', value: q.to ?? today },
    ];
  };
  const dayField = z.iso.date();
  const backtest = confirmedAction<Record<string, never>>(
    deps,
    async (request) => ({
      title: 'Backtest a draft rule',
      explain: h`${riskTabs()}<p>The draft is evaluated over the tenant’s decisions of the period, each with the attribute values recorded at the time and velocity as it stood then. Disputes later received are its labels.</p>`,
      fields: backtestFields(request),
      submit: 'Run backtest',
      trailer: attributeReference(pointsFor(viewerOf(request, deps))),
    }),
    async (request, _params, body) => {
      const viewer = viewerOf(request, deps);
      const point = pointOf(viewer, body.decisionPoint);
      const expression = fieldOf(expressionField, body, 'expression');
      const from = new Date(`${fieldOf(dayField, body, 'from')}T00:00:00Z`);
      const to = new Date(new Date(`${fieldOf(dayField, body, 'to')}T00:00:00Z`).getTime() + 86_400_000 - 1);
      const tenant = await writeScope(db, viewer, body.scope, point);
      if (tenant === 'platform')
        throw new DomainError('validation_failed', 'a backtest reads one tenant’s history: name it', {
          field: 'scope',
        });
      const result = await risk.backtest(db, {
        tenant,
        decisionPoint: point,
        expression,
        from,
        to,
        sampleSize: 20,
      });
      const save = `/console/risk/rules/new?${new URLSearchParams({ decisionPoint: point, expression, ...(viewer.role === 'operator' ? { scope: tenant } : {}) })}`;
      const share = (part: number, all: number) =>
        all === 0 ? '—' : `${part} of ${all} (${((part * 100) / all).toFixed(1)} %)`;
      return {
        title: 'Backtest',
        content: h`${riskTabs()}<p><code>${expression}</code> at ${point} for ${tenant}, ${from.toISOString().slice(0, 10)} to ${to.toISOString().slice(0, 10)}.</p>${details(
          [
            ['Evaluated', result.evaluated],
            ['Would have matched', share(result.matched, result.evaluated)],
            [
              'Their amounts',
              Object.entries(result.matchedAmounts)
                .map(([c, a]) => money(a, c))
                .join(', ') || '—',
            ],
            [
              'Disputed later',
              `${share(result.disputed.matched, result.matched)} matched; ${result.disputed.all} of all`,
            ],
            [
              'Disputed as fraud',
              `${share(result.fraud.matched, result.matched)} matched; ${result.fraud.all} of all`,
            ],
            ['Failed to evaluate', result.failed],
          ],
        )}<p>${link(save, 'Save it as a rule…')}</p>${listView({
          caption: 'A sample of what it matched',
          rows: result.sample,
          empty: 'It matched nothing in the period.',
          columns: [
            {
              label: 'Object',
              cell: (s) => link(`/console/search?q=${encodeURIComponent(s.objectId)}`, s.objectId),
            },
            { label: 'At', cell: (s) => when(s.at) },
            { label: 'Amount', cell: (s) => money(s.amount, s.currency) },
          ],
        })}<h2>Change it and run it again</h2>${postForm(contextOf(request, deps), '/console/risk/backtest', backtestFields(request), 'Run backtest', { idempotent: true })}`,
      };
    },
  );
  app.get('/risk/backtest', backtest.get);
  app.post('/risk/backtest', backtest.post);
}
