// Console › Money out (docs/payouts.md, Console): balances with their bank account, "pay out now" behind a
// confirmation that shows a refusal on the form, the payout with what it pays and its report, the
// operator's reports and reconciliation; a member sees only their own tenant's money.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient } from '../harness/console-client.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments, type TestMerchant } from '../harness/payments-builders.ts';

let h: Harness;
let m: TestMerchant;
let siteId: number;

async function member(merchantId: number): Promise<ConsoleClient> {
  const email = `m-${randomBytes(4).toString('hex')}@console.example`;
  const password = 'correct horse battery staple';
  await h.admin('POST', '/console-users', {
    json: { email, password, role: 'member', tenant: { kind: 'merchant', id: String(merchantId) } },
  });
  const b = new ConsoleClient(h.baseUrl);
  expect((await b.signIn({ email, password })).location).toBe('/console');
  return b;
}

beforeAll(async () => {
  h = await Harness.start();
  m = await aMerchant(h);
  siteId = m.sites[0]?.id as number;
  await h.admin('PUT', `/merchants/${m.id}/sites/${siteId}/pricing`, {
    json: { percentBps: 100, fixed: { EUR: '0.20' } },
  });
  await h.admin('PUT', `/merchants/${m.id}/sites/${siteId}/payout-schedule`, {
    json: { interval: 'manual', delayDays: 0 },
  });
  await h.admin('PUT', `/merchants/${m.id}/sites/${siteId}/bank-account`, {
    json: { iban: 'DE89370400440532013000', holderName: 'Console Shop' },
  });
  const customer = await aCustomer(h, m);
  for (const amount of ['50.00', '30.00']) {
    expect((await payments(h, m, 'POST', '/order', anOrder(customer, { amount }))).status).toBe(201);
  }
});
afterAll(() => h.close());

describe('money out in the console', () => {
  it('shows the balance and pays it out behind a confirmation; a refused amount comes back on the form', async () => {
    const op = await ConsoleClient.operator(h);
    const balances = await op.get(`/console/money/balances?tenant=site:${siteId}`);
    expect(balances.status).toBe(200);
    // 80.00 less 2 × (1 % + 0.20)
    expect(balances.text).toContain('78.80');
    expect(balances.text).toContain('DE89**************3000');
    const href = /href="(\/console\/money\/payouts\/new\?[^"]+)"/
      .exec(balances.text)?.[1]
      ?.replace(/&amp;/g, '&') as string;
    const confirm = await op.get(href);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('Pays 78.80 EUR available to DE89**************3000');
    const form = (text: string) => ({
      csrf: /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? '',
      idempotencyKey: /name="idempotencyKey" value="([^"]+)"/.exec(text)?.[1] ?? '',
      tenant: `site:${siteId}`,
      currency: 'EUR',
    });
    const tooMuch = await op.post('/console/money/payouts/new', { ...form(confirm.text), amount: '78.81' });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.text).toContain('exceeds the available balance (78.80 EUR)');
    expect(tooMuch.text).toContain('aria-invalid="true"');
    const done = await op.post('/console/money/payouts/new', { ...form(tooMuch.text), amount: '' });
    expect(done.status).toBe(303);
    const payoutPage = await op.get(done.location as string);
    expect(payoutPage.text).toContain('78.80');
    expect(payoutPage.text).toMatch(/,?capture/);
    // Its events, found by the payout's id.
    expect(payoutPage.text).toContain('payout.created');
    const report = await op.get(`${done.location}/report.csv`);
    expect(report.status).toBe(200);
    expect(report.text.split('\r\n').filter((l) => l.includes(',capture,'))).toHaveLength(2);
    // The Reports page shows the newest reconcile run and runs nothing itself; "Reconcile now" runs it.
    const runs = async () =>
      Number(
        (
          await h.services.db
            .selectFrom('reconcile_runs')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await runs();
    const reports = await op.get('/console/money/reports');
    expect(await runs()).toBe(before);
    const ran = await op.post('/console/money/reports/reconcile', {
      csrf: /name="csrf" value="([^"]+)"/.exec(reports.text)?.[1] ?? '',
    });
    expect(ran.status, ran.text).toBe(303);
    expect(await runs()).toBe(before + 1);
    const shown = await op.get('/console/money/reports');
    expect(shown.text).toContain('clean');
    expect(shown.text).toContain('from the newest day proved');
  });

  it('lets a merchant’s member see its own money only', async () => {
    const own = await member(m.id);
    // The site by its name, its key beside it: on the balances, the payouts list and a payout's page
    expect((await own.get('/console/money/balances')).text).toContain(
      `<td data-label="Tenant">Site 1 <small class="id">site:${siteId}</small></td>`,
    );
    const list = await own.get('/console/money/payouts');
    expect(list.text).toContain(`Site 1 <small class="id">site:${siteId}</small>`);
    // Where each payout goes, masked as the payout recorded it
    expect(list.text).toMatch(/<td data-label="To">DE89\*+3000 \([^)]+\)<\/td>/);
    const payoutId = /href="\/console\/money\/payouts\/(po_[0-9A-Z]+)"/.exec(list.text)?.[1];
    expect(payoutId).toBeDefined();
    expect((await own.get(`/console/money/payouts/${payoutId}`)).text).toContain(
      `<dd>Site 1 <small class="id">site:${siteId}</small></dd>`,
    );
    const stranger = await member((await aMerchant(h)).id);
    expect((await stranger.get(`/console/money/payouts/${payoutId}`)).status).toBe(404);
    expect((await stranger.get(`/console/money/payouts/${payoutId}/report.csv`)).status).toBe(404);
    expect((await stranger.get(`/console/money/payouts/new?tenant=site:${siteId}&currency=EUR`)).status).toBe(
      404,
    );
    expect(
      (
        await stranger.get(
          `/console/money/reports/balance.csv?tenant=site:${siteId}&from=2026-01-01&to=2026-01-02`,
        )
      ).status,
    ).toBe(404);
    expect(
      (await stranger.get('/console/money/reports/revenue.csv?from=2026-01-01&to=2026-01-02')).status,
    ).toBe(404);
    // Reconciling is the operator's: a tenant's member is not shown it and cannot run it.
    const reports = await own.get('/console/money/reports');
    expect(reports.text).not.toContain('Reconcile now');
    const csrf = /name="csrf" value="([^"]+)"/.exec(reports.text)?.[1] ?? '';
    expect((await own.post('/console/money/reports/reconcile', { csrf })).status).toBe(404);
  });
});
