// The overview's figures come from the daily rollup once a day is LIVE_DAYS old (docs/scale.md): the
// same figures before and after the sweep froze a day, for the operator and for the tenant, and the
// rolled-up days one unbroken run.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextPayoutDay } from '../../src/pages/console/reads/money-ahead.ts';
import { dailyFigures, LIVE_DAYS } from '../../src/pages/console/reads/overview-reads.ts';
import { change, rate } from '../../src/pages/console/routes/overview-routes.ts';
import type { Viewer } from '../../src/platform/console/console-users.ts';
import { trusted } from '../../src/platform/console/html-template.ts';
import { tableText } from '../../src/platform/console/list-export.ts';
import { ConsoleClient } from '../harness/console-client.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, newCard, payments } from '../harness/payments-builders.ts';

let h: Harness;

beforeAll(async () => {
  h = await Harness.start();
});
afterAll(async () => {
  await h?.close();
});

const DAY = 86_400_000;

/** A merchant's admin as the reads see them (no session: the reads are called directly) */
const merchantMember = (id: number): Viewer => ({
  role: 'member',
  access: 'admin',
  userId: 'u',
  email: 'm@example.com',
  tenant: { kind: 'merchant', id: String(id) },
});

/** The page's table whose caption starts with these words, as text */
function tableOf(html: string, caption: string) {
  const table = [...html.matchAll(/<table>[\s\S]*?<\/table>/g)].find((t) =>
    t[0].includes(`<caption>${caption}`),
  );
  return tableText(trusted(table?.[0] ?? ''));
}

describe('the overview’s daily rollup', () => {
  it('answers the same figures from the rollup as from the tables, and keeps counting new days', async () => {
    const merchant = await aMerchant(h);
    const customer = await aCustomer(h, merchant);
    for (const amount of ['10.00', '2.50', '7.25']) {
      const res = await payments(h, merchant, 'POST', '/order', anOrder(customer, { amount }));
      expect(res.status).toBe(201);
    }
    const operator: Viewer = { role: 'operator', access: 'operator', userId: null, email: 'ops@example.com' };
    const member = merchantMember(merchant.id);
    const window = () => {
      const until = new Date(Math.ceil((h.services.clock.now().getTime() + 1) / DAY) * DAY);
      return [new Date(until.getTime() - 30 * DAY), until] as const;
    };
    const figures = async (viewer: Viewer) =>
      (await dailyFigures(h.services.db, viewer, ...window())).filter((f) => f.api === 'payments');
    const mine = (rows: { day: string; count: number; volume: string }[]) =>
      rows.map(({ day, count, volume }) => ({ day, count, volume }));
    const before = mine(await figures(member));
    expect(before).toHaveLength(1);
    expect(before[0]).toMatchObject({ count: 3, volume: '1975' });
    const operatorBefore = await figures(operator);

    // The day freezes: the sweep rolls it up, and the figures read from the rollup are the same.
    await h.advanceClock((LIVE_DAYS + 1) * 86_400);
    const rolled = await sql<{ day: string; count: string; volume: string }>`
      SELECT to_char(day, 'YYYY-MM-DD') AS day, count::text, volume::text FROM console_daily_figures
      WHERE api = 'payments' AND tenant_id = ${String(merchant.id)}`.execute(h.services.db);
    expect(rolled.rows).toEqual([{ day: before[0]?.day, count: '3', volume: '1975' }]);
    expect(mine(await figures(member))).toEqual(before);
    expect(await figures(operator)).toEqual(operatorBefore);

    // A payment today is counted live beside the frozen day.
    expect(
      (await payments(h, merchant, 'POST', '/order', anOrder(customer, { amount: '1.00' }))).status,
    ).toBe(201);
    const after = mine(await figures(member));
    expect(after).toHaveLength(2);
    expect(after[1]).toMatchObject({ count: 1, volume: '100' });

    const days = await sql<{ gaps: string }>`
      SELECT (max(day) - min(day) + 1 - count(*))::text AS gaps FROM console_daily_figures_days`.execute(
      h.services.db,
    );
    expect(days.rows[0]?.gaps).toBe('0');
  });

  it('sets the period beside the one before it: payments, volume and the change, for the tenant', async () => {
    const merchant = await aMerchant(h);
    const customer = await aCustomer(h, merchant);
    for (const amount of ['10.00', '2.50', '7.25']) {
      expect((await payments(h, merchant, 'POST', '/order', anOrder(customer, { amount }))).status).toBe(201);
    }
    await h.advanceClock(8 * 86_400);
    expect(
      (await payments(h, merchant, 'POST', '/order', anOrder(customer, { amount: '1.00' }))).status,
    ).toBe(201);
    const viewer = await ConsoleClient.member(h, { kind: 'merchant', id: String(merchant.id) }, 'viewer');
    const page = await viewer.get('/console/?days=7');
    expect(page.status).toBe(200);
    const { header, rows } = tableOf(page.text, 'The last 7 days');
    expect(header).toEqual(['API', 'Succeeded', 'Volume', 'Success rate', 'Refunds', 'Disputes']);
    // 1.00 against 19.75 the week before: 94.9 % less, said in whole percent toward zero
    expect(rows).toEqual([
      ['payments', '1 −66 %', '1.00 EUR −94 %', '100.0 % (before: 100.0 %)', '0 · 0.00 EUR', '0 · 0.00 EUR'],
    ]);
    expect([change(100n, 0n), change(0n, 0n), change(150n, 100n), change(100n, 100n)]).toEqual([
      'new',
      '—',
      '+50 %',
      '0 %',
    ]);
  });

  it('tells the success rate, refunds and disputes, the same from the rollup, and counts old days again', async () => {
    const m = await aMerchant(h);
    const customer = await aCustomer(h, m);
    const paid: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await payments<{ data: { transactionId: number } }>(
        h,
        m,
        'POST',
        '/order',
        anOrder(customer, { ...newCard(), amount: '10.00' }),
      );
      expect(res.status, res.text).toBe(201);
      paid.push(res.body.data.transactionId);
    }
    const declined = await payments(h, m, 'POST', '/order', anOrder(customer, newCard('4000000000000002')));
    expect(declined.status).toBe(402);
    expect((await payments(h, m, 'DELETE', `/transaction/${paid[0]}`, { amount: '2.50' })).status).toBe(200);
    const chargeback = await h.request('POST', `/sandbox/payments/transactions/${paid[1]}/chargeback`, {
      headers: { authorization: `Bearer ${h.adminToken}` },
      json: { reasonCode: '10.4' },
    });
    expect(chargeback.status, chargeback.text).toBe(201);

    const member = merchantMember(m.id);
    const until = () => new Date(Math.ceil((h.services.clock.now().getTime() + 1) / DAY) * DAY);
    const figures = async () =>
      (await dailyFigures(h.services.db, member, new Date(until().getTime() - 30 * DAY), until())).map(
        ({ day: _, ...f }) => f,
      );
    const live = await figures();
    expect(live).toEqual([
      {
        api: 'payments',
        currency: 'EUR',
        count: 3,
        volume: '3000',
        failed: 1,
        refunds: 1,
        refund_volume: '250',
        disputes: 1,
        dispute_volume: '1000',
      },
    ]);

    // The day rolled up: the same figures from the rollup.
    await h.advanceClock((LIVE_DAYS + 1) * 86_400);
    const rolled = () =>
      sql<{ failed: string; refunds: string; disputes: string; shape: number }>`
      SELECT f.failed::text, f.refunds::text, f.disputes::text, d.shape
      FROM console_daily_figures f JOIN console_daily_figures_days d USING (day)
      WHERE f.api = 'payments' AND f.tenant_id = ${String(m.id)}`.execute(h.services.db);
    expect((await rolled()).rows).toEqual([{ failed: '1', refunds: '1', disputes: '1', shape: 2 }]);
    expect(await figures()).toEqual(live);

    // A day counted before migration 0074 (shape 1, none of the new figures) is read from the tables
    // until the sweep counts it again.
    await sql`UPDATE console_daily_figures SET failed = 0, refunds = 0, refund_volume = 0, disputes = 0,
      dispute_volume = 0`.execute(h.services.db);
    await sql`UPDATE console_daily_figures_days SET shape = 1`.execute(h.services.db);
    expect(await figures()).toEqual(live);
    await h.advanceClock(120);
    expect((await rolled()).rows).toEqual([{ failed: '1', refunds: '1', disputes: '1', shape: 2 }]);
    // A few days a run, newest first, until none is left of the older shape; the run stays unbroken.
    const days = async () =>
      (
        await sql<{ gaps: string; older: string }>`
          SELECT (max(day) - min(day) + 1 - count(*))::text AS gaps,
            count(*) FILTER (WHERE shape < 2)::text AS older
          FROM console_daily_figures_days`.execute(h.services.db)
      ).rows[0];
    for (let run = 0; run < 20 && (await days())?.older !== '0'; run++) await h.advanceClock(120);
    expect(await days()).toEqual({ gaps: '0', older: '0' });

    // The merchant's home page: the figures in words, the dispute to answer, the money and its payout.
    const viewer = await ConsoleClient.member(h, { kind: 'merchant', id: String(m.id) }, 'viewer');
    const home = (await viewer.get('/console/')).text;
    expect(tableOf(home, 'The last 30 days').rows).toEqual([
      ['payments', '3 new', '30.00 EUR new', '75.0 % (before: —)', '1 · 2.50 EUR', '1 · 10.00 EUR'],
    ]);
    const due = tableOf(home, 'Disputes to answer');
    expect(due.rows).toHaveLength(1);
    expect(due.rows[0]?.slice(0, 2)).toEqual(['10.00 EUR', 'Fraud — card absent (Visa 10.4)']);
    expect(home).toContain('data-field="open-disputes">1<');
    const mine = tableOf(home, 'Balances and the next scheduled payout');
    expect(mine.header).toEqual(['Where', 'Available', 'Pending', 'Next payout']);
    expect(mine.rows).toHaveLength(1);
    expect(mine.rows[0]?.[3]).toMatch(/^\d{4}-\d{2}-\d{2}$|^by hand$/);
    // A member of a merchant sees no other tenant's list, nor a partner's or a store's cards.
    expect(home).not.toContain('Tenants with the most waiting');
    expect(home).not.toContain('data-field="open-challenges"');

    // The operator's: the tenants with the most waiting, this merchant among them with its dispute.
    const operator = await ConsoleClient.operator(h);
    const tenants = tableOf((await operator.get('/console/')).text, 'Tenants with the most waiting');
    expect(tenants.header).toEqual(['Tenant', 'Open disputes', 'Failed webhooks', 'Reviews', 'Approvals']);
    const row = tenants.rows.find((r) => r[0]?.endsWith(`(merchant:${m.id})`));
    expect(row?.[1]).toBe('1');
  });

  it('says the success rate exactly and finds the next payout day of each schedule', () => {
    expect([rate(3, 1), rate(0, 0), rate(2, 1), rate(1, 0), rate(0, 4)]).toEqual([
      '75.0 %',
      '—',
      '66.6 %',
      '100.0 %',
      '0.0 %',
    ]);
    const schedule = {
      interval: 'weekly' as const,
      weeklyAnchor: 'friday' as const,
      monthlyAnchor: 31,
      minimum: '1.00',
      delayDays: 2,
      reserveBps: 0,
      reserveDays: 0,
    };
    const friday = new Date('2026-12-04T10:00:00Z');
    expect(nextPayoutDay(schedule, friday, false)).toBe('2026-12-04');
    expect(nextPayoutDay(schedule, friday, true)).toBe('2026-12-11');
    expect(nextPayoutDay({ ...schedule, interval: 'daily' }, friday, true)).toBe('2026-12-05');
    // A monthly schedule on the 31st pays on a shorter month's last day.
    expect(nextPayoutDay({ ...schedule, interval: 'monthly' }, new Date('2027-02-02T00:00:00Z'), false)).toBe(
      '2027-02-28',
    );
    expect(nextPayoutDay({ ...schedule, interval: 'manual' }, friday, false)).toBeUndefined();
  });
});
