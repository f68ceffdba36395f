// Console › Overview: how the business is doing over a chosen period beside the period before (payments
// succeeded, volume, success rate, refunds, disputes; per day drawn with uPlot), the money and the next
// payout, and what needs a person now (for an operator, the tenants with the most waiting); and the search
// box's answer (one match opens it; several are listed).

import type { FastifyInstance } from 'fastify';
import { sendConsolePage } from '../../../platform/console/console-http.ts';
import { link, listView } from '../../../platform/console/console-layout.ts';
import { sees } from '../../../platform/console/console-scope.ts';
import { h, trusted } from '../../../platform/console/html-template.ts';
import { disputeReasonLabel } from '../../../platform/console/labels.ts';
import { textQuery, viewerOf } from '../../../platform/console/route-kit.ts';
import { money, objectLink, when } from '../../../platform/console/values.ts';
import { formatAmountIn } from '../../../platform/money/amount.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';
import { moneyAhead } from '../reads/money-ahead.ts';
import { disputesDue, needsAttention, tenantsNeedingAttention } from '../reads/needs-attention.ts';
import { type DayFigure, dailyFigures } from '../reads/overview-reads.ts';
import { findById } from '../reads/search.ts';

const PERIODS = { '7': 7, '30': 30, '90': 90 } as const;
/** The disputes due and the tenants waiting the overview lists (each list's page has the rest) */
const LISTED = 5;
const TENANTS_LISTED = 10;

export async function registerOverviewRoutes(app: FastifyInstance, deps: PlatformConsoleDeps): Promise<void> {
  const { db, clock, ledger, moneyOut } = deps.services;

  app.get('/', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const period = PERIODS[(textQuery(request).days ?? '30') as keyof typeof PERIODS] ?? 30;
    // Days end at the platform's "now" (the sandbox clock when it was advanced).
    const until = new Date(clock.now().getTime() + 86_400_000);
    until.setUTCHours(0, 0, 0, 0);
    const since = new Date(until.getTime() - period * 86_400_000);
    // The period before, as long, read with it: how the business is doing is a comparison
    const [both, attention, due, tenants, balances] = await Promise.all([
      dailyFigures(db, viewer, new Date(since.getTime() - period * 86_400_000), until),
      needsAttention(db, viewer),
      disputesDue(db, viewer, LISTED),
      viewer.role === 'operator' ? tenantsNeedingAttention(db, TENANTS_LISTED) : Promise.resolve([]),
      moneyAhead({ db, ledger, terms: moneyOut.terms }, viewer, clock.now()),
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
        now: noFigures(),
        before: noFigures(),
      };
      const into = t[to];
      into.count += f.count;
      into.volume += BigInt(f.volume);
      into.failed += f.failed;
      into.refunds += f.refunds;
      into.refundVolume += BigInt(f.refund_volume);
      into.disputes += f.disputes;
      into.disputeVolume += BigInt(f.dispute_volume);
      totals.set(key, t);
    };
    for (const f of figures) add(f, 'now');
    for (const f of before) add(f, 'before');
    return sendConsolePage(
      request,
      reply,
      deps,
      'Overview',
      h`
<form class="filters" method="get" action="/console"><span class="filter-field"><label for="days">Period</label>
<select id="days" name="days">${Object.keys(PERIODS).map((d) => h`<option value="${d}"${Number(d) === period ? h` selected` : ''}>last ${d} days</option>`)}</select></span>
<button type="submit">Show</button></form>
<h2>Needs your attention</h2>
<div class="cards">
${card('Open disputes', 'open-disputes', attention.openDisputes, '/console/payments/disputes', sees(viewer, 'merchant'))}
${card('Reviews held by a risk rule', 'pending-reviews', attention.pendingReviews, '/console/risk/reviews')}
${card('Waiting for a second person', 'pending-approvals', attention.pendingApprovals, '/console/approvals?status=pending', viewer.role === 'operator' || viewer.tenant.kind !== 'partner')}
${card('Failed webhooks', 'failed-webhooks', attention.failedWebhooks, '/console/developers/events?delivery=failed')}
${card('Open 3-D Secure challenges', 'open-challenges', attention.openChallenges, '/console/issuing/challenges?status=pending', sees(viewer, 'partner'))}
${card('Refund proposals awaiting the buyer', 'refund-proposals', attention.refundProposals, '/console/crypto/refunds?status=proposed', sees(viewer, 'store'))}
</div>
${
  due.length
    ? listView({
        caption: 'Disputes to answer, nearest deadline first',
        rows: due,
        columns: [
          {
            label: 'Dispute',
            cell: (d) => link(`/console/payments/disputes/${d.id}`, money(d.amount, d.currency)),
          },
          { label: 'Reason', cell: (d) => disputeReasonLabel(d.network, d.reason_code) },
          { label: 'Answer by', cell: (d) => when(d.evidence_due_at) },
        ],
      })
    : ''
}
${
  viewer.role === 'operator'
    ? listView({
        caption: 'Tenants with the most waiting on them',
        rows: tenants,
        empty: 'No tenant has anything waiting.',
        columns: [
          {
            label: 'Tenant',
            cell: (t) => link(tenantHref(t.tenant), t.name ? `${t.name} (${t.tenant})` : t.tenant),
          },
          { label: 'Open disputes', cell: (t) => t.disputes },
          { label: 'Failed webhooks', cell: (t) => t.failedWebhooks },
          { label: 'Reviews', cell: (t) => t.reviews },
          { label: 'Approvals', cell: (t) => t.approvals },
        ],
      })
    : ''
}
<h2>How the business is doing</h2>
${listView({
  caption: `The last ${period} days, beside the ${period} days before`,
  rows: [...totals.values()],
  empty: 'No payments in this period or the one before.',
  columns: [
    { label: 'API', cell: (t) => t.api },
    {
      label: 'Succeeded',
      cell: (t) => withChange(String(t.now.count), BigInt(t.now.count), BigInt(t.before.count)),
    },
    {
      label: 'Volume',
      cell: (t) => withChange(money(t.now.volume, t.currency), t.now.volume, t.before.volume),
    },
    {
      label: 'Success rate',
      cell: (t) => `${rate(t.now.count, t.now.failed)} (before: ${rate(t.before.count, t.before.failed)})`,
    },
    {
      label: 'Refunds',
      cell: (t) =>
        t.api === 'payments' ? `${t.now.refunds} · ${money(t.now.refundVolume, t.currency)}` : '—',
    },
    {
      label: 'Disputes',
      cell: (t) =>
        t.api === 'payments' ? `${t.now.disputes} · ${money(t.now.disputeVolume, t.currency)}` : '—',
    },
  ],
})}
${
  balances.length
    ? h`<h2>Your money</h2>${listView({
        caption: 'Balances and the next scheduled payout',
        rows: balances,
        columns: [
          { label: 'Where', cell: (m) => (m.name ? `${m.name} (${m.key})` : m.key) },
          { label: 'Available', cell: (m) => money(m.available, m.currency) },
          { label: 'Pending', cell: (m) => money(m.pending, m.currency) },
          {
            label: 'Next payout',
            cell: (m) =>
              m.nextPayoutDay ? h`<time datetime="${m.nextPayoutDay}">${m.nextPayoutDay}</time>` : 'by hand',
          },
        ],
      })}${link('/console/money/balances', 'Balances and payouts')}`
    : ''
}
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
              { label: 'Open', cell: (f) => objectLink(f.kind, f.href, f.id) },
            ],
          }),
      found.length === 0 ? 404 : 200,
    );
  });
}

interface Figures {
  count: number;
  volume: bigint;
  failed: number;
  refunds: number;
  refundVolume: bigint;
  disputes: number;
  disputeVolume: bigint;
}

const noFigures = (): Figures => ({
  count: 0,
  volume: 0n,
  failed: 0,
  refunds: 0,
  refundVolume: 0n,
  disputes: 0,
  disputeVolume: 0n,
});

interface PeriodTotal {
  api: string;
  currency: string;
  now: Figures;
  before: Figures;
}

/** One "needs attention" card: its count and the list it opens; not shown where the viewer has no such thing */
function card(title: string, field: string, count: number, href: string, shown = true) {
  return shown
    ? h`<div class="card"><span>${title}</span><strong data-field="${field}">${count}</strong>${link(href, 'See them')}</div>`
    : '';
}

/** Where a tenant is shown: a merchant by its sites (as the search opens one), a store's and a partner's page */
function tenantHref(tenant: string): string {
  const [kind, id = ''] = tenant.split(':', 2);
  const at = encodeURIComponent(id);
  if (kind === 'merchant') return `/console/payments/sites?merchantId=${at}`;
  return kind === 'store' ? `/console/crypto/stores/${at}` : `/console/issuing/partners/${at}`;
}

const withChange = (shown: string, now: bigint, before: bigint) =>
  h`${shown} <small class="change">${change(now, before)}</small>`;

/** Succeeded over all that reached an outcome, in percent to one decimal, rounded toward zero; "—" for none */
export function rate(succeeded: number, failed: number): string {
  const all = BigInt(succeeded + failed);
  if (all === 0n) return '—';
  const permille = (BigInt(succeeded) * 1000n) / all;
  return `${permille / 10n}.${permille % 10n} %`;
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
