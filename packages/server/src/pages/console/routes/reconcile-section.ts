// Console › Money out › Reports, the reconciliation part (docs/payouts.md, Reconciliation): the newest run's
// result and when it ran, read from reconcile_runs; the page runs nothing. "Reconcile now" runs it for
// today (from the newest day proved) and comes back to the page.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { contextOf } from '../../../platform/console/console-http.ts';
import { details, listView, notice, postForm } from '../../../platform/console/console-layout.ts';
import { type Html, h } from '../../../platform/console/html-template.ts';
import { viewerOf } from '../../../platform/console/route-kit.ts';
import { when } from '../../../platform/console/values.ts';
import type { Db } from '../../../platform/db/database.ts';
import { notFound } from '../../../platform/errors/domain-error.ts';
import { lastReconcileRun, reconcile } from '../../../platform/payouts/reconcile.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';
import { ownersOf } from '../reads/payouts-reads.ts';

export async function reconcileSection(
  db: Db,
  request: FastifyRequest,
  deps: PlatformConsoleDeps,
): Promise<Html> {
  const run = await lastReconcileRun(db);
  const ctx = contextOf(request, deps);
  const action = postForm(ctx, '/console/money/reports/reconcile', [], 'Reconcile now', { secondary: true });
  if (!run) return h`<h2>Reconciliation</h2>${notice('Not run yet.')}${action}`;
  return h`<h2>Reconciliation, ${run.date}</h2>${details([
    ['Result', run.clean ? 'clean' : `${run.findings.length} findings`],
    [
      'Ran',
      h`${when(run.ranAt)} (${run.full ? 'every day proved again' : 'from the newest day proved'}, ${String(run.durationMs)} ms)`,
    ],
    ...Object.entries(run.checked).map(([check, n]): [string, string] => [
      check.replace(/_/g, ' '),
      `${n} checked`,
    ]),
  ])}${listView({
    caption: 'Findings',
    rows: run.findings,
    empty: 'Nothing to look at.',
    columns: [
      { label: 'Check', cell: (f) => f.check },
      { label: 'Subject', cell: (f) => f.subject },
      { label: 'Expected', cell: (f) => f.expected },
      { label: 'Found', cell: (f) => f.actual },
    ],
  })}${action}`;
}

export function registerReconcileRoute(app: FastifyInstance, deps: PlatformConsoleDeps): void {
  const { db, clock } = deps.services;
  app.post('/money/reports/reconcile', { config: { idempotency: 'refuse' } }, async (request, reply) => {
    // The operator's, as the section is (a tenant's member sees its own balance report only).
    if ((await ownersOf(db, viewerOf(request, deps))) !== 'all') throw notFound('page');
    const now = clock.now();
    await reconcile(db, now.toISOString().slice(0, 10), { now });
    return reply.code(303).header('location', '/console/money/reports').send();
  });
}
