// Money out under random histories (docs/payouts.md): captures at random prices, full and partial
// refunds, chargebacks and the network's decisions (docs/payments.md, Disputes), payouts on demand and by
// schedule, the bank's returns and rejections, jumps of the sandbox clock and restarts of the process. After every history the ledger's invariants hold, every site's
// balance is what a model of the history says (to the cent), every payout's report sums to it, and
// `reconcile` is clean.
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';
import { aCustomer, aMerchant, anOrder, payments, type TestMerchant } from '../harness/payments-builders.ts';

// Each restart is a new process that leases a fresh slice of the operator token's rate limit (2 %):
// keep runs × restarts under 50 a minute, or raise the limit further.
const RUNS = Number(process.env.TESSERA_PROPERTY_RUNS ?? 6);
const DAY = 86_400;
let h: Harness;

beforeAll(async () => {
  // Many histories send many requests with one operator token.
  h = await Harness.start({ env: { TESSERA_RATE_LIMIT_PER_MINUTE: '1000000' } });
});
afterAll(() => h.close());

type Step =
  | { kind: 'capture'; site: number; cents: number }
  | { kind: 'refund'; pick: number; part: number }
  | { kind: 'advance'; seconds: number }
  | { kind: 'payNow'; site: number }
  | { kind: 'payAmount'; site: number; part: number }
  | { kind: 'run' }
  | { kind: 'bank'; pick: number; action: 'return' | 'reject' }
  | { kind: 'restart' }
  | { kind: 'chargeback'; pick: number; part: number }
  | { kind: 'decide'; pick: number; won: boolean };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('capture' as const),
      site: fc.nat(1),
      cents: fc.integer({ min: 1, max: 50_000 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      pick: fc.nat(),
      part: fc.integer({ min: 1, max: 100 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      seconds: fc.constantFrom(60, DAY / 2, DAY, 2 * DAY + 1, 3 * DAY),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('payNow' as const), site: fc.nat(1) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('payAmount' as const),
      site: fc.nat(1),
      part: fc.integer({ min: 1, max: 100 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'run' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('bank' as const),
      pick: fc.nat(),
      action: fc.constantFrom('return' as const, 'reject' as const),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('chargeback' as const),
      pick: fc.nat(),
      part: fc.integer({ min: 1, max: 100 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('decide' as const), pick: fc.nat(), won: fc.boolean() }),
  },
);
/** The dispute fee (TESSERA_DISPUTE_FEE, 15 EUR) */
const DISPUTE_FEE = 1_500n;

const euros = (minor: bigint) => {
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(3, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
};
const cents = (text: string) => BigInt(text.replace('.', ''));

/** What the history should have left each site: captures net of fees, less refunds and live payouts. */
class Model {
  captured: { site: number; transactionId: number; left: bigint; disputed: boolean }[] = [];
  disputes: {
    id: number;
    captured: Model['captured'][number];
    amount: bigint;
    uncovered: bigint;
    open: boolean;
  }[] = [];
  total = [0n, 0n];
  constructor(readonly pricing: { bps: bigint; fixed: bigint }[]) {}
  fee(site: number, amount: bigint) {
    const p = this.pricing[site] as { bps: bigint; fixed: bigint };
    const fee = (amount * p.bps + 5_000n) / 10_000n + p.fixed;
    return fee > amount ? amount : fee;
  }
}

describe('money out over random histories', () => {
  it('keeps the ledger, the balances, the reports and reconcile exact', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 5, maxLength: 25 }),
        fc.array(
          fc.record({
            bps: fc.integer({ min: 0, max: 500 }),
            fixed: fc.integer({ min: 0, max: 50 }),
            reserve: fc.constantFrom(0, 5, 10),
          }),
          {
            minLength: 2,
            maxLength: 2,
          },
        ),
        async (steps, prices) => {
          const m: TestMerchant = await aMerchant(h, { sites: 2 });
          const sites = m.sites.map((s) => s.id);
          const model = new Model(prices.map((p) => ({ bps: BigInt(p.bps), fixed: BigInt(p.fixed) })));
          for (const [i, siteId] of sites.entries()) {
            const p = prices[i] as { bps: number; fixed: number; reserve: number };
            await h.admin('PUT', `/merchants/${m.id}/sites/${siteId}/pricing`, {
              json: { percentBps: p.bps, fixed: { EUR: euros(BigInt(p.fixed)) } },
            });
            await h.admin('PUT', `/merchants/${m.id}/sites/${siteId}/payout-schedule`, {
              json: { interval: 'daily', delayDays: 1, reservePercent: String(p.reserve), reserveDays: 2 },
            });
            await h.admin('PUT', `/merchants/${m.id}/sites/${siteId}/bank-account`, {
              json: { iban: 'DE89370400440532013000', holderName: `Site ${i}` },
            });
          }
          const customers = [
            await aCustomer(h, m, { siteId: String(sites[0]) }),
            await aCustomer(h, m, { siteId: String(sites[1]) }),
          ];
          for (const s of steps) {
            switch (s.kind) {
              case 'capture': {
                const amount = BigInt(s.cents);
                const order = await payments(
                  h,
                  m,
                  'POST',
                  '/order',
                  anOrder(customers[s.site] as number, {
                    siteId: String(sites[s.site]),
                    amount: euros(amount),
                  }),
                );
                // The simulated issuer declines some (a repeated small amount looks like card testing).
                if (order.status === 402) break;
                expect(order.status, order.text).toBe(201);
                model.captured.push({
                  site: s.site,
                  transactionId: order.body.data.transactionId,
                  left: amount,
                  disputed: false,
                });
                model.total[s.site] = (model.total[s.site] as bigint) + amount - model.fee(s.site, amount);
                break;
              }
              case 'refund': {
                const open = model.captured.filter((c) => c.left > 0n);
                const c = open[s.pick % Math.max(open.length, 1)];
                if (!c) break;
                if (c.disputed) await syncDecisions(h, m, model);
                const amount = (c.left * BigInt(s.part)) / 100n || c.left;
                const refund = await payments(h, m, 'DELETE', `/transaction/${c.transactionId}`, {
                  amount: euros(amount),
                });
                // Refused only when the site's whole balance (pending included) is short, or while the
                // payment is disputed: nothing changed then.
                if (c.disputed) expect(refund.status, refund.text).toBe(409);
                if (refund.status === 200) {
                  c.left -= amount;
                  model.total[c.site] = (model.total[c.site] as bigint) - amount;
                } else {
                  expect(refund.status, refund.text).toBe(409);
                }
                break;
              }
              case 'advance':
                await h.advanceClock(s.seconds);
                break;
              case 'payNow':
              case 'payAmount': {
                const siteId = sites[s.site] as number;
                const balance = await payments(h, m, 'GET', `/balance?siteId=${siteId}`);
                const available = cents(balance.body.data[0]?.available ?? '0.00');
                const amount = s.kind === 'payAmount' ? (available * BigInt(s.part)) / 100n : undefined;
                const made = await payments(h, m, 'POST', '/payout', {
                  siteId: String(siteId),
                  currency: 'EUR',
                  ...(amount !== undefined ? { amount: euros(amount) } : {}),
                });
                if (available > 0n && (amount === undefined || amount > 0n)) {
                  expect(made.status, made.text).toBe(201);
                  model.total[s.site] = (model.total[s.site] as bigint) - cents(made.body.data.amount);
                } else {
                  expect(made.status, made.text).toBe(400);
                }
                break;
              }
              case 'run':
                // Scheduled payouts (these, and the sweeps' own during clock jumps) are counted at the end.
                expect((await h.admin('POST', '/payout-runs')).status).toBe(200);
                break;
              case 'bank': {
                const all = (
                  await Promise.all(
                    sites.map(
                      async (siteId) => (await payments(h, m, 'GET', `/payout?siteId=${siteId}`)).body.data,
                    ),
                  )
                ).flat() as {
                  id: string;
                  status: string;
                  siteId: number;
                  amount: string;
                }[];
                const able = all.filter((p) =>
                  (s.action === 'return' ? ['in_transit', 'paid'] : ['pending', 'in_transit']).includes(
                    p.status,
                  ),
                );
                const p = able[s.pick % Math.max(able.length, 1)];
                if (!p) break;
                const answer = await h.request('POST', `/sandbox/bank/payouts/${p.id}/${s.action}`, {
                  headers: { authorization: `Bearer ${h.adminToken}` },
                  json: { reasonCode: 'AC04' },
                });
                expect(answer.status, answer.text).toBe(200);
                const site = sites.indexOf(p.siteId);
                model.total[site] = (model.total[site] as bigint) + cents(p.amount);
                break;
              }
              case 'restart':
                await h.restart();
                break;
              case 'chargeback': {
                const open = model.captured.filter((c) => c.left > 0n && !c.disputed);
                const c = open[s.pick % Math.max(open.length, 1)];
                if (!c) break;
                const amount = (c.left * BigInt(s.part)) / 100n || c.left;
                // The site's whole balance pays the amount first, then the fee; what it lacks of the amount
                // is the platform's claim, what it lacks of the fee is not charged.
                const siteId = sites[c.site] as number;
                const now = (await payments(h, m, 'GET', `/balance?siteId=${siteId}`)).body.data[0];
                const balance = now ? cents(now.available) + cents(now.pending) + cents(now.reserved) : 0n;
                const amountTaken = balance <= 0n ? 0n : balance < amount ? balance : amount;
                const rest = balance - amountTaken;
                const feeTaken = rest <= 0n ? 0n : rest < DISPUTE_FEE ? rest : DISPUTE_FEE;
                const raised = await h.request<{ disputeId: number }>(
                  'POST',
                  `/sandbox/payments/transactions/${c.transactionId}/chargeback`,
                  {
                    headers: { authorization: `Bearer ${h.adminToken}` },
                    json: { reasonCode: '10.4', amount: euros(amount) },
                  },
                );
                expect(raised.status, raised.text).toBe(201);
                c.left -= amount;
                c.disputed = true;
                model.total[c.site] = (model.total[c.site] as bigint) - amountTaken - feeTaken;
                model.disputes.push({
                  id: raised.body.disputeId,
                  captured: c,
                  amount,
                  uncovered: amount - amountTaken,
                  open: true,
                });
                break;
              }
              case 'decide': {
                const d = model.disputes[s.pick % Math.max(model.disputes.length, 1)];
                if (!d) break;
                const decided = await h.request('POST', `/sandbox/payments/disputes/${d.id}/decide`, {
                  headers: { authorization: `Bearer ${h.adminToken}` },
                  json: { outcome: s.won ? 'won' : 'lost' },
                });
                // The sweeps decide too (lost at the deadline, won after review): a decided one is a 409.
                if (decided.status === 409) {
                  const now = (await payments(h, m, 'GET', `/dispute/${d.id}`)).body.data;
                  if (d.open) settle(model, d, now.status === 'won');
                  break;
                }
                expect(decided.status, decided.text).toBe(200);
                settle(model, d, s.won);
                break;
              }
            }
          }
          await syncDecisions(h, m, model);
          for (const [i, siteId] of sites.entries()) {
            const listed = (await payments(h, m, 'GET', `/payout?siteId=${siteId}`)).body.data as {
              id: string;
              amount: string;
              status: string;
              itemized: boolean;
            }[];
            const balance = (await payments(h, m, 'GET', `/balance?siteId=${siteId}`)).body.data[0] ?? {
              available: '0.00',
              pending: '0.00',
              reserved: '0.00',
            };
            const total = cents(balance.available) + cents(balance.pending) + cents(balance.reserved);
            const swept = await h.services.db
              .selectFrom('payouts')
              .select('amount')
              .where('owner', '=', `site:${siteId}`)
              .where('scheduled_for', 'is not', null)
              .execute();
            // Every scheduled payout took its amount out (a returned or rejected one was given back above).
            const scheduled = swept.reduce((sum, p) => sum + BigInt(p.amount), 0n);
            expect(total, `site ${i}`).toBe((model.total[i] as bigint) - scheduled);
            for (const payout of listed.filter((p) => p.itemized)) {
              const report = await h.request('GET', `/payments/payout/${payout.id}/report`, {
                headers: m.auth,
              });
              const nets = report.text
                .trimEnd()
                .split('\r\n')
                .slice(1)
                .map((line) => cents(line.split(',')[9] as string));
              expect(nets.reduce((a, b) => a + b, 0n)).toBe(cents(payout.amount));
            }
          }
          await expectLedgerInvariants(h);
          const today = h.services.clock.now().toISOString().slice(0, 10);
          await expectReportsAreSums(m, sites, today);
          // From the newest day proved, and every day again from the first: the same, clean.
          for (const full of ['false', 'true']) {
            const reconciled = await h.admin<{ clean: boolean; findings: unknown[] }>(
              'GET',
              `/reconcile?date=${today}&full=${full}`,
            );
            expect(reconciled.body.findings).toEqual([]);
          }
          // A day and seven hours on, every day of the history is summed (and summed again): the same sums.
          await h.advanceClock(DAY + 7 * 3600);
          const summed = await h.services.db
            .selectFrom('balance_days')
            .select('day')
            .where(
              'owner',
              'in',
              sites.map((siteId) => `site:${siteId}`),
            )
            .execute();
          if (model.captured.length > 0) expect(summed.length).toBeGreaterThan(0);
          await expectReportsAreSums(m, sites, h.services.clock.now().toISOString().slice(0, 10));
        },
      ),
      { numRuns: RUNS },
    );
  }, 300_000);
});

/**
 * The balance by day and the revenue report (days the balance-days sweep summed, the rest from the rows)
 * equal the sums over the balance transactions, to the cent, for every day since the history began.
 */
async function expectReportsAreSums(m: TestMerchant, sites: number[], today: string): Promise<void> {
  const owners = sites.map((siteId) => `site:${siteId}`);
  const first = await h.services.db
    .selectFrom('balance_transactions')
    .select((eb) => eb.fn.min('created_at').as('at'))
    .where('owner', 'in', owners)
    .executeTakeFirst();
  if (!first?.at) return;
  const from = new Date(first.at).toISOString().slice(0, 10);
  const { rows } = await sql<{
    owner: string;
    day: string;
    gross: string;
    fee: string;
    net: string;
    fees: string;
  }>`
    SELECT owner, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, sum(gross)::text AS gross,
      sum(fee)::text AS fee, sum(net)::text AS net, count(*) FILTER (WHERE fee <> 0)::text AS fees
    FROM balance_transactions WHERE owner = ANY(${owners}) GROUP BY 1, 2 ORDER BY 1, 2`.execute(
    h.services.db,
  );
  for (const [i, siteId] of sites.entries()) {
    const report = await h.request(
      'GET',
      `/payments/balance/report?siteId=${siteId}&from=${from}&to=${today}`,
      {
        headers: m.auth,
      },
    );
    expect(report.status, report.text).toBe(200);
    let closing = 0n;
    const expected = ['date,currency,gross,fee,net,closing_balance'];
    const mine = rows.filter((r) => r.owner === owners[i]);
    for (
      let day = from;
      day <= today;
      day = new Date(Date.parse(day) + DAY * 1000).toISOString().slice(0, 10)
    ) {
      const row = mine.find((r) => r.day === day);
      closing += BigInt(row?.net ?? 0);
      if (mine.some((r) => r.day <= today)) {
        expected.push(
          [
            day,
            'EUR',
            ...[row?.gross ?? '0', row?.fee ?? '0', row?.net ?? '0', closing].map((v) => euros(BigInt(v))),
          ].join(','),
        );
      }
    }
    expect(report.text.trimEnd().split('\r\n'), `site ${i}`).toEqual(
      mine.length ? expected : expected.slice(0, 1),
    );
  }
  const revenue = await h.request('GET', `/admin/reports/revenue?from=${from}&to=${today}`, {
    headers: { authorization: `Bearer ${h.adminToken}` },
  });
  const mineOnly = revenue.text
    .trimEnd()
    .split('\r\n')
    .slice(1)
    .filter((line) => owners.includes(line.split(',')[1] as string));
  expect(mineOnly).toEqual(
    rows
      .filter((r) => r.fees !== '0')
      .map((r) => [r.day, r.owner, 'EUR', euros(BigInt(r.fee)), r.fees].join(','))
      .sort(),
  );
}

/** A dispute decided: won gives the amount back (what the site did not cover repaid to the platform first). */
function settle(model: Model, d: Model['disputes'][number], won: boolean): void {
  d.open = false;
  d.captured.disputed = false;
  if (!won) return;
  d.captured.left += d.amount;
  const repaid = d.uncovered < d.amount ? d.uncovered : d.amount;
  model.total[d.captured.site] = (model.total[d.captured.site] as bigint) + d.amount - repaid;
}

/** Disputes the sweeps decided during clock jumps (lost at the deadline, won after review), settled in the model. */
async function syncDecisions(h: Harness, m: TestMerchant, model: Model): Promise<void> {
  for (const d of model.disputes.filter((x) => x.open)) {
    const now = (await payments(h, m, 'GET', `/dispute/${d.id}`)).body.data;
    if (now.status === 'won' || now.status === 'lost') settle(model, d, now.status === 'won');
  }
}
