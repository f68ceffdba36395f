// Money out for crypto stores (docs/payouts.md, Crypto stores): a store paid in USDC settles in EUR at its
// quote's value, net of its fee; an accepted refund takes its EUR amount back; two sandbox days later the
// daily run pays the store's bank account (the sandbox's bank: in transit at once, paid the next day);
// the payout's report sums to the payout. (A store paid into its own wallet owes its fees instead: tested on
// a real chain, test/rails/evm-chain.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anOrder, aStore, orderOf, pay, type TestStore } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';

const DAY = 86_400;
let h: Harness;
let store: TestStore;

const storeApi = <T = { data: Record<string, unknown> }>(method: string, path: string, json?: unknown) =>
  h.request<T>(method, `/crypto/api${path}`, {
    headers: { ...store.auth, 'content-type': 'application/vnd.api+json' },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
type Balance = {
  data: { attributes: { currency: string; available: string; pending: string; reserved: string } }[];
};
type Payouts = { data: { id: string; attributes: { status: string; amount: string; store_id: string } }[] };
const balance = async () => (await storeApi<Balance>('GET', '/stores/balance')).body.data[0]?.attributes;

beforeAll(async () => {
  h = await Harness.start();
  store = await aStore(h, { refundsEnabled: true });
});
afterAll(() => h.close());

describe('a store paid in USDC that settles in EUR', () => {
  it('is priced, given a bank account, and paid: its balance is the EUR value less the fee, pending for two days', async () => {
    expect(
      (
        await h.admin('PUT', `/stores/${store.id}/pricing`, {
          json: { percentBps: 100, fixed: { EUR: '0.10' } },
        })
      ).status,
    ).toBe(200);
    const schedule = await h.admin('PUT', `/stores/${store.id}/payout-schedule`, {
      json: { interval: 'daily', delayDays: 2, reservePercent: '10', reserveDays: 7 },
    });
    expect(schedule.body).toMatchObject({ interval: 'daily', reservePercent: '10.00', reserveDays: 7 });
    const account = await storeApi('PUT', '/stores/bank_account', {
      data: {
        type: 'bank_accounts',
        attributes: { iban: 'DE89370400440532013000', holder_name: 'Crypto Store GmbH' },
      },
    });
    expect(account.status).toBe(200);
    const order = await anOrder(h, store, { total: '100.00' });
    expect((await pay(h, order.id)).status).toBe(201);
    await h.advanceClock(150);
    expect((await orderOf(h, store, order.id)).status).toBe('paid');
    // 100.00 − (1 % + 0.10) = 98.90, of which 10 % (9.89) is held for 7 days.
    expect(await balance()).toEqual({
      currency: 'EUR',
      available: '0.00',
      pending: '89.01',
      reserved: '9.89',
    });
    const rows = await storeApi<{
      data: { attributes: { type: string; gross: string; fee: string; net: string } }[];
    }>('GET', '/stores/balance_transactions');
    expect(rows.body.data.map((r) => r.attributes).reverse()).toMatchObject([
      { type: 'capture', gross: '100.00', fee: '1.10', net: '98.90' },
      { type: 'reserve_hold', net: '-9.89' },
      { type: 'reserve_release', net: '9.89' },
    ]);
  });

  it('gives back an accepted refund’s EUR amount, then pays the rest out after the delay; the report sums to the payout', async () => {
    const [payment] = (
      await h.services.db
        .selectFrom('crypto_payments')
        .select('id')
        .where('store_id', '=', store.id)
        .execute()
    ).map((r) => r.id);
    const proposed = await storeApi<{ data: { attributes: { decision_url: string } } }>(
      'POST',
      `/stores/refund/${payment}`,
      {
        data: { type: 'refunds', attributes: { amount: '20.00', reason: 'returned goods' } },
      },
    );
    expect(proposed.status, proposed.text).toBe(201);
    const accepted = await h.request(
      'POST',
      `${new URL(proposed.body.data.attributes.decision_url).pathname}/accept`,
      {
        form: { address: `0x${'ab'.repeat(20)}` },
      },
    );
    expect(accepted.status).toBe(200);
    expect(await balance()).toEqual({
      currency: 'EUR',
      available: '-20.00',
      pending: '89.01',
      reserved: '9.89',
    });

    await h.advanceClock(2 * DAY + 60);
    const payouts = await storeApi<Payouts>('GET', '/stores/payouts');
    expect(payouts.body.data).toHaveLength(1);
    const payout = payouts.body.data[0];
    expect(payout?.attributes).toMatchObject({ status: 'in_transit', amount: '69.01', store_id: store.id });
    const report = await h.request('GET', `/crypto/api/stores/payouts/${payout?.id}/report`, {
      headers: store.auth,
    });
    const nets = report.text
      .trimEnd()
      .split('\r\n')
      .slice(1)
      .map((line) => line.split(',')[9] as string);
    expect(nets.map((n) => BigInt(n.replace('.', ''))).reduce((a, b) => a + b, 0n)).toBe(6901n);
    await h.advanceClock(DAY);
    expect((await storeApi<Payouts>('GET', `/stores/payouts/${payout?.id}`)).body.data).toMatchObject({
      attributes: { status: 'paid' },
    });
    expect(await balance()).toEqual({
      currency: 'EUR',
      available: '0.00',
      pending: '0.00',
      reserved: '9.89',
    });
    // The store heard of each step, in its event log (and at its webhook endpoint).
    const events = await h.request<{ data: { attributes: { type: string; objectIds: string[] } }[] }>(
      'GET',
      '/crypto/api/stores/events?limit=100',
      { headers: store.auth },
    );
    expect(
      events.body.data
        .filter((e) => e.attributes.objectIds.includes(payout?.id as string))
        .map((e) => e.attributes.type)
        .reverse(),
    ).toEqual(['PAYOUT.CREATED', 'PAYOUT.IN_TRANSIT', 'PAYOUT.PAID']);
    await h.advanceClock(5 * DAY);
    expect(await balance()).toMatchObject({ reserved: '0.00' });
    const date = (
      await h.request<{ now: string }>('GET', '/sandbox/clock', {
        headers: { authorization: `Bearer ${h.adminToken}` },
      })
    ).body.now.slice(0, 10);
    expect(
      (await h.admin<{ clean: boolean; findings: unknown[] }>('GET', `/reconcile?date=${date}`)).body,
    ).toMatchObject({
      clean: true,
      findings: [],
    });
    // The balance by day over the whole history: each day's closing is the last one plus its net, and the
    // last day closes at the balance.
    const from = new Date(Date.parse(date) - 9 * 86_400_000).toISOString().slice(0, 10);
    const byDay = await h.request('GET', `/crypto/api/stores/balance/report?from=${from}&to=${date}`, {
      headers: store.auth,
    });
    const days = byDay.text
      .trimEnd()
      .split('\r\n')
      .slice(1)
      .map((line) => line.split(','));
    expect(days).toHaveLength(10);
    const cents = (text: string) =>
      BigInt(text.replace('.', '').replace('-', '')) * (text.startsWith('-') ? -1n : 1n);
    let closing = 0n;
    for (const [, currency, , , net, close] of days) {
      expect(currency).toBe('EUR');
      closing += cents(net as string);
      expect(cents(close as string)).toBe(closing);
    }
    const now = await balance();
    expect(closing).toBe(
      cents(now?.available ?? '0') + cents(now?.pending ?? '0') + cents(now?.reserved ?? '0'),
    );
  });

  it('refuses a payout above the available balance, in the crypto API’s envelope naming the field', async () => {
    const answer = await storeApi<{ errors: { source?: { pointer: string }; detail: string }[] }>(
      'POST',
      '/stores/payouts',
      {
        data: { type: 'payouts', attributes: { currency: 'EUR', amount: '1000.00' } },
      },
    );
    expect(answer.status).toBe(400);
    expect(answer.body.errors[0]?.source?.pointer).toBe('/data/attributes/amount');
    expect(answer.body.errors[0]?.detail).toContain('available balance');
    const stranger = await aStore(h);
    const [payout] = (await storeApi<Payouts>('GET', '/stores/payouts')).body.data;
    expect(
      (await h.request('GET', `/crypto/api/stores/payouts/${payout?.id}`, { headers: stranger.auth })).status,
    ).toBe(404);
  });
});
