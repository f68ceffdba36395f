// A console list as CSV (docs/console.md, Lists): the filtered list whole, past its first page, with the
// same header and cells the pages show; a description written as a spreadsheet formula is made text;
// the export needs what its list needs, and a member's export holds only their own tenant's rows.
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trusted } from '../../src/platform/console/html-template.ts';
import { tableText } from '../../src/platform/console/list-export.ts';
import { PAGE_SIZE } from '../../src/platform/console/paging.ts';
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

/** Every page of a console list, followed by its next-page links, as the CSV would hold them */
async function pagesOf(client: ConsoleClient, path: string) {
  const rows: string[][] = [];
  let header: string[] = [];
  for (let next: string | null = path; next; ) {
    const page = await client.get(next);
    expect(page.status).toBe(200);
    const table = tableText(trusted(page.text));
    header = table.header;
    rows.push(...table.rows);
    next = /<a rel="next" href="([^"]+)"/.exec(page.text)?.[1]?.replace(/&amp;/g, '&') ?? null;
  }
  return { header, rows };
}

describe('a list as CSV', () => {
  it('holds the filtered list whole, as its pages show it', async () => {
    const m = await aMerchant(h);
    const customer = await aCustomer(h, m);
    for (let i = 0; i < PAGE_SIZE + 3; i++) {
      expect(
        (await payments(h, m, 'POST', '/order', anOrder(customer, { amount: `${i + 1}.00` }))).status,
      ).toBe(201);
    }
    // Declined (a card the sandbox network refuses): filtered out of the export below
    await payments(h, m, 'POST', '/order', anOrder(customer, { cardNumber: '4000000000000002' }));
    await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customer, { description: '=HYPERLINK("http://evil.example")' }),
    );

    const operator = await ConsoleClient.operator(h);
    const filter = `siteId=${m.sites[0]?.id}&status=complete-ok`;
    const list = await operator.get(`/console/payments/orders?${filter}`);
    expect(list.text).toContain(
      `<a href="/console/payments/orders.csv?${filter.replace('&', '&amp;')}" download>`,
    );
    const shown = await pagesOf(operator, `/console/payments/orders?${filter}`);
    expect(shown.rows.length).toBe(PAGE_SIZE + 4);

    const csv = await operator.get(`/console/payments/orders.csv?${filter}`);
    expect(csv.status).toBe(200);
    const [header = [], ...rows] = parse(csv.text) as string[][];
    expect(header).toEqual(shown.header);
    expect(header).toContain('Status');
    // The formula's cell is text in a spreadsheet; every other cell is the page's
    const formula = rows.findIndex((row) => row.some((cell) => cell.startsWith("'=HYPERLINK")));
    expect(formula).toBeGreaterThanOrEqual(0);
    expect(rows.map((row) => row.map((cell) => cell.replace(/^'=/, '=')))).toEqual(shown.rows);
    expect(rows.every((row) => row[header.indexOf('Status')] === 'Succeeded')).toBe(true);
    // The customer by name and email beside its id, to a role that may read them
    expect(
      rows.every((row) => row[header.indexOf('Customer')] === `Ada Lovelace · buyer@example.com ${customer}`),
    ).toBe(true);
  });

  it('needs what its list needs, and holds only the member’s own tenant', async () => {
    const mine = await aMerchant(h);
    const other = await aMerchant(h);
    await payments(h, mine, 'POST', '/order', anOrder(await aCustomer(h, mine), { description: 'mine' }));
    await payments(h, other, 'POST', '/order', anOrder(await aCustomer(h, other), { description: 'theirs' }));
    const email = `viewer-${mine.id}@export.example`;
    const password = 'correct horse battery staple';
    expect(
      (
        await h.admin('POST', '/console-users', {
          json: { email, password, role: 'viewer', tenant: { kind: 'merchant', id: String(mine.id) } },
        })
      ).status,
    ).toBe(201);
    const viewer = new ConsoleClient(h.baseUrl);
    await viewer.signIn({ email, password });
    const orders = await viewer.get('/console/payments/orders.csv');
    expect(orders.status).toBe(200);
    expect(orders.text).toContain('mine');
    expect(orders.text).not.toContain('theirs');
    // A viewer reads no personal data: the customer is said by its id alone, on the page and in the export
    expect(orders.text).toMatch(/,Customer \d+,/);
    expect(orders.text).not.toContain('Lovelace');
    expect((await viewer.get('/console/payments/orders')).text).not.toContain('Lovelace');
    // Customers are personal data: a viewer may not read them, nor export them
    expect((await viewer.get('/console/payments/customers')).status).toBe(403);
    expect((await viewer.get('/console/payments/customers.csv')).status).toBe(403);
    // A filter the list refuses, the export refuses alike, naming it, and writes no file
    const bad = await viewer.get('/console/payments/orders.csv?customerId=not-a-number');
    expect(bad.status).toBe((await viewer.get('/console/payments/orders?customerId=not-a-number')).status);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('customerId');
    // Signed out, nothing
    expect((await new ConsoleClient(h.baseUrl).get('/console/payments/orders.csv')).status).toBe(303);
  });
});
