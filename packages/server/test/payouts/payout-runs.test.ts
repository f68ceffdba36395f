// The payout run, one tenant at a time (docs/payouts.md, The scheduled run): a tenant whose step throws is
// reported (the run's answer, the log, tessera_payout_run_failures_total) while every other tenant is paid,
// and is paid by the next round once the cause is gone; a backlog larger than a batch is paid by one
// payout made in batches of at most 10,000 items, each its own transaction, whose report streams every item.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAYOUT_BATCH } from '../../src/platform/payouts/payouts-service.ts';
import { seedBacklog } from '../harness/backlog.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments, type TestMerchant } from '../harness/payments-builders.ts';

let h: Harness;
/** The batches a payout's statements mark its items in */
let batches = 0;
beforeAll(async () => {
  h = await Harness.start({
    captureLogs: true,
    observeStatement: (text) => {
      if (text.includes('UPDATE balance_transactions SET payout_id')) batches++;
    },
  });
});
afterAll(() => h.close());

async function aPaidSite(amount: string): Promise<TestMerchant> {
  const shop = await aMerchant(h);
  const site = shop.sites[0]?.id as number;
  await h.admin('PUT', `/merchants/${shop.id}/sites/${site}/payout-schedule`, {
    json: { interval: 'daily', delayDays: 0, minimum: '1.00' },
  });
  await h.admin('PUT', `/merchants/${shop.id}/sites/${site}/bank-account`, {
    json: { iban: 'DE89370400440532013000', holderName: 'Run Shop' },
  });
  const customer = await aCustomer(h, shop);
  expect((await payments(h, shop, 'POST', '/order', anOrder(customer, { amount }))).status).toBe(201);
  return shop;
}

describe('a payout run where one tenant’s step throws', () => {
  it('pays every other tenant, reports the one, and pays it on the next round', async () => {
    const [first, failing, last] = [
      await aPaidSite('11.00'),
      await aPaidSite('22.00'),
      await aPaidSite('33.00'),
    ];
    const failingKey = `site:${failing.sites[0]?.id}`;
    // A fault in the database for that tenant only: its payout's row is refused.
    await sql
      .raw(`CREATE FUNCTION refuse_one_payout() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF NEW.owner = '${failingKey}' THEN RAISE EXCEPTION 'refused for this test'; END IF;
              RETURN NEW;
            END $$`)
      .execute(h.services.db);
    await sql
      .raw(
        'CREATE TRIGGER refuse_one_payout BEFORE INSERT ON payouts FOR EACH ROW EXECUTE FUNCTION refuse_one_payout()',
      )
      .execute(h.services.db);
    const run = await h.admin<{
      payouts: { amount: string; siteId: number }[];
      failures: { tenant: string; currency: string; error: string }[];
    }>('POST', '/payout-runs');
    expect(run.status, run.text).toBe(200);
    expect(run.body.payouts.map((p) => [p.siteId, p.amount])).toEqual(
      expect.arrayContaining([
        [first.sites[0]?.id, '11.00'],
        [last.sites[0]?.id, '33.00'],
      ]),
    );
    expect(run.body.payouts.some((p) => p.siteId === failing.sites[0]?.id)).toBe(false);
    expect(run.body.failures).toEqual([
      { tenant: failingKey, currency: 'EUR', error: expect.stringContaining('refused for this test') },
    ]);
    expect(h.logs.join('')).toContain('payout run: a tenant failed');
    const metrics = (await h.request('GET', '/metrics')).text;
    expect(metrics).toContain(`tessera_payout_run_failures_total{tenant="${failingKey}"} 1`);
    // The background sweep meets it too, and goes on with the others.
    await h.advanceClock(1);
    expect((await h.request('GET', '/metrics')).text).toContain(
      `tessera_payout_run_failures_total{tenant="${failingKey}"} 2`,
    );
    expect((await h.request('GET', '/metrics')).text).toContain(
      'tessera_sweep_failures_total{sweep="payout-runs"} 0',
    );
    // The cause gone, the next round pays it.
    await sql.raw('DROP TRIGGER refuse_one_payout ON payouts').execute(h.services.db);
    await h.advanceClock(1);
    const paid = await payments(h, failing, 'GET', '/payout');
    expect(paid.body.data).toMatchObject([{ amount: '22.00' }]);
  });
});

describe('a backlog larger than a batch', () => {
  it('is paid by one payout made in batches, whose report lists every item', async () => {
    const shop = await aPaidSite('10.00');
    const siteId = shop.sites[0]?.id as number;
    const items = PAYOUT_BATCH * 2 + 345;
    const seeded = await seedBacklog(h.databaseUrl, siteId, items, h.services.clock.now());
    batches = 0;
    const made = await payments(h, shop, 'POST', '/payout', { siteId: String(siteId), currency: 'EUR' });
    expect(made.status, made.text).toBe(201);
    // The order's capture and the seeded items: three batches, the last not full.
    expect(batches).toBe(3);
    expect(made.body.data.amount).toBe(`${(seeded.total + 1000n) / 100n}.00`);
    const report = await h.request('GET', `/payments/payout/${made.body.data.id}/report`, {
      headers: shop.auth,
    });
    expect(report.status).toBe(200);
    const lines = report.text.trimEnd().split('\r\n').slice(1);
    expect(lines).toHaveLength(items + 1);
    const nets = lines.map((line) => BigInt((line.split(',')[9] as string).replace('.', '')));
    expect(nets.reduce((a, b) => a + b, 0n).toString()).toBe((seeded.total + 1000n).toString());
    const left = await h.services.db
      .selectFrom('payout_assemblies')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(left.n).toBe('0');
    const books = await h.admin<{ findings: unknown[] }>('GET', '/reconcile');
    expect(books.body.findings).toEqual([]);
  }, 120_000);

  it('asked for while the run pays the same backlog: one payout, and the request answers it', async () => {
    const shop = await aPaidSite('10.00');
    const siteId = shop.sites[0]?.id as number;
    await seedBacklog(h.databaseUrl, siteId, PAYOUT_BATCH * 3, h.services.clock.now());
    // The two take turns under the tenant's lock, batch by batch; whoever writes the last batch makes the
    // payout, and the other answers that one.
    const [asked, run] = await Promise.all([
      payments(h, shop, 'POST', '/payout', { siteId: String(siteId), currency: 'EUR' }),
      h.services.moneyOut.payouts.runDue({ explicit: true }),
    ]);
    expect(asked.status, asked.text).toBe(201);
    const made = await payments(h, shop, 'GET', '/payout');
    expect(made.body.data).toHaveLength(1);
    expect(made.body.data[0].id).toBe(asked.body.data.id);
    expect(run.failed).toEqual([]);
    expect(made.body.data[0].amount).toBe(`${(BigInt(PAYOUT_BATCH * 3) * 100n + 1000n) / 100n}.00`);
  }, 120_000);
});
