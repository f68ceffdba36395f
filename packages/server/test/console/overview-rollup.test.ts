// The overview's figures come from the daily rollup once a day is LIVE_DAYS old (docs/scale.md): the
// same figures before and after the sweep froze a day, for the operator and for the tenant, and the
// rolled-up days one unbroken run.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dailyFigures, LIVE_DAYS } from '../../src/pages/console/reads/overview-reads.ts';
import { change } from '../../src/pages/console/routes/overview-routes.ts';
import type { Viewer } from '../../src/platform/console/console-users.ts';
import { trusted } from '../../src/platform/console/html-template.ts';
import { tableText } from '../../src/platform/console/list-export.ts';
import { ConsoleClient } from '../harness/console-client.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments } from '../harness/payments-builders.ts';

let h: Harness;

beforeAll(async () => {
  h = await Harness.start();
});
afterAll(async () => {
  await h?.close();
});

const DAY = 86_400_000;

describe('the overview’s daily rollup', () => {
  it('answers the same figures from the rollup as from the tables, and keeps counting new days', async () => {
    const merchant = await aMerchant(h);
    const customer = await aCustomer(h, merchant);
    for (const amount of ['10.00', '2.50', '7.25']) {
      const res = await payments(h, merchant, 'POST', '/order', anOrder(customer, { amount }));
      expect(res.status).toBe(201);
    }
    const operator: Viewer = { role: 'operator', access: 'operator', userId: null, email: 'ops@example.com' };
    const member: Viewer = {
      role: 'member',
      access: 'admin',
      userId: 'u',
      email: 'm@example.com',
      tenant: { kind: 'merchant', id: String(merchant.id) },
    };
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
    const email = `overview-${merchant.id}@console.example`;
    const password = 'correct horse battery staple';
    await h.admin('POST', '/console-users', {
      json: { email, password, role: 'viewer', tenant: { kind: 'merchant', id: String(merchant.id) } },
    });
    const viewer = new ConsoleClient(h.baseUrl);
    await viewer.signIn({ email, password });
    const page = await viewer.get('/console/?days=7');
    expect(page.status).toBe(200);
    const { header, rows } = tableText(trusted(page.text));
    expect(header).toEqual([
      'API',
      'Currency',
      'Payments',
      'Volume',
      'Payments before',
      'Volume before',
      'Volume change',
    ]);
    // 1.00 against 19.75 the week before: 94.9 % less, said in whole percent toward zero
    expect(rows).toEqual([['payments', 'EUR', '1', '1.00 EUR', '3', '19.75 EUR', '−94 %']]);
    expect([change(100n, 0n), change(0n, 0n), change(150n, 100n), change(100n, 100n)]).toEqual([
      'new',
      '—',
      '+50 %',
      '0 %',
    ]);
  });
});
