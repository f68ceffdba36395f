// The webhook engine end to end: outbox → pg-boss → signed HTTP to a real receiver, retries on the
// sandbox clock, the attempt log, redelivery and replay.
import { decryptIpn, verifyCryptoWebhook, verifyIssuingWebhook } from '@tessera/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { WebhookApi } from '../../src/platform/db/schema.ts';
import { HttpSender } from '../../src/platform/webhooks/http-sender.ts';
import { SsrfGuard } from '../../src/platform/webhooks/ssrf-guard.ts';
import { eventually, Harness } from '../harness/harness.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

const TIMEOUT_MS = 600;
let h: Harness;
let receiver: WebhookReceiver;
let partner: { id: string; webhookSigningKey: string };
let store: { id: string; webhookSecret: string };
let site: { id: number; ipnSecret: string };

interface EventDetail {
  eventId: string;
  deliveries: {
    deliveryId: string;
    status: string;
    reason: string;
    attemptCount: number;
    nextAttemptAt: string | null;
    attempts: {
      deliveryAttemptId: string;
      attemptNumber: number;
      statusCode: number | null;
      error: string | null;
      succeeded: boolean;
      responseExcerpt: string | null;
      durationMs: number;
    }[];
  }[];
}

beforeAll(async () => {
  h = await Harness.start({ env: { TESSERA_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) } });
  receiver = await WebhookReceiver.start();
  partner = (
    await h.admin<typeof partner>('POST', '/partners', {
      json: { name: 'Hooks partner', webhookUrl: receiver.url('/issuing') },
    })
  ).body;
  store = (
    await h.admin<typeof store>('POST', '/stores', {
      json: { name: 'Hooks store', webhookUrl: receiver.url('/crypto') },
    })
  ).body;
  const merchant = await h.admin<{ sites: (typeof site)[] }>('POST', '/merchants', {
    json: { name: 'Hooks merchant', sites: [{ name: 'shop', ipnUrl: receiver.url('/ipn') }] },
  });
  site = merchant.body.sites[0] as typeof site;
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});
beforeEach(() => {
  receiver.received.length = 0;
  receiver.setFallback({ kind: 'answer', status: 200, body: 'OK' });
});

async function publish(
  api: WebhookApi,
  tenantId: string,
  body: (eventId: string) => Record<string, unknown>,
  targetUrl?: string,
) {
  const { eventId } = await h.services.transact((tx) =>
    h.services.outbox.publish(tx, {
      api,
      tenantId,
      type: 'test.event',
      body,
      ...(targetUrl ? { targetUrl } : {}),
    }),
  );
  return eventId;
}

const issuingEvent = () =>
  publish('issuing', partner.id, (eventId) => ({
    eventType: 'cardStatusChanged',
    eventId,
    customerId: 'cust_01TEST',
    data: { cardId: '5b1c7f0e-0000-4000-8000-000000000001', newStatus: 'frozen' },
  }));

const detail = async (eventId: string) => (await h.admin<EventDetail>('GET', `/events/${eventId}`)).body;
const attemptsOf = async (eventId: string, n: number) =>
  eventually(async () => {
    const d = await detail(eventId);
    const attempts = d.deliveries.flatMap((x) => x.attempts);
    return attempts.length >= n ? d : undefined;
  });

describe('issuing channel', () => {
  it('POSTs the exact body with an HS512 JWS of it and a delivery id', async () => {
    const eventId = await issuingEvent();
    const [request] = await receiver.waitFor(1);
    expect(request?.path).toBe('/issuing');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['x-service-delivery-id']).toMatch(/^[0-9a-f-]{36}$/);
    const event = await verifyIssuingWebhook<{ eventId: string; eventType: string }>(
      request?.body ?? '',
      request?.headers['x-service-signature'] as string,
      partner.webhookSigningKey,
    );
    expect(event).toMatchObject({ eventId, eventType: 'cardStatusChanged' });
    const d = await attemptsOf(eventId, 1);
    expect(d.deliveries[0]).toMatchObject({ status: 'succeeded', attemptCount: 1, reason: 'event' });
    expect(d.deliveries[0]?.attempts[0]).toMatchObject({
      statusCode: 200,
      succeeded: true,
      error: null,
      responseExcerpt: 'OK',
    });
  });

  it('retries after 5 s then 10 s on the sandbox clock, with a new delivery id per attempt', async () => {
    receiver.respondWith({ kind: 'answer', status: 500, body: 'boom' }, { kind: 'answer', status: 503 });
    const eventId = await issuingEvent();
    await attemptsOf(eventId, 1);
    expect((await h.advanceClock(4)).processed['webhook-deliveries']).toBe(0);
    expect(receiver.received).toHaveLength(1);
    expect((await h.advanceClock(1)).processed['webhook-deliveries']).toBe(1);
    expect(receiver.received).toHaveLength(2);
    expect((await h.advanceClock(9)).processed['webhook-deliveries']).toBe(0);
    expect((await h.advanceClock(1)).processed['webhook-deliveries']).toBe(1);
    expect(receiver.received).toHaveLength(3);
    const ids = receiver.received.map((r) => r.headers['x-service-delivery-id']);
    expect(new Set(ids).size).toBe(3);
    expect(new Set(receiver.received.map((r) => JSON.parse(r.body).eventId))).toEqual(new Set([eventId]));
    const d = await detail(eventId);
    expect(d.deliveries[0]?.status).toBe('succeeded');
    expect(d.deliveries[0]?.attempts.map((a) => a.statusCode)).toEqual([500, 503, 200]);
    expect(d.deliveries[0]?.attempts.map((a) => a.deliveryAttemptId)).toEqual(ids);
    expect(d.deliveries[0]?.attempts[0]).toMatchObject({
      succeeded: false,
      error: 'not acknowledged: HTTP 500',
      responseExcerpt: 'boom',
    });
  });

  it('with waiting off, gives up after 3 attempts in all as the spec says; redelivery sends it again', async () => {
    const off = await h.admin('PATCH', `/partners/${partner.id}`, {
      json: { webhookRedeliverWhenBack: false },
    });
    expect(off.body).toMatchObject({ webhookRedeliverWhenBack: false });
    receiver.setFallback({ kind: 'answer', status: 500 });
    const eventId = await issuingEvent();
    await attemptsOf(eventId, 1);
    await h.advanceClock(5);
    await h.advanceClock(10);
    expect((await h.advanceClock(3600)).processed['webhook-deliveries']).toBe(0);
    expect(receiver.received).toHaveLength(3);
    const failed = await detail(eventId);
    expect(failed.deliveries[0]).toMatchObject({ status: 'failed', attemptCount: 3, nextAttemptAt: null });

    receiver.setFallback({ kind: 'answer', status: 204 });
    const redelivery = await h.admin<{ deliveryId: string }>('POST', `/events/${eventId}/redeliver`);
    expect(redelivery.status).toBe(202);
    await receiver.waitFor(4);
    const after = await attemptsOf(eventId, 4);
    expect(after.deliveries.map((d) => [d.reason, d.status])).toEqual([
      ['event', 'failed'],
      ['redelivery', 'succeeded'],
    ]);
    expect(JSON.parse(receiver.received[3]?.body ?? '{}').eventId).toBe(eventId);
    await h.admin('PATCH', `/partners/${partner.id}`, { json: { webhookRedeliverWhenBack: true } });
  });

  it('loses nothing when the receiver hangs, resets the connection, or answers 2xx too late', async () => {
    receiver.respondWith(
      { kind: 'hang' },
      { kind: 'reset' },
      { kind: 'answer', status: 200, delayMs: TIMEOUT_MS * 3 },
    );
    const eventId = await issuingEvent();
    const first = await attemptsOf(eventId, 1);
    expect(first.deliveries[0]?.attempts[0]?.error).toMatch(/^timeout/);
    await h.advanceClock(5);
    const second = await detail(eventId);
    expect(second.deliveries[0]?.attempts[1]?.error).toMatch(/ECONNRESET|socket hang up/);
    await h.advanceClock(10);
    const third = await detail(eventId);
    expect(third.deliveries[0]?.attempts[2]?.error).toMatch(/^timeout/);
    expect(third.deliveries[0]?.status).toBe('waiting');
    // The operator (or the partner) redelivers it, and this time the receiver answers: the waiting
    // delivery ends with it, so the event is not delivered a second time when the endpoint is back.
    await h.admin('POST', `/events/${eventId}/redeliver`);
    const done = await attemptsOf(eventId, 4);
    expect(done.deliveries.map((d) => d.status)).toEqual(['failed', 'succeeded']);
    const received = receiver.received.length;
    await h.advanceClock(600);
    expect(receiver.received).toHaveLength(received);
  });
});

describe('issuing: waiting deliveries (beyond the spec’s three attempts)', () => {
  let waiting: { id: string };
  let hooks: WebhookReceiver;
  const eventOf = () =>
    publish('issuing', waiting.id, (eventId) => ({
      eventType: 'cardStatusChanged',
      eventId,
      customerId: 'c',
    }));
  const succeededIds = () =>
    hooks.received.filter((_, i) => i >= 0).map((r) => JSON.parse(r.body).eventId as string);

  beforeAll(async () => {
    hooks = await WebhookReceiver.start();
    waiting = (
      await h.admin<typeof waiting>('POST', '/partners', {
        json: { name: 'Waiting partner', webhookUrl: hooks.url('/partner') },
      })
    ).body;
  });
  afterAll(() => hooks.close());
  beforeEach(() => {
    hooks.received.length = 0;
  });

  /** Events published a second apart (their order is their time) whose three attempts all fail. */
  async function eventsThroughAnOutage(count: number): Promise<string[]> {
    hooks.setFallback({ kind: 'answer', status: 500, body: 'down' });
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const id = await eventOf();
      await attemptsOf(id, 1);
      ids.push(id);
      await h.advanceClock(1);
    }
    await h.advanceClock(5);
    await h.advanceClock(10);
    for (const id of ids) {
      expect((await detail(id)).deliveries[0]).toMatchObject({ status: 'waiting', attemptCount: 3 });
    }
    return ids;
  }

  it('an outage of an hour loses no event: a probe finds the endpoint back, and all arrive in order, once', async () => {
    const ids = await eventsThroughAnOutage(5);
    expect(hooks.received).toHaveLength(15);
    // An hour of outage: every five minutes the oldest waiting event probes the endpoint, and fails.
    for (let minute = 0; minute < 60; minute += 5) await h.advanceClock(300);
    expect(hooks.received).toHaveLength(15 + 12);
    expect(new Set(hooks.received.slice(15).map((r) => JSON.parse(r.body).eventId))).toEqual(
      new Set([ids[0]]),
    );
    const listed = await h.admin<{ data: { eventId: string }[] }>(
      'GET',
      `/events?api=issuing&tenantId=${waiting.id}&deliveryState=waiting`,
    );
    expect(listed.body.data.map((e) => e.eventId).sort()).toEqual([...ids].sort());

    hooks.setFallback({ kind: 'answer', status: 200, body: 'OK' });
    hooks.received.length = 0;
    await h.advanceClock(300);
    expect(succeededIds()).toEqual(ids);
    for (const id of ids) expect((await detail(id)).deliveries.map((d) => d.status)).toEqual(['succeeded']);
    await h.advanceClock(3600);
    expect(hooks.received).toHaveLength(ids.length);
  });

  it('the next event that is delivered brings the waiting ones after it, oldest first', async () => {
    const ids = await eventsThroughAnOutage(2);
    hooks.setFallback({ kind: 'answer', status: 204 });
    hooks.received.length = 0;
    const next = await eventOf();
    await hooks.waitFor(1);
    // Its success is recorded once the answer is read: only then may what waits follow it.
    await eventually(async () =>
      (await detail(next)).deliveries[0]?.status === 'succeeded' ? true : undefined,
    );
    await h.advanceClock(1); // the sweep that delivers what waits (well before the next probe)
    expect(succeededIds()).toEqual([next, ...ids]);
    for (const id of ids) expect((await detail(id)).deliveries[0]?.status).toBe('succeeded');
  });

  it('events wait while the partner has no URL, and go to the URL set later', async () => {
    const [id] = await eventsThroughAnOutage(1);
    await h.admin('PATCH', `/partners/${waiting.id}`, { json: { webhookUrl: null } });
    hooks.setFallback({ kind: 'answer', status: 200 });
    hooks.received.length = 0;
    await h.advanceClock(300);
    await h.advanceClock(1);
    expect(hooks.received).toHaveLength(0);
    expect((await detail(id as string)).deliveries[0]?.status).toBe('waiting');
    await h.admin('PATCH', `/partners/${waiting.id}`, { json: { webhookUrl: hooks.url('/moved') } });
    await h.advanceClock(300);
    expect(hooks.received.map((r) => [r.path, JSON.parse(r.body).eventId])).toEqual([['/moved', id]]);
    await h.admin('PATCH', `/partners/${waiting.id}`, { json: { webhookUrl: hooks.url('/partner') } });
  });

  it('a probe that fails again keeps every event waiting for the next probe, the order kept', async () => {
    const ids = await eventsThroughAnOutage(3);
    hooks.received.length = 0;
    // Back for one answer only: the oldest is delivered, the next fails and everything waits again.
    hooks.respondWith({ kind: 'answer', status: 200 });
    await h.advanceClock(300);
    expect(hooks.received.map((r) => JSON.parse(r.body).eventId)).toEqual([ids[0], ids[1]]);
    expect((await detail(ids[1] as string)).deliveries[0]?.status).toBe('waiting');
    await h.advanceClock(299);
    expect(hooks.received).toHaveLength(2);
    hooks.setFallback({ kind: 'answer', status: 200 });
    await h.advanceClock(1);
    expect(hooks.received.map((r) => JSON.parse(r.body).eventId)).toEqual([ids[0], ids[1], ids[1], ids[2]]);
  });
});

describe('crypto channel', () => {
  it('signs with the body field scheme, keys sorted, verifiable with the store secret', async () => {
    const eventId = await publish('crypto', store.id, () => ({
      event_type: 'ORDER.PAYMENT.RECEIVED',
      resource: { reference: 'order-1977', amount: '10.90', currency: 'EUR' },
      state: 'completed',
    }));
    const [request] = await receiver.waitFor(1);
    expect(request?.path).toBe('/crypto');
    const body = verifyCryptoWebhook<{ event_type: string; signature: string }>(
      request?.body ?? '',
      store.webhookSecret,
    );
    expect(body.event_type).toBe('ORDER.PAYMENT.RECEIVED');
    expect(Object.keys(JSON.parse(request?.body ?? '{}'))).toEqual([
      'event_type',
      'resource',
      'signature',
      'state',
    ]);
    expect((await attemptsOf(eventId, 1)).deliveries[0]?.status).toBe('succeeded');
  });

  it('goes to an explicit callback URL when the event names one', async () => {
    await publish(
      'crypto',
      store.id,
      () => ({ event_type: 'X', resource: {}, state: 's' }),
      receiver.url('/callback'),
    );
    const [request] = await receiver.waitFor(1);
    expect(request?.path).toBe('/callback');
  });

  it('retries 15 times at Fibonacci minutes after the first attempt, then stops', async () => {
    receiver.setFallback({ kind: 'answer', status: 502 });
    const eventId = await publish('crypto', store.id, () => ({ event_type: 'X', resource: {}, state: 's' }));
    await attemptsOf(eventId, 1);
    const fibonacci = [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987];
    for (const minutes of fibonacci) {
      expect((await h.advanceClock(minutes * 60 - 1)).processed['webhook-deliveries']).toBe(0);
      expect((await h.advanceClock(1)).processed['webhook-deliveries']).toBe(1);
    }
    expect((await h.advanceClock(86_400)).processed['webhook-deliveries']).toBe(0);
    const d = await detail(eventId);
    expect(d.deliveries[0]).toMatchObject({ status: 'failed', attemptCount: 16 });
  });
});

describe('payments IPN channel', () => {
  it('posts opensslResult (and result) as AES-256-CBC under the site secret', async () => {
    await publish('payments', String(site.id), () => ({
      status: 'complete-ok',
      orderId: 1,
      externalCustomData: '{"a":1}',
    }));
    const [request] = await receiver.waitFor(1);
    expect(request?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(request?.body);
    expect(form.get('result')).toBe(form.get('opensslResult'));
    expect(decryptIpn(form.get('opensslResult') ?? '', site.ipnSecret)).toEqual({
      status: 'complete-ok',
      orderId: 1,
      externalCustomData: '{"a":1}',
    });
  });

  it('counts only 200 with body OK, retrying after 1 min, 5 min, 1 h and 24 h', async () => {
    receiver.setFallback({ kind: 'answer', status: 200, body: 'received' });
    const eventId = await publish('payments', String(site.id), () => ({ status: 'complete-ok' }));
    await attemptsOf(eventId, 1);
    for (const seconds of [60, 300, 3600, 86_400]) {
      expect((await h.advanceClock(seconds - 1)).processed['webhook-deliveries']).toBe(0);
      expect((await h.advanceClock(1)).processed['webhook-deliveries']).toBe(1);
    }
    const d = await detail(eventId);
    expect(d.deliveries[0]).toMatchObject({ status: 'failed', attemptCount: 5 });
    expect(d.deliveries[0]?.attempts.every((a) => a.statusCode === 200 && !a.succeeded)).toBe(true);

    receiver.setFallback({ kind: 'answer', status: 200, body: 'OK\n' });
    await h.admin('POST', `/events/${eventId}/redeliver`);
    expect((await attemptsOf(eventId, 6)).deliveries[1]?.status).toBe('succeeded');
  });
});

describe('outbox', () => {
  it('writes nothing when the business transaction rolls back', async () => {
    let eventId = '';
    await expect(
      h.services.transact(async (tx) => {
        eventId = (
          await h.services.outbox.publish(tx, {
            api: 'issuing',
            tenantId: partner.id,
            type: 't',
            body: () => ({}),
          })
        ).eventId;
        throw new Error('business rule failed');
      }),
    ).rejects.toThrow('business rule failed');
    expect((await h.admin('GET', `/events/${eventId}`)).status).toBe(404);
    expect(await h.advanceClock(60)).toMatchObject({ processed: { 'webhook-deliveries': 0 } });
    expect(receiver.received).toHaveLength(0);
  });

  it('keeps events of a tenant without a URL listable; redelivery then says why it cannot', async () => {
    const quiet = await h.admin<{ id: string }>('POST', '/partners', { json: { name: 'No URL' } });
    const eventId = await publish('issuing', quiet.body.id, (id) => ({ eventType: 't', eventId: id }));
    expect((await detail(eventId)).deliveries).toEqual([]);
    const redeliver = await h.admin<{ error: { code: string; message: string } }>(
      'POST',
      `/events/${eventId}/redeliver`,
    );
    expect(redeliver.status).toBe(409);
    expect(redeliver.body.error.message).toMatch(/no webhook URL/);
  });

  it('replays every event since a time (delivery order is not promised: consumers expect any order)', async () => {
    const before = await h.advanceClock(60);
    const a = await issuingEvent();
    await h.advanceClock(60);
    const since = (await h.advanceClock(60)).now;
    const b = await issuingEvent();
    const c = await issuingEvent();
    await receiver.waitFor(3);
    const replay = await h.admin<{ replayed: number; isTruncated: boolean }>('POST', '/events/replay', {
      json: { since, api: 'issuing', tenantId: partner.id },
    });
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual({ replayed: 2, skippedWithoutUrl: 0, isTruncated: false });
    const all = await receiver.waitFor(5);
    const received = all.map((r) => JSON.parse(r.body).eventId as string).sort();
    expect(received).toEqual([a, b, b, c, c].sort());
    expect(before.now < since).toBe(true);
    for (const eventId of [b, c]) {
      expect((await attemptsOf(eventId, 2)).deliveries.map((d) => d.reason)).toEqual(['event', 'replay']);
    }
    expect((await detail(a)).deliveries.map((d) => d.reason)).toEqual(['event']);
  });
});

describe('admin events API', () => {
  it('lists with filters and a cursor, newest first', async () => {
    const first = await issuingEvent();
    const second = await issuingEvent();
    const page = await h.admin<{ data: { eventId: string }[]; nextCursor: string }>(
      'GET',
      `/events?api=issuing&tenantId=${partner.id}&limit=1`,
    );
    expect(page.body.data.map((e) => e.eventId)).toEqual([second]);
    const next = await h.admin<{ data: { eventId: string }[] }>(
      'GET',
      `/events?api=issuing&tenantId=${partner.id}&limit=1&cursor=${page.body.nextCursor}`,
    );
    expect(next.body.data.map((e) => e.eventId)).toEqual([first]);
    const crypto = await h.admin<{ data: { api: string }[] }>('GET', '/events?api=crypto&limit=200');
    expect(crypto.body.data.every((e) => e.api === 'crypto')).toBe(true);
  });

  it('refuses bad filters and unknown ids, in the admin envelope', async () => {
    const bad = await h.admin<{ error: { code: string; field: string } }>('GET', '/events?api=bank');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'validation_failed', field: 'api' });
    expect((await h.admin('GET', '/events?limit=500')).status).toBe(400);
    expect((await h.admin('GET', '/events?since=yesterday')).status).toBe(400);
    expect((await h.admin('GET', '/events/evt_unknown')).status).toBe(404);
    expect((await h.admin('POST', '/events/evt_unknown/redeliver')).status).toBe(404);
    const replay = await h.admin<{ error: { field: string } }>('POST', '/events/replay', { json: {} });
    expect(replay.status).toBe(400);
    expect(replay.body.error.field).toBe('since');
  });

  it('requires the admin token', async () => {
    expect((await h.request('GET', '/admin/events')).status).toBe(401);
    expect(
      (
        await h.request('POST', '/admin/events/replay', {
          headers: { authorization: 'Bearer nope' },
          json: {},
        })
      ).status,
    ).toBe(401);
  });
});

describe('SSRF guard at delivery time', () => {
  it('refuses a loopback receiver when enforced, without connecting', async () => {
    const sender = new HttpSender(new SsrfGuard(true), 1000);
    const result = await sender.post({ url: receiver.url('/guarded'), headers: {}, body: '{}' });
    expect(result.error).toMatch(/^refused/);
    expect(receiver.received).toHaveLength(0);
  });
});
