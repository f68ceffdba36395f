// The Utrust TypeScript library from npm, unmodified, against Tessera: only its sandbox address is
// pointed at this server (the library reads it from its module's exports when a client is made). Its
// HTTP client adds a trailing slash; its order view, and its webhook validator for every kind of event
// Tessera sends, must work as they do against the real service.
import { createRequire } from 'node:module';
import type { ApiClient as ApiClientFn, Customer, Order } from '@utrustdev/utrust-ts-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  aStore,
  cancelOnPayPage,
  cryptoHooks,
  orderOf,
  pay,
  type TestStore,
} from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

const require = createRequire(import.meta.url);
const library = require('@utrustdev/utrust-ts-library') as { ApiClient: typeof ApiClientFn };
const addresses = require('@utrustdev/utrust-ts-library/dist/ApiClient.js') as { SANDBOX_URL: string };

let h: Harness;
let receiver: WebhookReceiver;
let store: TestStore;
let client: ReturnType<typeof ApiClientFn>;

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  store = await aStore(h, { webhookUrl: receiver.url('/utrust') });
  addresses.SANDBOX_URL = `${h.baseUrl}/crypto/api/`;
  client = library.ApiClient(store.key, 'sandbox');
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

const customer: Customer = {
  email: 'buyer@example.com',
  country: 'PT',
  first_name: 'Ana',
  last_name: 'Silva',
};
const anOrder = (reference: string, total = '10.90'): Order => ({
  reference,
  amount: { total, currency: 'EUR', details: { subtotal: total } },
  return_urls: { return_url: receiver.url('/return'), cancel_url: receiver.url('/cancel') },
  line_items: [{ sku: 'mug-1', name: 'Mug', price: total, currency: 'EUR', quantity: 1 }],
});

async function created(reference: string, total?: string): Promise<string> {
  const answer = await client.createOrder(anOrder(reference, total), customer);
  expect(answer).toMatchObject({ status: 201, errors: [] });
  if (!answer.data) throw new Error('no order');
  return answer.data.uuid;
}

describe('ApiClient', () => {
  it('createOrder posts to stores/orders/ (trailing slash) and gets the redirect URL and uuid', async () => {
    const answer = await client.createOrder(anOrder('utrust-1'), customer);
    expect(answer.status).toBe(201);
    expect(answer.errors).toEqual([]);
    expect(answer.data?.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.data?.redirectUrl).toBe(
      `${h.baseUrl}/crypto/pay/${answer.data?.uuid}?uuid=${answer.data?.uuid}`,
    );
  });

  it('getOrder answers the OrderView the library declares', async () => {
    const uuid = await created('utrust-2');
    const answer = await client.getOrder(uuid);
    expect(answer.status).toBe(200);
    expect(answer.data).toMatchObject({
      id: uuid,
      merchant_uuid: store.id,
      reference: 'utrust-2',
      status: 'pending',
      created_at: expect.any(String),
      customer: { email: 'buyer@example.com', country: 'PT' },
      items: [{ sku: 'mug-1', name: 'Mug', price: '10.90', currency: 'EUR', quantity: 1 }],
      total_amount: { currency: 'EUR', value: '10.90' },
      pricing_details: { subtotal: { currency: 'EUR', value: '10.90' } },
    });
  });

  it('reports errors as the library expects them: status and the JSON:API errors', async () => {
    const bad = await client.createOrder(
      { ...anOrder('utrust-3'), amount: { total: '-1', currency: 'EUR' } },
      customer,
    );
    expect(bad.status).toBe(400);
    expect(bad.data).toBeNull();
    expect(bad.errors?.[0]).toMatchObject({ source: { pointer: expect.stringContaining('amount') } });
    const unknown = await client.getOrder('00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    const stranger = library.ApiClient('u_test_not-a-key', 'sandbox');
    expect((await stranger.getOrder(await created('utrust-4'))).status).toBe(401);
  });
});

describe('WebhookValidator', () => {
  it('validates every kind of webhook Tessera sends, whose body is exactly the real service’s', async () => {
    const sandbox = { authorization: `Bearer ${h.adminToken}` };
    const act = (path: string) => h.request('POST', path, { headers: sandbox });
    // Paid (detected, received), then a late transfer.
    const paid = await created('kinds-paid');
    await pay(h, paid);
    await h.advanceClock(150);
    await pay(h, paid, { amount: '1' });
    await h.advanceClock(150);
    // Partly paid, then expired; an unpaid order expired; one canceled by the buyer.
    const partial = await created('kinds-partial', '100.00');
    await pay(h, partial, { amount: '50' });
    const unpaid = await created('kinds-unpaid');
    await h.advanceClock(150);
    await h.advanceClock(15 * 60);
    const canceled = await created('kinds-canceled');
    expect((await cancelOnPayPage(h, canceled)).status).toBe(200);
    // Refunds: proposed, rejected, proposed again, accepted, completed; and one left to expire.
    const paymentOf = async (id: string) => (await orderOf(h, store, id)).payment_uuid ?? '';
    const propose = (paymentId: string) =>
      h.request('POST', `/crypto/api/stores/refund/${paymentId}`, {
        headers: store.auth,
        json: { data: { type: 'refunds', attributes: { amount: '2.00', reason: 'customer demand' } } },
      });
    const refunded = await paymentOf(paid);
    expect((await propose(refunded)).status).toBe(201);
    expect((await act(`/sandbox/crypto/refunds/${refunded}/reject`)).status).toBe(200);
    expect((await propose(refunded)).status).toBe(201);
    expect((await act(`/sandbox/crypto/refunds/${refunded}/accept`)).status).toBe(200);
    await h.advanceClock(150);
    const another = await created('kinds-refund-expiring');
    await pay(h, another);
    await h.advanceClock(150);
    expect((await propose(await paymentOf(another))).status).toBe(201);
    await h.advanceClock(30 * 24 * 3600);

    // An order's cancellation and its expiry are one event type told apart by the order's status.
    const kinds = new Set<string>();
    const kindOf = (hook: { event_type: string; resource: Record<string, string> }) =>
      hook.event_type === 'ORDER.PAYMENT.CANCELLED'
        ? `${hook.event_type} ${hook.resource.status}`
        : hook.event_type;
    const expected: [string, number][] = [
      [paid, 3],
      [partial, 3],
      [unpaid, 1],
      [canceled, 1],
      [another, 4],
    ];
    for (const [orderId, count] of expected) {
      // cryptoHooks holds each delivery to the wire format and the Utrust validator.
      for (const hook of await cryptoHooks(h, store, receiver, { orderId }, count)) {
        kinds.add(kindOf(hook));
      }
    }
    for (const hook of await cryptoHooks(h, store, receiver, { paymentId: refunded, refunds: true }, 5)) {
      kinds.add(kindOf(hook));
    }
    expect([...kinds].sort()).toEqual(
      [
        'ORDER.PAYMENT.DETECTED',
        'ORDER.PAYMENT.RECEIVED',
        'ORDER.PAYMENT.LATE',
        'ORDER.PAYMENT.PARTIAL',
        'ORDER.PAYMENT.CANCELLED expired',
        'ORDER.PAYMENT.CANCELLED canceled',
        'ORDER.REFUND.PROPOSED',
        'ORDER.REFUND.REJECTED',
        'ORDER.REFUND.ACCEPTED',
        'ORDER.REFUND.COMPLETED',
        'ORDER.REFUND.EXPIRED',
      ].sort(),
    );
  });
});
