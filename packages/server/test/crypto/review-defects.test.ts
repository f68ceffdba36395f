// Defects the hardening review found in the crypto API, each shown fixed: statuses never go backwards,
// an expired order says what happened to the money it received, the hosted page after a partial
// payment shows where to send the rest, its texts and ids are right, Bitcoin confirms within an
// order's life, and crypto amounts are printed in their own precision.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anOrder, aStore, cryptoHooks, orderOf, pay, type TestStore } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let store: TestStore;
beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  store = await aStore(h, { webhookUrl: receiver.url('/crypto') });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

/** The webhooks of one order, as they arrived (the sandbox sends them as they are made). */
const hooksOf = (orderId: string, count: number) => cryptoHooks(h, store, receiver, { orderId }, count);
const eventTypes = async (orderId: string, count: number) =>
  (await hooksOf(orderId, count)).map((hook) => hook.event_type);

function expectUniqueIds(html: string) {
  const ids = [...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]);
  expect(ids.length).toBe(new Set(ids).size);
}

describe('an order’s status never goes backwards', () => {
  it('a transfer sent in time but confirming after a refund was proposed is late, not a second payment', async () => {
    const order = await anOrder(h, store, { total: '20.00' });
    expect((await pay(h, order.id)).status).toBe(201);
    await h.advanceClock(60);
    expect((await pay(h, order.id, { amount: '3' })).status).toBe(201);
    // The first transfer is final (144 s of blocks), the second not yet.
    await h.advanceClock(100);
    const paid = await orderOf(h, store, order.id);
    expect(paid.status).toBe('paid');
    const proposed = await h.request('POST', `/crypto/api/stores/refunds/${paid.payment_uuid}`, {
      headers: store.auth,
      json: { data: { type: 'refunds', attributes: { amount: '5.00', reason: 'x' } } },
    });
    expect(proposed.status).toBe(201);
    await h.advanceClock(120);
    const after = await orderOf(h, store, order.id);
    expect(after.status).toBe('refund_proposed');
    expect(after.transfers.every((t) => t.status === 'confirmed')).toBe(true);
    const types = await eventTypes(order.id, 5);
    expect(types.filter((t) => t === 'ORDER.PAYMENT.RECEIVED')).toHaveLength(1);
    expect(types).toContain('ORDER.PAYMENT.LATE');
  });
});

describe('an order that expires after a partial payment', () => {
  it('shows the buyer where to send the rest, then says the money is kept, and the event says so too', async () => {
    const order = await anOrder(h, store, { total: '100.00' });
    await pay(h, order.id, { amount: '40' });
    await h.advanceClock(150);
    const partial = await h.request('GET', new URL(order.redirectUrl).pathname);
    expect(partial.text).toMatch(/data-field="amount-due">[\d.]+ EUR</);
    expect(partial.text).toMatch(/data-field="address">0x[0-9a-fA-F]{40}</);
    expect(partial.text).toMatch(/data-field="crypto-amount">[\d.]+</);
    expect(partial.text).toMatch(/id="countdown" data-seconds="\d+"/);
    expectUniqueIds(partial.text);

    await h.advanceClock(15 * 60);
    const ended = await h.request('GET', new URL(order.redirectUrl).pathname);
    expect(ended.text).toContain('arrived before the order ended. It is kept for you');
    expect(ended.text).not.toContain('after the order ended');
    const cancelled = (await hooksOf(order.id, 3)).find(
      (hook) => hook.event_type === 'ORDER.PAYMENT.CANCELLED',
    );
    expect(cancelled?.resource).toMatchObject({ funds: 'kept_for_refund', payment_id: expect.any(String) });

    // A transfer after the end is told apart from what came in time.
    await pay(h, order.id, { amount: '1' });
    await h.advanceClock(150);
    const late = await h.request('GET', new URL(order.redirectUrl).pathname);
    expect(late.text).toContain('arrived after the order ended. It is recorded and kept for you');
  });
});

describe('the hosted payment page', () => {
  it('has no duplicate ids while the buyer picks and pays', async () => {
    const order = await anOrder(h, store);
    const path = new URL(order.redirectUrl).pathname;
    expectUniqueIds((await h.request('GET', path)).text);
    await h.request('POST', `${path}/choose`, { form: { option: 'USDC:ETH' } });
    const quoted = await h.request('GET', path);
    expect(quoted.text).toContain('data-field="address"');
    expectUniqueIds(quoted.text);
  });
});

describe('the chain simulator', () => {
  it('confirms a Bitcoin payment well within an order’s 15 minutes', async () => {
    const order = await anOrder(h, store, { total: '10.00' });
    expect((await pay(h, order.id, { currency: 'BTC', network: 'BTC' })).status).toBe(201);
    await h.advanceClock(300);
    expect((await orderOf(h, store, order.id)).status).toBe('paid');
  });
});

describe('crypto amounts', () => {
  it('are printed in the asset’s own precision, trailing zeros trimmed', async () => {
    const order = await anOrder(h, store, { total: '10.00' });
    await pay(h, order.id, { currency: 'ETH', network: 'ETH' });
    await h.advanceClock(150);
    const read = await orderOf(h, store, order.id);
    for (const transfer of read.transfers) expect(transfer.amount).not.toMatch(/\.\d*0$/);
    const hooks = await hooksOf(order.id, 2);
    for (const hook of hooks) {
      if (hook.resource.crypto_amount) expect(hook.resource.crypto_amount).not.toMatch(/\.\d*0$/);
    }
  });
});
