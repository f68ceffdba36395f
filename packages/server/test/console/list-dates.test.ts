// Every console list narrows to the rows created between two dates (docs/console.md, Lists): the page, its
// next pages and its CSV alike; a list paged by a sequence finds the dates' range of the sequence by a
// binary search over its index (list-narrowing.ts, sequenceAtOrAfter), checked here against a plain count.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sequenceAtOrAfter } from '../../src/platform/console/list-narrowing.ts';
import { ConsoleClient } from '../harness/console-client.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments } from '../harness/payments-builders.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(async () => {
  await h.close();
});

const day = (d: Date) => d.toISOString().slice(0, 10);
/** The ids a page's orders list links */
const orderIds = (html: string) =>
  [...html.matchAll(/<td data-label="Order"><a href="\/console\/payments\/orders\/(\d+)">/g)].map(
    (m) => m[1],
  );

describe('a list between two dates', () => {
  it('shows the orders created on those days, on the page and in the CSV; a bad date is refused by name', async () => {
    const m = await aMerchant(h);
    const customer = await aCustomer(h, m);
    const made: { id: string; day: string }[] = [];
    for (let d = 0; d < 4; d++) {
      for (let i = 0; i < 2; i++) {
        const res = await payments<{ data: { orderId: number } }>(
          h,
          m,
          'POST',
          '/order',
          anOrder(customer, { amount: `${d + 1}.0${i}` }),
        );
        expect(res.status).toBe(201);
        made.push({ id: String(res.body.data.orderId), day: day(h.services.clock.now()) });
      }
      await h.advanceClock(86_400);
    }
    const [, second, third] = [...new Set(made.map((o) => o.day))];
    const operator = await ConsoleClient.operator(h);
    const path = `/console/payments/orders?siteId=${m.sites[0]?.id}&from=${second}&to=${third}`;
    const page = await operator.get(path);
    expect(page.status).toBe(200);
    const expected = made
      .filter((o) => o.day === second || o.day === third)
      .map((o) => o.id)
      .reverse();
    expect(orderIds(page.text)).toEqual(expected);
    // The form keeps the dates, as date pickers
    expect(page.text).toContain(`name="from" value="${second}" type="date"`);
    const csv = await operator.get(path.replace('/orders?', '/orders.csv?'));
    expect(csv.status).toBe(200);
    expect(csv.text.trim().split('\n')).toHaveLength(expected.length + 1);

    for (const [query, field] of [
      ['from=2026-02-30', 'from'],
      ['to=yesterday', 'to'],
      [`from=${third}&to=${second}`, 'to'],
    ] as const) {
      const bad = await operator.get(`/console/payments/orders?${query}`);
      expect(bad.status, query).toBe(400);
      expect(bad.text).toContain(field);
    }
  });

  it('finds the first row of a date by a binary search over the sequence, as a plain count finds it', async () => {
    const { rows } = await sql<{ at: Date }>`
      SELECT created_at AS at FROM payments_orders ORDER BY id`.execute(h.services.db);
    expect(rows.length).toBeGreaterThan(5);
    const first = rows[0]?.at.getTime() ?? 0;
    const last = rows.at(-1)?.at.getTime() ?? 0;
    const times = [first - 1, first, last, last + 1, ...rows.map((r) => r.at.getTime() + 1)];
    for (const t of times) {
      const at = new Date(t);
      const { rows: found } = await sql<{ bound: number | null; plain: number | null }>`
        SELECT ${sequenceAtOrAfter('payments_orders', 'id', 'created_at', at)}::int AS bound,
          coalesce((SELECT min(id) FROM payments_orders WHERE created_at >= ${at}),
                   (SELECT max(id) + 1 FROM payments_orders))::int AS plain`.execute(h.services.db);
      expect(found[0]?.bound, at.toISOString()).toBe(found[0]?.plain);
    }
  });

  it('narrows by amount and sorts by it over a month, page after page; oldest first; the bad ones refused', async () => {
    const m = await aMerchant(h);
    const customer = await aCustomer(h, m);
    const made: { id: string; minor: number }[] = [];
    for (let i = 0; i < 30; i++) {
      // 30 amounts in a shuffled order, two of them equal (the id breaks the tie)
      const minor = ((i * 17) % 29) * 100 + 100;
      const res = await payments<{ data: { orderId: number } }>(
        h,
        m,
        'POST',
        '/order',
        anOrder(customer, { amount: (minor / 100).toFixed(2) }),
      );
      expect(res.status).toBe(201);
      made.push({ id: String(res.body.data.orderId), minor });
    }
    const today = day(h.services.clock.now());
    const operator = await ConsoleClient.operator(h);
    const base = `/console/payments/orders?siteId=${m.sites[0]?.id}&from=${today}&to=${today}`;
    // Sorted by amount, smallest first, across two pages (25 and 5)
    const first = await operator.get(`${base}&sort=amount_asc`);
    expect(first.status, first.text).toBe(200);
    const next = /<a rel="next" href="([^"]+)"/.exec(first.text)?.[1]?.replace(/&amp;/g, '&');
    expect(next).toBeDefined();
    const second = await operator.get(next ?? '');
    const ascending = [...made]
      .sort((a, b) => a.minor - b.minor || Number(a.id) - Number(b.id))
      .map((o) => o.id);
    expect([...orderIds(first.text), ...orderIds(second.text)]).toEqual(ascending);
    // Largest first, and between two amounts (major units, both included)
    const largest = await operator.get(`${base}&sort=amount_desc&minAmount=5&maxAmount=10.00`);
    expect(orderIds(largest.text)).toEqual(
      [...made]
        .filter((o) => o.minor >= 500 && o.minor <= 1000)
        .sort((a, b) => b.minor - a.minor || Number(b.id) - Number(a.id))
        .map((o) => o.id),
    );
    // Oldest first, by the sequence
    const oldest = await operator.get(`/console/payments/orders?siteId=${m.sites[0]?.id}&sort=oldest`);
    expect(orderIds(oldest.text)).toEqual(made.slice(0, 25).map((o) => o.id));

    for (const [query, field] of [
      ['sort=amount_desc', 'sort'],
      [`sort=amount_asc&from=2026-01-01&to=2026-03-01`, 'sort'],
      ['sort=cheapest', 'sort'],
      ['minAmount=ten', 'minAmount'],
      ['maxAmount=1e3', 'maxAmount'],
    ] as const) {
      const bad = await operator.get(`/console/payments/orders?${query}`);
      expect(bad.status, query).toBe(400);
      expect(bad.text).toContain(field);
    }
    // A list without an amount has no amount sort
    expect((await operator.get('/console/payments/customers?sort=amount_asc')).status).toBe(400);
  });
});
