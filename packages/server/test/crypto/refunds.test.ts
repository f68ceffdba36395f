// Refund proposals: every rule of the spec violated once, an accepted refund paid out on chain through
// the ledger, one rejected then proposed again, one expiring after 30 days, the buyer's email, and the
// refund webhooks verified.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient } from '../harness/console-client.ts';
import { anOrder, aStore, cryptoHooks, orderOf, pay, type TestStore } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let store: TestStore;

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  store = await aStore(h, { webhookUrl: receiver.url('/store') });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

type RefundDoc = {
  data: {
    id: string;
    attributes: {
      requested_amount: string;
      requested_currency: string;
      status: string;
      reason: string | null;
      crypto_amount: { currency: string; value: string };
      refund_address: string | null;
      decision_url?: string;
    };
  };
};
type ErrorDoc = { code: number; errors: { detail: string; source?: { pointer: string } }[] };
const sandbox = () => ({ authorization: `Bearer ${h.adminToken}` });

async function aPaidOrder(s: TestStore, options: { total?: string; offramp?: boolean } = {}) {
  const order = await anOrder(h, s, { total: options.total ?? '10.90' });
  await pay(h, order.id, options.offramp ? { offramp: true } : {});
  await h.advanceClock(150);
  const o = await orderOf(h, s, order.id);
  if (!o.payment_uuid) throw new Error('order not paid');
  return { orderId: order.id, paymentId: o.payment_uuid };
}

const propose = (s: TestStore, paymentId: string, amount: string | number, path = 'refund') =>
  h.request<RefundDoc & ErrorDoc>('POST', `/crypto/api/stores/${path}/${paymentId}`, {
    headers: s.auth,
    json: { data: { type: 'refunds', attributes: { amount, reason: 'customer demand' } } },
  });

/** A payment's refund webhooks, as they arrived. */
const refundHooks = (paymentId: string, count: number) =>
  cryptoHooks(h, store, receiver, { paymentId, refunds: true }, count);

describe('refund rules', () => {
  it('rule 1: refunds must be enabled for the store (403)', async () => {
    const closed = await aStore(h, { refundsEnabled: false });
    const { paymentId } = await aPaidOrder(closed);
    const res = await propose(closed, paymentId, '1.00');
    expect(res.status).toBe(403);
    expect(res.body.errors[0]?.detail).toMatch(/not enabled/);
  });

  it('rule 2: one active refund per payment; a new one only after a rejection', async () => {
    const { orderId, paymentId } = await aPaidOrder(store);
    const first = await propose(store, paymentId, '5.00');
    expect(first.status).toBe(201);
    expect((await orderOf(h, store, orderId)).status).toBe('refund_proposed');
    const second = await propose(store, paymentId, '1.00', 'refunds');
    expect(second.status).toBe(409);
    expect(second.body.errors[0]?.detail).toMatch(/already has a proposed refund/);
    const rejected = await h.request<{ status: string }>(
      'POST',
      `/sandbox/crypto/refunds/${paymentId}/reject`,
      { headers: sandbox() },
    );
    expect(rejected.body.status).toBe('rejected');
    expect((await orderOf(h, store, orderId)).status).toBe('paid');
    const again = await propose(store, paymentId, '4.00');
    expect(again.status).toBe(201);
    const current = await h.request<RefundDoc>('GET', `/crypto/api/stores/refund/${paymentId}`, {
      headers: store.auth,
    });
    expect(current.body.data.attributes).toMatchObject({ requested_amount: '4.00', status: 'proposed' });
    const events = await refundHooks(paymentId, 3);
    expect(events.map((e) => e.event_type)).toEqual([
      'ORDER.REFUND.PROPOSED',
      'ORDER.REFUND.REJECTED',
      'ORDER.REFUND.PROPOSED',
    ]);
  });

  it('rule 3: at least 0.01 and at most the payment total (400 naming the amount)', async () => {
    const { paymentId } = await aPaidOrder(store);
    for (const amount of ['0.001', '0', '10.91', 'ten', '-1']) {
      const res = await propose(store, paymentId, amount);
      expect(res.status).toBe(400);
      expect(res.body.errors[0]?.source?.pointer).toBe('/data/attributes/amount');
    }
    expect((await propose(store, paymentId, '0.01')).status).toBe(201);
  });

  it('rule 4: payments older than 3 months are not refundable', async () => {
    const s = await aStore(h);
    const { paymentId, orderId } = await aPaidOrder(s);
    await h.advanceClock(93 * 24 * 3600);
    expect((await orderOf(h, s, orderId)).refundable).toBe(false);
    const res = await propose(s, paymentId, '1.00');
    expect(res.status).toBe(409);
    expect(res.body.errors[0]?.detail).toMatch(/older than 3 months/);
  });

  it('rule 5: offramp payments cannot be refunded', async () => {
    const { paymentId, orderId } = await aPaidOrder(store, { offramp: true });
    expect((await orderOf(h, store, orderId)).refundable).toBe(false);
    const res = await propose(store, paymentId, '1.00');
    expect(res.status).toBe(409);
    expect(res.body.errors[0]?.detail).toMatch(/offramp/);
  });

  it('a foreign or unknown payment is 404, and other stores never see a refund', async () => {
    const { paymentId } = await aPaidOrder(store);
    const other = await aStore(h);
    expect((await propose(other, paymentId, '1.00')).status).toBe(404);
    expect((await propose(store, '00000000-0000-4000-8000-000000000000', '1.00')).status).toBe(404);
    await propose(store, paymentId, '1.00');
    expect(
      (await h.request('GET', `/crypto/api/stores/refund/${paymentId}`, { headers: other.auth })).status,
    ).toBe(404);
  });
});

describe('a refund address OFAC lists', () => {
  it('is refused, the refund left proposed for another address, and raised as an alert', async () => {
    const ofac = readFileSync(
      fileURLToPath(new URL('../compliance/fixtures/ofac-sdn.xml', import.meta.url)),
      'utf8',
    );
    expect(
      (
        await h.admin('POST', '/compliance/sanctions/imports?source=ofac', {
          body: ofac,
          headers: { 'content-type': 'application/xml' },
        })
      ).status,
    ).toBe(201);
    const listed = /<idNumber>(0x[0-9a-f]{40})<\/idNumber>/.exec(ofac)?.[1] as string;
    const { paymentId } = await aPaidOrder(store, { total: '20.00' });
    const { decision_url } = (await propose(store, paymentId, '5.00')).body.data.attributes;
    const page = new URL(decision_url ?? '').pathname;
    const refused = await h.request('POST', `${page}/accept`, {
      form: { address: listed.toUpperCase().replace('0X', '0x') },
    });
    expect(refused.status).toBe(403);
    const refund = await h.request<RefundDoc>('GET', `/crypto/api/stores/refund/${paymentId}`, {
      headers: store.auth,
    });
    expect(refund.body.data.attributes.status).toBe('proposed');
    const alerts = await h.admin<{ data: { kind: string; evidence: { address: string } }[] }>(
      'GET',
      `/compliance/alerts?tenant=store:${store.id}`,
    );
    expect(alerts.body.data).toEqual([
      expect.objectContaining({ kind: 'scenario:refund_to_listed_address' }),
    ]);
    const accepted = await h.request('POST', `${page}/accept`, { form: { address: `0x${'cd'.repeat(20)}` } });
    expect(accepted.status).toBe(200);
  });
});

describe('refund outcomes', () => {
  it('accepted on the hosted page link: paid out on chain from the store balance, then complete', async () => {
    const { orderId, paymentId } = await aPaidOrder(store, { total: '20.00' });
    const res = await propose(store, paymentId, '10.00');
    expect(res.status).toBe(201);
    const { decision_url, crypto_amount } = res.body.data.attributes;
    expect(decision_url).toMatch(/\/crypto\/refunds\/[\w-]{32}$/);
    // The buyer was emailed the same link.
    const mail = await h.request<{ data: { recipient: string; body: string }[] }>(
      'GET',
      '/sandbox/messages?recipient=ada@example.com',
      {
        headers: sandbox(),
      },
    );
    expect(mail.body.data.some((m) => m.body.includes(decision_url ?? '-'))).toBe(true);
    const page = await h.request('GET', new URL(decision_url ?? '').pathname);
    expect(page.status).toBe(200);
    expect(page.text).toContain('10.00 EUR');
    const address = `0x${'ab'.repeat(20)}`;
    const bad = await h.request('POST', `${new URL(decision_url ?? '').pathname}/accept`, {
      form: { address: 'nope' },
    });
    expect(bad.status).toBe(400);
    const accepted = await h.request('POST', `${new URL(decision_url ?? '').pathname}/accept`, {
      form: { address },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.text).toContain('accepted');
    expect((await orderOf(h, store, orderId)).status).toBe('refund_processing');
    await h.advanceClock(150);
    const done = await h.request<RefundDoc>('GET', `/crypto/api/stores/refund/${paymentId}`, {
      headers: store.auth,
    });
    expect(done.body.data.attributes).toMatchObject({
      status: 'complete',
      refund_address: address,
      crypto_amount,
    });
    expect((await orderOf(h, store, orderId)).status).toBe('refund_completed');
    const payout = await h.services.db
      .selectFrom('chain_transfers')
      .selectAll()
      .where('direction', '=', 'out')
      .where('address', '=', address)
      .executeTakeFirstOrThrow();
    expect(payout.status).toBe('confirmed');
    // The console's refund page shows that payout.
    const operator = await ConsoleClient.operator(h);
    const refundRow = await h.services.db
      .selectFrom('crypto_refunds')
      .select('id')
      .where('payment_id', '=', paymentId)
      .executeTakeFirstOrThrow();
    const consolePage = (await operator.get(`/console/crypto/refunds/${refundRow.id}`)).text;
    expect(consolePage).toMatch(
      new RegExp(`<td[^>]*>${payout.id}</td><td[^>]*>out</td>.*?data-status="confirmed"`),
    );
    // A completed refund is the payment's one refund.
    expect((await propose(store, paymentId, '1.00')).status).toBe(409);
    expect((await refundHooks(paymentId, 3)).map((e) => e.event_type)).toEqual([
      'ORDER.REFUND.PROPOSED',
      'ORDER.REFUND.ACCEPTED',
      'ORDER.REFUND.COMPLETED',
    ]);
  });

  it('expires after 30 days without acceptance; then it can no longer be accepted', async () => {
    const { orderId, paymentId } = await aPaidOrder(store);
    await propose(store, paymentId, '2.00');
    await h.advanceClock(30 * 24 * 3600);
    const refund = await h.request<RefundDoc>('GET', `/crypto/api/stores/refund/${paymentId}`, {
      headers: store.auth,
    });
    expect(refund.body.data.attributes.status).toBe('expired');
    expect((await orderOf(h, store, orderId)).status).toBe('paid');
    const late = await h.request('POST', `/sandbox/crypto/refunds/${paymentId}/accept`, {
      headers: sandbox(),
    });
    expect(late.status).toBe(409);
    expect((await refundHooks(paymentId, 2)).map((e) => e.event_type)).toEqual([
      'ORDER.REFUND.PROPOSED',
      'ORDER.REFUND.EXPIRED',
    ]);
  });
});
