// Every sandbox trigger, for a tenant of each API: it answers the event it promised, the event is in the
// tenant's log, and its webhook reaches the tenant signed as every webhook is (issuing JWS, crypto body
// signature checked by the Utrust library's validator, IPN decrypted with the site's key).
import { decryptIpn, verifyIssuingWebhook } from '@tessera/sdk';
import { WebhookValidator } from '@utrustdev/utrust-ts-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aStore, type TestStore } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aMerchant, type TestMerchant } from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let partner: { id: string; webhookSigningKey: string };
let merchant: TestMerchant;
let store: TestStore;
const sandbox = () => ({ authorization: `Bearer ${h.adminToken}` });

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  partner = (
    await h.admin<{ id: string; webhookSigningKey: string }>('POST', '/partners', {
      json: { name: 'Trigger partner', webhookUrl: receiver.url('/issuing') },
    })
  ).body;
  merchant = await aMerchant(h, { ipnUrl: receiver.url('/payments') });
  store = await aStore(h, { webhookUrl: receiver.url('/crypto') });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

interface Triggered {
  tenantId: string;
  objects: Record<string, string>;
  events: { eventId: string; type: string }[];
}

describe('sandbox triggers', () => {
  it('list every documented event type of the three APIs', async () => {
    const list = await h.request<{ data: { event: string; api: string }[] }>('GET', '/sandbox/triggers', {
      headers: sandbox(),
    });
    const byApi = (api: string) =>
      list.body.data
        .filter((t) => t.api === api)
        .map((t) => t.event)
        .sort();
    expect(byApi('crypto')).toEqual(
      [
        'ORDER.PAYMENT.DETECTED',
        'ORDER.PAYMENT.RECEIVED',
        'ORDER.PAYMENT.PARTIAL',
        'ORDER.PAYMENT.LATE',
        'ORDER.PAYMENT.REVERTED',
        'ORDER.PAYMENT.CANCELLED',
        'ORDER.REFUND.PROPOSED',
        'ORDER.REFUND.ACCEPTED',
        'ORDER.REFUND.REJECTED',
        'ORDER.REFUND.EXPIRED',
        'ORDER.REFUND.COMPLETED',
        'PAYOUT.PAID',
        'PAYOUT.RETURNED',
        'PAYOUT.FAILED',
      ].sort(),
    );
    expect(byApi('issuing')).toEqual(
      [
        'kycStatusChanged',
        'cardStatusChanged',
        'transaction3dsRequested',
        'transaction3dsCompleted',
        'transactionCreated',
        'transactionSettled',
        'transactionStatusChanged',
        'topupCreated',
        'topupStatusChanged',
        'disputeCreated',
        'disputeStatusChanged',
      ].sort(),
    );
    expect(byApi('payments')).toEqual(
      [
        'transaction.complete-ok',
        'transaction.complete-failed',
        'transaction.in-progress',
        'transaction.3d-pending',
        'transaction.start',
        'transaction.refund-ok',
        'transaction.void-ok',
        'transaction.charge-back',
        'order.canceled',
        'review.approved',
        'review.refused',
        'payout.paid',
        'payout.returned',
        'payout.failed',
      ].sort(),
    );
  });

  it('each produces its event for the tenant, delivered and signed as every webhook is', async () => {
    const list = await h.request<{
      data: { event: string; produces: string; api: 'issuing' | 'payments' | 'crypto' }[];
    }>('GET', '/sandbox/triggers', {
      headers: sandbox(),
    });
    const tenantOf = { issuing: partner.id, payments: String(merchant.sites[0]?.id), crypto: store.id };
    const validator = WebhookValidator(store.webhookSecret);
    for (const { event: trigger, produces: event, api } of list.body.data) {
      const made = await h.request<Triggered>('POST', `/sandbox/triggers/${trigger}`, {
        headers: sandbox(),
        json: { tenantId: tenantOf[api] },
      });
      expect(made.status, `${trigger}: ${made.text}`).toBe(201);
      const produced = made.body.events.find((e) => e.type === event);
      expect(produced, event).toBeDefined();
      const logged = await h.admin<{ tenantId: string; type: string }>('GET', `/events/${produced?.eventId}`);
      expect(logged.body).toMatchObject({ tenantId: tenantOf[api], type: event });
      // Its webhook arrives, verifiable with the tenant's secret.
      if (api === 'crypto') {
        const [hook] = await receiver.waitFor(1, (r) => r.headers['tessera-event-id'] === produced?.eventId);
        expect(validator.validateSignature(JSON.parse(hook?.body ?? '{}'))).toBe(true);
      } else if (api === 'issuing') {
        const hooks = await receiver.waitFor(
          1,
          (r) => r.path === '/issuing' && r.body.includes(produced?.eventId ?? '-'),
        );
        const verified = await verifyIssuingWebhook<{ eventType: string }>(
          hooks[0]?.body ?? '',
          String(hooks[0]?.headers['x-service-signature']),
          partner.webhookSigningKey,
        );
        expect(verified.eventType).toBe(event);
      } else {
        const ipnOf = (body: string) =>
          decryptIpn<{ eventId: string }>(
            new URLSearchParams(body).get('opensslResult') ?? '',
            merchant.sites[0]?.ipnSecret ?? '',
          );
        await receiver.waitFor(
          1,
          (r) => r.path === '/payments' && ipnOf(r.body).eventId === produced?.eventId,
        );
      }
    }
  }, 60_000);

  it('without a tenant, uses the newest of the API’s; an unknown event or tenant is a 404 naming it', async () => {
    const newest = await aStore(h);
    const made = await h.request<Triggered>('POST', '/sandbox/triggers/ORDER.PAYMENT.DETECTED', {
      headers: sandbox(),
    });
    expect(made.status).toBe(201);
    expect(made.body.tenantId).toBe(newest.id);
    const unknown = await h.request<{ error: { message: string } }>('POST', '/sandbox/triggers/NOPE', {
      headers: sandbox(),
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toMatch(/GET \/sandbox\/triggers lists them/);
    const stranger = await h.request('POST', '/sandbox/triggers/transaction.complete-ok', {
      headers: sandbox(),
      json: { tenantId: '999999' },
    });
    expect(stranger.status).toBe(404);
  });
});
