// Console › Overview (counts and volume per day and API over a chosen period, drawn with uPlot, and what
// needs a person now) and the search box's answer (one match opens it; several are listed).

import type { FastifyInstance } from 'fastify';
import { sendConsolePage } from '../../../platform/console/console-http.ts';
import { link, listView } from '../../../platform/console/console-layout.ts';
import { h, trusted } from '../../../platform/console/html-template.ts';
import { textQuery, viewerOf } from '../../../platform/console/route-kit.ts';
import { formatAmountIn } from '../../../platform/money/amount.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';
import { type DayFigure, dailyFigures, needsAttention } from '../reads/overview-reads.ts';
import { findById } from '../reads/search.ts';

const PERIODS = { '7': 7, '30': 30, '90': 90 } as const;

export async function registerOverviewRoutes(app: FastifyInstance, deps: PlatformConsoleDeps): Promise<void> {
  const { db, clock } = deps.services;

  app.get('/', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const period = PERIODS[(textQuery(request).days ?? '30') as keyof typeof PERIODS] ?? 30;
    // Days end at the platform's "now" (the sandbox clock when it was advanced).
    const until = new Date(clock.now().getTime() + 86_400_000);
    until.setUTCHours(0, 0, 0, 0);
    const since = new Date(until.getTime() - period * 86_400_000);
    // The period before, as long, read with it: how the business is doing is a comparison
    const [both, attention] = await Promise.all([
      dailyFigures(db, viewer, new Date(since.getTime() - period * 86_400_000), until),
      needsAttention(db, viewer),
    ]);
    const first = since.toISOString().slice(0, 10);
    const figures = both.filter((f) => f.day >= first);
    const before = both.filter((f) => f.day < first);
    const days = Array.from({ length: period }, (_, i) =>
      new Date(since.getTime() + i * 86_400_000).toISOString().slice(0, 10),
    );
    const chart = (id: string, pick: (f: DayFigure) => string, label: (f: DayFigure) => string) => {
      const series = new Map<string, string[]>();
      for (const f of figures) {
        const key = label(f);
        const values = series.get(key) ?? days.map(() => '0');
        values[days.indexOf(f.day)] = pick(f);
        series.set(key, values);
      }
      // Each series' total over the period (exact, summed here): what its legend shows until hovered.
      const data = {
        days,
        series: [...series].map(([name, values]) => ({ label: name, values, total: sumDecimals(values) })),
      };
      return h`<div class="chart" data-chart="${id}" role="img" aria-label="${id === 'counts' ? 'Payments per day' : 'Volume per day'}"></div>
<script type="application/json" id="${id}">${trusted(JSON.stringify(data).replace(/</g, '\\u003c'))}</script>`;
    };
    const totals = new Map<string, PeriodTotal>();
    const add = (f: DayFigure, to: 'now' | 'before') => {
      const key = `${f.api} ${f.currency}`;
      const t = totals.get(key) ?? {
        api: f.api,
        currency: f.currency,
        count: 0,
        volume: 0n,
        countBefore: 0,
        volumeBefore: 0n,
      };
      if (to === 'now') {
        t.count += f.count;
        t.volume += BigInt(f.volume);
      } else {
        t.countBefore += f.count;
        t.volumeBefore += BigInt(f.volume);
      }
      totals.set(key, t);
    };
    for (const f of figures) add(f, 'now');
    for (const f of before) add(f, 'before');
    const perApi = (api: string) => figures.filter((f) => f.api === api).reduce((n, f) => n + f.count, 0);
    return sendConsolePage(
      request,
      reply,
      deps,
      'Overview',
      h`
<form class="filters" method="get" action="/console"><span class="filter-field"><label for="days">Period</label>
<select id="days" name="days">${Object.keys(PERIODS).map((d) => h`<option value="${d}"${Number(d) === period ? h` selected` : ''}>last ${d} days</option>`)}</select></span>
<button type="submit">Show</button></form>
<div class="cards">
<div class="card"><span>Failed webhooks</span><strong data-field="failed-webhooks">${attention.failedWebhooks}</strong>${link('/console/developers/events?delivery=failed', 'See them')}</div>
<div class="card"><span>Open 3-D Secure challenges</span><strong data-field="open-challenges">${attention.openChallenges}</strong>${link('/console/issuing/challenges?status=pending', 'See them')}</div>
<div class="card"><span>Refund proposals awaiting the buyer</span><strong data-field="refund-proposals">${attention.refundProposals}</strong>${link('/console/crypto/refunds?status=proposed', 'See them')}</div>
<div class="card"><span>Open disputes (chargebacks)</span><strong data-field="open-disputes">${attention.openDisputes}</strong>${link('/console/payments/disputes', 'See them')}</div>
<div class="card"><span>Payments · crypto · issuing</span><strong>${perApi('payments')} · ${perApi('crypto')} · ${perApi('issuing')}</strong></div>
</div>
<h2>Successful payments per day</h2>${chart(
        'counts',
        (f) => String(f.count),
        (f) => `${f.api} ${f.currency}`,
      )}
<h2>Volume per day</h2>${chart(
        'volume',
        (f) => formatAmountIn(BigInt(f.volume), f.currency),
        (f) => `${f.api} ${f.currency}`,
      )}
${listView({
  caption: `Totals over the last ${period} days, beside the ${period} days before`,
  rows: [...totals.values()],
  empty: 'No payments in this period or the one before.',
  columns: [
    { label: 'API', cell: (t) => t.api },
    { label: 'Currency', cell: (t) => t.currency },
    { label: 'Payments', cell: (t) => t.count },
    { label: 'Volume', cell: (t) => `${formatAmountIn(t.volume, t.currency)} ${t.currency}` },
    { label: 'Payments before', cell: (t) => t.countBefore },
    { label: 'Volume before', cell: (t) => `${formatAmountIn(t.volumeBefore, t.currency)} ${t.currency}` },
    { label: 'Volume change', cell: (t) => change(t.volume, t.volumeBefore) },
  ],
})}
<link rel="stylesheet" href="/console/assets/uplot.css">
<script src="/console/assets/uplot.js"></script>`,
    );
  });

  app.get('/search', async (request, reply) => {
    const q = (textQuery(request).q ?? '').trim();
    const found = await findById(db, viewerOf(request, deps), q);
    const only = found[0];
    if (found.length === 1 && only) return reply.redirect(only.href, 303);
    return sendConsolePage(
      request,
      reply,
      deps,
      `Search: ${q}`,
      found.length === 0
        ? h`<p class="notice" role="status">Nothing you can see has the id “${q}”.</p>`
        : listView({
            caption: `Objects with the id ${q}`,
            rows: found,
            columns: [
              { label: 'What', cell: (f) => f.kind },
              { label: 'Open', cell: (f) => link(f.href, f.id) },
            ],
          }),
      found.length === 0 ? 404 : 200,
    );
  });
}

interface PeriodTotal {
  api: string;
  currency: string;
  count: number;
  volume: bigint;
  countBefore: number;
  volumeBefore: bigint;
}

/** A change in whole percent, exactly rounded toward zero ("+12 %", "−5 %"); "new" when there was none before */
export function change(now: bigint, before: bigint): string {
  if (before === 0n) return now === 0n ? '—' : 'new';
  const percent = ((now - before) * 100n) / before;
  return percent > 0n ? `+${percent} %` : percent < 0n ? `−${-percent} %` : '0 %';
}

/** The sum of decimal strings ("12.50", "3"), exactly, written with the most decimals among them. */
function sumDecimals(values: string[]): string {
  const scale = Math.max(0, ...values.map((v) => v.split('.')[1]?.length ?? 0));
  const units = values.reduce((sum, v) => {
    const [whole = '0', fraction = ''] = v.replace('-', '').split('.');
    const minor = BigInt(whole) * 10n ** BigInt(scale) + BigInt(fraction.padEnd(scale, '0') || '0');
    return sum + (v.startsWith('-') ? -minor : minor);
  }, 0n);
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const text = scale ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
  return negative ? `-${text}` : text;
}
