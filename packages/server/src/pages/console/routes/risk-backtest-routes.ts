// Console › Risk › Backtest (docs/risk.md, Console): a draft rule over one tenant's days, each decision
// with the attribute values recorded at the time and velocity as it stood then (the same backtest as the
// admin API's), answered with its catch, its cost in disputes and a sample, and the form again to change it.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { contextOf } from '../../../platform/console/console-http.ts';
import {
  details,
  type FormField,
  link,
  listView,
  postForm,
} from '../../../platform/console/console-layout.ts';
import { h } from '../../../platform/console/html-template.ts';
import {
  confirmedAction,
  fieldOf,
  textBody,
  textQuery,
  viewerOf,
} from '../../../platform/console/route-kit.ts';
import { money, when } from '../../../platform/console/values.ts';
import { DomainError } from '../../../platform/errors/domain-error.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';
import {
  attributeReference,
  decidedObject,
  expressionField,
  pointOf,
  pointsFor,
  riskTabs,
  writeScope,
} from './risk-console-kit.ts';

export async function registerRiskBacktestConsoleRoutes(
  app: FastifyInstance,
  deps: PlatformConsoleDeps,
): Promise<void> {
  const { db, risk, clock } = deps.services;

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
      explain: h`${riskTabs('rules')}<p>The draft is evaluated over the tenant’s decisions of the period, each with the attribute values recorded at the time and velocity as it stood then. Disputes later received are its labels.</p>`,
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
        content: h`${riskTabs('rules')}<p><code>${expression}</code> at ${point} for ${tenant}, ${from.toISOString().slice(0, 10)} to ${to.toISOString().slice(0, 10)}.</p>${details(
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
            [
              'Judged',
              result.judgedIn === 'database'
                ? `in the database${result.parts > 1 ? `, in ${result.parts} slices of the period at once` : ''}`
                : 'signal by signal in the process (a part of the expression with no exact SQL form reads more than one attribute, or velocity; slower)',
            ],
          ],
        )}<p>${link(save, 'Save it as a rule…')}</p>${listView({
          caption: 'A sample of what it matched',
          rows: result.sample,
          empty: 'It matched nothing in the period.',
          columns: [
            {
              label: 'Object',
              cell: (s) => decidedObject(point, s.objectId),
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
