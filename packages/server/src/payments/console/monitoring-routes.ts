// Console › Payments › Dispute monitoring (docs/risk.md, Monitoring): each merchant's month — disputes
// received against payments settled, all and fraud, by count and by amount per currency — beside the card
// schemes' monitoring levels it reaches; the same read as the metric the alert watches. An operator sees
// every merchant with a dispute that month, a merchant's member only their own.
import type { FastifyInstance } from 'fastify';
import { sendConsolePage } from '../../platform/console/console-http.ts';
import { filterForm, listView, notice } from '../../platform/console/console-layout.ts';
import { h } from '../../platform/console/html-template.ts';
import { textQuery, viewerOf } from '../../platform/console/route-kit.ts';
import { money } from '../../platform/console/values.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { levelsReached, monthDisputes, ratio, SCHEME_LEVELS } from '../risk/dispute-ratios.ts';
import type { PaymentsConsoleDeps } from './console-deps.ts';

const percent = (part: number | bigint, whole: number | bigint) =>
  `${(ratio(part, whole) * 100).toFixed(2)} %`;

export async function registerMonitoringConsoleRoutes(
  app: FastifyInstance,
  deps: PaymentsConsoleDeps,
): Promise<void> {
  const { db, clock } = deps.services;

  app.get('/payments/monitoring', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    if (viewer.role !== 'operator' && viewer.tenant.kind !== 'merchant')
      throw new DomainError('not_found', 'page not found');
    const f = textQuery(request);
    const now = clock.now();
    const thisMonth = now.toISOString().slice(0, 7);
    const month =
      f.month && /^\d{4}-(0[1-9]|1[0-2])$/.test(f.month) && f.month <= thisMonth ? f.month : thisMonth;
    // A past month is read to its last instant; this one up to now.
    const [year, monthNumber] = month.split('-').map(Number) as [number, number];
    const until = month === thisMonth ? now : new Date(Date.UTC(year, monthNumber, 1) - 1);
    const rows = await monthDisputes(
      db,
      until,
      viewer.role === 'operator' ? undefined : Number(viewer.tenant.id),
    );
    const reached = rows.filter((m) => levelsReached(m).length > 0).length;
    const table = listView({
      caption: `Disputes received in ${month} against payments settled in ${month}, the highest ratio first`,
      rows,
      empty: 'No disputes this month.',
      columns: [
        { label: 'Merchant', cell: (m) => m.merchantId },
        { label: 'Disputes', cell: (m) => `${m.disputes} (${m.fraudDisputes} fraud)` },
        { label: 'Payments settled', cell: (m) => m.payments },
        {
          label: 'Ratio by count',
          cell: (m) =>
            h`${percent(m.disputes, m.payments)} <small>fraud ${percent(m.fraudDisputes, m.payments)}</small>`,
        },
        {
          label: 'By amount',
          cell: (m) =>
            h`${m.amounts.map(
              (a) =>
                h`<span class="filter-field">${money(a.disputed, a.currency)} of ${money(a.settled, a.currency)}: ${percent(a.disputed, a.settled)} <small>fraud ${percent(a.fraud, a.settled)}</small></span>`,
            )}`,
        },
        { label: 'Levels reached', cell: (m) => levelsReached(m).join('; ') || 'none' },
      ],
    });
    const levels = listView({
      caption: 'The card schemes’ monitoring levels',
      rows: [...SCHEME_LEVELS],
      columns: [
        { label: 'Program', cell: (l) => l.program },
        {
          label: 'Counts',
          cell: (l) =>
            l.basis === 'count' ? 'disputes over payments, by count' : 'fraud disputes over sales, by amount',
        },
        {
          label: 'Level',
          cell: (l) =>
            `${(l.ratio * 100).toFixed(1)} %${l.atLeast > 1 ? ` and ${l.atLeast.toLocaleString('en')} disputes` : ''}`,
        },
      ],
    });
    const filters = filterForm(
      '/console/payments/monitoring',
      [{ name: 'month', label: 'Month (YYYY-MM)' }],
      { month },
    );
    const warning =
      reached > 0
        ? notice(
            `${reached} merchant${reached === 1 ? '' : 's'} at a scheme’s monitoring level this month.`,
            'error',
          )
        : '';
    return sendConsolePage(
      request,
      reply,
      deps,
      'Dispute monitoring',
      h`${filters}${warning}${table}${levels}`,
    );
  });
}
