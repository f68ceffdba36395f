// Issuing webhooks as a partner sees them: the spec's envelope, signed; listing, redelivery and replay
// through the partner's own credentials; another partner's events are 404.
import { verifyIssuingWebhook } from '@tessera/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishIssuingEvent } from '../../src/issuing/events/publish-issuing-event.ts';
import { eventually, Harness } from '../harness/harness.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let partner: { id: string; apiKey: string; webhookSigningKey: string };
let other: { id: string; apiKey: string };

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  partner = (
    await h.admin<typeof partner>('POST', '/partners', {
      json: { name: 'Evented', webhookUrl: receiver.url('/p') },
    })
  ).body;
  other = (await h.admin<typeof other>('POST', '/partners', { json: { name: 'Other' } })).body;
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

const asPartner = (key: string) => ({ 'x-partner-api-key': key });
const publish = (
  partnerId: string,
  eventType: 'kycStatusChanged' | 'cardStatusChanged',
  data: Record<string, unknown>,
) =>
  h.services.transact((tx) =>
    publishIssuingEvent(h.services.outbox, tx, { partnerId, customerId: 'cust_01EXAMPLE', eventType, data }),
  );

describe('issuing events', () => {
  it('are delivered in the spec envelope, signed over the exact body', async () => {
    const { eventId } = await publish(partner.id, 'kycStatusChanged', {
      customerId: 'cust_01EXAMPLE',
      status: 'approved',
    });
    const [request] = await receiver.waitFor(1, (r) => r.body.includes(eventId));
    const body = await verifyIssuingWebhook(
      request?.body ?? '',
      request?.headers['x-service-signature'] as string,
      partner.webhookSigningKey,
    );
    expect(body).toEqual({
      eventType: 'kycStatusChanged',
      eventId,
      customerId: 'cust_01EXAMPLE',
      data: { customerId: 'cust_01EXAMPLE', status: 'approved' },
    });
    expect(Object.keys(JSON.parse(request?.body ?? '{}'))).toEqual([
      'eventType',
      'eventId',
      'customerId',
      'data',
    ]);
  });

  it('are listed, read with attempts, redelivered and replayed by their partner only', async () => {
    const { eventId } = await publish(partner.id, 'cardStatusChanged', { cardId: 'c1', newStatus: 'frozen' });
    await receiver.waitFor(1, (r) => r.body.includes(eventId));
    const listed = await h.request<{ data: { eventId: string; type: string }[] }>(
      'GET',
      '/issuing/v1/events?type=cardStatusChanged',
      {
        headers: asPartner(partner.apiKey),
      },
    );
    expect(listed.body.data.map((e) => e.eventId)).toContain(eventId);
    const detail = await eventually(async () => {
      const res = await h.request<{ deliveries: { attempts: unknown[]; status: string }[] }>(
        'GET',
        `/issuing/v1/events/${eventId}`,
        {
          headers: asPartner(partner.apiKey),
        },
      );
      return res.body.deliveries[0]?.status === 'succeeded' ? res : undefined;
    });
    expect(detail.body.deliveries[0]?.attempts).toHaveLength(1);

    const redelivered = await h.request('POST', `/issuing/v1/events/${eventId}/redeliver`, {
      headers: asPartner(partner.apiKey),
    });
    expect(redelivered.status).toBe(202);
    await receiver.waitFor(2, (r) => r.body.includes(eventId));

    const since = new Date(Date.now() - 3_600_000).toISOString();
    const replay = await h.request<{ replayed: number }>('POST', '/issuing/v1/events/replay', {
      headers: asPartner(partner.apiKey),
      json: { since },
    });
    expect(replay.status).toBe(202);
    expect(replay.body.replayed).toBeGreaterThanOrEqual(2);

    for (const [method, path] of [
      ['GET', `/issuing/v1/events/${eventId}`],
      ['POST', `/issuing/v1/events/${eventId}/redeliver`],
    ] as const) {
      expect((await h.request(method, path, { headers: asPartner(other.apiKey) })).status).toBe(404);
    }
    const othersList = await h.request<{ data: unknown[] }>('GET', '/issuing/v1/events', {
      headers: asPartner(other.apiKey),
    });
    expect(othersList.body.data).toEqual([]);
  });

  it('need the partner API key and valid filters', async () => {
    expect((await h.request('GET', '/issuing/v1/events')).status).toBe(401);
    expect(
      (
        await h.request('POST', '/issuing/v1/events/replay', {
          headers: asPartner('ptk_nope'),
          json: { since: new Date().toISOString() },
        })
      ).status,
    ).toBe(401);
    const bad = await h.request<{ field: string }>('POST', '/issuing/v1/events/replay', {
      headers: asPartner(partner.apiKey),
      json: { since: 'last week' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe('since');
    expect(
      (await h.request('GET', '/issuing/v1/events?limit=0', { headers: asPartner(partner.apiKey) })).status,
    ).toBe(400);
  });
});
