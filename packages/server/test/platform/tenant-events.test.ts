// Each API's tenant recovers its own webhooks, in its API's envelope and under its own credentials: the
// events of an object, by delivery state, one with its attempts, redelivery, replay since a time or an
// event; another tenant's events are 404. (Issuing's partner routes are in test/issuing/events.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anOrder as aCryptoOrder, aStore, pay, type TestStore } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, type TestMerchant } from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

interface Attempt {
  attemptNumber: number;
  statusCode: number | null;
  durationMs: number;
  succeeded: boolean;
}
interface EventDetail {
  eventId: string;
  objectIds: string[];
  deliveryState: string;
  deliveries: { status: string; attempts: Attempt[] }[];
}

describe('payments: a merchant’s IPN events', () => {
  let merchant: TestMerchant;
  let other: TestMerchant;
  const get = <T>(m: TestMerchant, path: string) =>
    h.request<T>('GET', `/payments${path}`, { headers: m.auth });
  const post = <T>(m: TestMerchant, path: string, json?: unknown) =>
    h.request<T>('POST', `/payments${path}`, { headers: m.auth, ...(json ? { json } : {}) });

  beforeAll(async () => {
    receiver.setFallback({ kind: 'answer', status: 500, body: 'down' });
    merchant = await aMerchant(h, { ipnUrl: receiver.url('/ipn'), sites: 2 });
    other = await aMerchant(h);
  });

  it('lists the events of both sites, finds one order’s, and filters by delivery state', async () => {
    const customers = [await aCustomer(h, merchant, { siteId: String(merchant.sites[0]?.id) })];
    customers.push(await aCustomer(h, merchant, { siteId: String(merchant.sites[1]?.id) }));
    const orderIds: number[] = [];
    for (const [i, customerId] of customers.entries()) {
      const res = await h.request<{ data: { orderId: number } }>('POST', '/payments/order', {
        headers: merchant.auth,
        form: anOrder(customerId, { siteId: String(merchant.sites[i]?.id) }),
      });
      expect(res.status).toBe(201);
      orderIds.push(res.body.data.orderId);
    }
    await receiver.waitFor(2, (r) => r.path === '/ipn');

    const all = await get<{ code: number; data: { eventId: string; tenantId: string }[]; nextCursor: null }>(
      merchant,
      '/events',
    );
    expect(all.status).toBe(200);
    expect(all.body.code).toBe(200);
    expect(new Set(all.body.data.map((e) => e.tenantId))).toEqual(
      new Set(merchant.sites.map((s) => String(s.id))),
    );

    const ofOrder = await get<{ data: { objectIds: string[] }[] }>(
      merchant,
      `/events?objectId=${orderIds[0]}`,
    );
    expect(ofOrder.body.data.length).toBeGreaterThan(0);
    for (const event of ofOrder.body.data) expect(event.objectIds).toContain(String(orderIds[0]));

    // The receiver answered 500: the first attempts failed, the retries are pending.
    const pending = await get<{ data: { deliveryState: string }[] }>(
      merchant,
      '/events?deliveryState=pending',
    );
    expect(pending.body.data.length).toBe(all.body.data.length);
    expect((await get<{ data: unknown[] }>(merchant, '/events?deliveryState=succeeded')).body.data).toEqual(
      [],
    );

    const paged = await get<{ data: unknown[]; nextCursor: string }>(merchant, '/events?limit=1');
    expect(paged.body.data).toHaveLength(1);
    const second = await get<{ data: unknown[] }>(
      merchant,
      `/events?limit=1&cursor=${paged.body.nextCursor}`,
    );
    expect(second.body.data).toHaveLength(1);
    expect(second.body.data).not.toEqual(paged.body.data);
  });

  it('shows one event with its attempts, redelivers it, and replays after an event', async () => {
    const [newest, older] = (await get<{ data: { eventId: string }[] }>(merchant, '/events')).body.data;
    const detail = await get<{ data: EventDetail }>(merchant, `/events/${newest?.eventId}`);
    expect(detail.status).toBe(200);
    const attempt = detail.body.data.deliveries[0]?.attempts[0];
    expect(attempt).toMatchObject({ attemptNumber: 1, statusCode: 500, succeeded: false });
    expect(attempt?.durationMs).toEqual(expect.any(Number));

    receiver.setFallback({ kind: 'answer', status: 200, body: 'OK' });
    const before = receiver.received.length;
    const redelivered = await post<{ code: number; data: { deliveryId: string } }>(
      merchant,
      `/events/${newest?.eventId}/redeliver`,
    );
    expect(redelivered.status).toBe(202);
    expect(redelivered.body.data.deliveryId).toEqual(expect.any(String));
    await receiver.waitFor(before + 1);

    const replayed = await post<{ data: { replayed: number } }>(merchant, '/events/replay', {
      afterEventId: older?.eventId,
    });
    expect(replayed.status).toBe(202);
    expect(replayed.body.data.replayed).toBe(1);
  });

  it('refuses a bad replay in the payments envelope, and shows another merchant nothing', async () => {
    const both = await post<{ error: { field: string; type: string }[] }>(merchant, '/events/replay', {
      since: new Date().toISOString(),
      afterEventId: 'evt_x',
    });
    expect(both.status).toBe(400);
    expect(both.body.error[0]).toMatchObject({ type: 'Validation', field: 'since' });
    expect((await post(merchant, '/events/replay', {})).status).toBe(400);
    expect((await get(merchant, '/events?deliveryState=lost')).status).toBe(400);

    const [event] = (await get<{ data: { eventId: string }[] }>(merchant, '/events')).body.data;
    expect((await get(other, `/events/${event?.eventId}`)).status).toBe(404);
    expect((await post(other, `/events/${event?.eventId}/redeliver`)).status).toBe(404);
    expect((await post(other, '/events/replay', { afterEventId: event?.eventId })).status).toBe(404);
    expect((await get<{ data: unknown[] }>(other, '/events')).body.data).toEqual([]);
    expect((await h.request('GET', '/payments/events')).status).toBe(401);
  });
});

describe('crypto: a store’s webhook events', () => {
  let store: TestStore;
  let other: TestStore;
  const get = <T>(s: TestStore, path: string) =>
    h.request<T>('GET', `/crypto/api${path}`, { headers: s.auth });
  const post = <T>(s: TestStore, path: string, json?: unknown) =>
    h.request<T>('POST', `/crypto/api${path}`, { headers: s.auth, ...(json ? { json } : {}) });

  beforeAll(async () => {
    receiver.setFallback({ kind: 'answer', status: 200, body: 'OK' });
    store = await aStore(h, { webhookUrl: receiver.url('/crypto') });
    other = await aStore(h);
  });

  it('lists JSON:API resources with a next link, finds an order’s events, reads, redelivers and replays', async () => {
    const order = await aCryptoOrder(h, store);
    expect((await pay(h, order.id)).status).toBeLessThan(300);
    await h.advanceClock(3600);
    await receiver.waitFor(2, (r) => r.path === '/crypto');

    const list = await get<{
      data: { type: string; id: string; attributes: { objectIds: string[]; deliveryState: string } }[];
      links: { next: string | null };
    }>(store, `/stores/events?objectId=${order.id}&limit=1`);
    expect(list.status).toBe(200);
    expect(list.body.data[0]).toMatchObject({ type: 'events', attributes: { deliveryState: 'succeeded' } });
    expect(list.body.data[0]?.attributes.objectIds).toContain(order.id);
    expect(list.body.links.next).toMatch(/cursor=/);
    const next = await h.request<{ data: unknown[] }>('GET', list.body.links.next ?? '', {
      headers: store.auth,
    });
    expect(next.body.data).toHaveLength(1);

    const id = list.body.data[0]?.id;
    const detail = await get<{ data: { id: string; attributes: EventDetail } }>(
      store,
      `/stores/events/${id}`,
    );
    expect(detail.body.data.attributes.deliveries[0]?.attempts[0]).toMatchObject({
      statusCode: 200,
      succeeded: true,
    });

    const redelivered = await post<{ data: { type: string } }>(store, `/stores/events/${id}/redeliver`);
    expect(redelivered.status).toBe(202);
    expect(redelivered.body.data.type).toBe('deliveries');
    const replayed = await post<{ data: { attributes: { replayed: number } } }>(
      store,
      '/stores/events/replay',
      {
        since: new Date(0).toISOString(),
      },
    );
    expect(replayed.status).toBe(202);
    expect(replayed.body.data.attributes.replayed).toBeGreaterThanOrEqual(2);

    const foreign = await get<{ errors: { detail: string }[] }>(other, `/stores/events/${id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.errors[0]?.detail).toEqual(expect.any(String));
    expect((await get<{ data: unknown[] }>(other, '/stores/events')).body.data).toEqual([]);
  });
});
