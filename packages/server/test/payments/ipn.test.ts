// The IPN's delivery: an answer other than 200 "OK" is retried on the service's schedule (1 min, 5 min,
// 1 h, 24 h on the sandbox clock), every attempt is in the delivery log, and the operator can redeliver
// it (same eventId). The plaintext is the service's JSON, decrypted with the site's IPN secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, Harness } from '../harness/harness.ts';
import {
  aCustomer,
  aMerchant,
  anOrder,
  decryptIpns,
  payments,
  type TestMerchant,
} from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let m: TestMerchant;

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  m = await aMerchant(h, { ipnUrl: receiver.url('/ipn') });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

type EventDetail = {
  eventId: string;
  payload: { status: string };
  deliveries: { status: string; attempts: { succeeded: boolean; statusCode: number | null }[] }[];
};

describe('IPN delivery', () => {
  it('retries until the receiver answers OK, logs every attempt, and redelivers on request', async () => {
    receiver.respondWith({ kind: 'answer', status: 200, body: 'received' }, { kind: 'answer', status: 500 });
    const customerId = await aCustomer(h, m, { identifier: 'ipn-buyer' });
    const order = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, { externalOrderId: 'shop-1001', externalCustomData: '{"basket":[1,2]}' }),
    );
    await receiver.waitFor(1);
    const eventId = decryptIpns(receiver, m.sites[0]?.ipnSecret ?? '')[0]?.eventId as string;
    // Each failed attempt is recorded (with its next due time) just after the answer arrives.
    const attemptsLogged = (n: number) =>
      eventually(async () => {
        const d = await h.admin<EventDetail>('GET', `/events/${eventId}`);
        return (d.body.deliveries[0]?.attempts.length ?? 0) >= n ? true : undefined;
      });
    await attemptsLogged(1);
    await h.advanceClock(60);
    await receiver.waitFor(2);
    await attemptsLogged(2);
    await h.advanceClock(300);
    await receiver.waitFor(3);
    await attemptsLogged(3);

    const ipns = decryptIpns(receiver, m.sites[0]?.ipnSecret ?? '');
    expect(new Set(ipns.map((i) => i.eventId)).size).toBe(1);
    expect(ipns[0]).toMatchObject({
      status: 'complete-ok',
      transactionStatus: 'complete-ok',
      orderStatus: 'complete-ok',
      orderId: order.body.data.orderId,
      externalOrderId: 'shop-1001',
      transactionId: order.body.data.transactionId,
      transactionMethod: 'card',
      customerId,
      identifier: 'ipn-buyer',
      amount: 10.9,
      currency: 'EUR',
      externalCustomData: '{"basket":[1,2]}',
      timestamp: expect.any(Number),
    });
    expect(receiver.received[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');

    const list = await h.admin<{ data: { eventId: string }[] }>(
      'GET',
      `/events?api=payments&tenantId=${m.sites[0]?.id}`,
    );
    expect(list.body.data.map((e) => e.eventId)).toContain(eventId);
    const detail = await h.admin<EventDetail>('GET', `/events/${eventId}`);
    expect(detail.body.deliveries[0]?.status).toBe('succeeded');
    expect(detail.body.deliveries[0]?.attempts.map((a) => [a.statusCode, a.succeeded])).toEqual([
      [200, false],
      [500, false],
      [200, true],
    ]);

    const redelivered = await h.admin('POST', `/events/${eventId}/redeliver`);
    expect(redelivered.status).toBe(202);
    await receiver.waitFor(4);
    expect(decryptIpns(receiver, m.sites[0]?.ipnSecret ?? '').at(-1)?.eventId).toBe(eventId);
  });

  it('is not readable with another site’s secret', async () => {
    const other = await aMerchant(h);
    expect(() => decryptIpns(receiver, other.sites[0]?.ipnSecret ?? '')).toThrow();
  });
});

describe('more isolation', () => {
  it('another merchant cannot rebill, refund or list what is not theirs', async () => {
    const customerId = await aCustomer(h, m);
    const managed = await payments(h, m, 'POST', '/order', anOrder(customerId, { orderType: 'managed' }));
    const link = await payments(h, m, 'POST', '/payment-link', { amount: '1.00', currency: 'EUR' });
    const other = await aMerchant(h);
    const rebill = await payments(h, other, 'PATCH', `/order-rebill/${managed.body.data.orderId}`, {
      customerId: String(customerId),
      amount: '1.00',
    });
    expect(rebill.status).toBe(404);
    expect(
      (await payments(h, other, 'DELETE', `/transaction/${managed.body.data.transactionId}`)).status,
    ).toBe(404);
    expect((await payments(h, other, 'GET', '/transaction')).body.data).toEqual([]);
    expect((await payments(h, other, 'GET', '/payment-link')).body.data).toEqual([]);
    expect((await payments(h, other, 'GET', `/card?customerId=${customerId}`)).body.data).toEqual([]);
    expect(link.status).toBe(201);
    // Nothing changed for the owner.
    const read = await payments(h, m, 'GET', `/transaction/${managed.body.data.transactionId}`);
    expect(read.body.data.transactionStatus).toBe('complete-ok');
  });
});
