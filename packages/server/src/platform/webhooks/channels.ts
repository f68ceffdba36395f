// A channel is one API's way of sending events: how a request is built and signed, what counts as an
// acknowledgement, and when to retry. Formats are the public services' (docs/wire-compatibility.md).
import { randomUUID } from 'node:crypto';
import type { WebhookApi } from '../db/schema.ts';
import { encryptIpn, ipnFormBody, signCryptoWebhook, signIssuingWebhook } from './wire-signing.ts';

export interface ChannelRequest {
  headers: Record<string, string>;
  body: string;
}

export interface WebhookChannel {
  api: WebhookApi;
  maxAttempts: number;
  /** Seconds to wait after failed attempt n (index n-1) before attempt n+1 */
  retryDelaysSeconds: readonly number[];
  /**
   * Whether a delivery whose attempts all failed waits for the tenant's endpoint to answer again, where
   * the tenant's setting allows (delivery-recovery.ts); otherwise it fails for good.
   */
  waitsAfterLastAttempt: boolean;
  buildRequest(payload: string, secret: string, attemptId: string): Promise<ChannelRequest>;
  isAcknowledged(statusCode: number | undefined, body: string): boolean;
}

const is2xx = (status: number | undefined) => status !== undefined && status >= 200 && status < 300;

/**
 * Issuing spec, Events: 3 attempts in all, backoff 5 s then 10 s; retried on network errors, timeouts,
 * non-2xx. Fifteen seconds cannot outlast a partner's outage, so beyond the spec's burst the delivery
 * waits for the endpoint to answer again (a Tessera extension, on by default per partner).
 */
export const issuingChannel: WebhookChannel = {
  api: 'issuing',
  maxAttempts: 3,
  retryDelaysSeconds: [5, 10],
  waitsAfterLastAttempt: true,
  async buildRequest(payload, secret, attemptId) {
    return {
      body: payload,
      headers: {
        'content-type': 'application/json',
        'x-service-signature': await signIssuingWebhook(payload, secret),
        'x-service-delivery-id': attemptId,
      },
    };
  },
  isAcknowledged: (status) => is2xx(status),
};

const FIBONACCI_MINUTES = [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987];

/**
 * Crypto: the first attempt plus 15 retries at Fibonacci minutes; the signature is a body field.
 * The body is exactly the real service's `{event_type, resource: {amount, currency, reference}, state,
 * signature}`: client libraries sign those five fields only while others sign every field, so one more
 * field would break one kind or the other. The event's other facts (ids, statuses, crypto amounts) stay
 * in the event log; the ids a receiver needs to fetch them travel as headers.
 */
export const cryptoChannel: WebhookChannel = {
  api: 'crypto',
  maxAttempts: 1 + FIBONACCI_MINUTES.length,
  retryDelaysSeconds: FIBONACCI_MINUTES.map((m) => m * 60),
  waitsAfterLastAttempt: false,
  async buildRequest(payload, secret, attemptId) {
    const event = JSON.parse(payload) as CryptoEventPayload;
    const { amount, currency, reference } = event.resource;
    const wire = {
      event_type: event.event_type,
      resource: { amount, currency, reference },
      state: event.state,
    };
    const ids: [string, string | undefined][] = [
      ['tessera-event-id', event.event_id],
      ['tessera-order-id', event.resource.order_id],
      ['tessera-payment-id', event.resource.payment_id],
      ['tessera-refund-id', event.resource.refund_id],
    ];
    return {
      body: signCryptoWebhook(wire, secret),
      headers: {
        'content-type': 'application/json',
        'x-tessera-delivery-id': attemptId,
        ...Object.fromEntries(ids.filter((entry): entry is [string, string] => entry[1] !== undefined)),
      },
    };
  },
  isAcknowledged: (status) => is2xx(status),
};

interface CryptoEventPayload {
  event_id: string;
  event_type: string;
  state: string;
  resource: { amount: string; currency: string; reference: string } & Partial<Record<string, string>>;
}

/** Payments IPN: acknowledged only by HTTP 200 with the body `OK`; retried after 1 min, 5 min, 1 h, 24 h. */
export const paymentsChannel: WebhookChannel = {
  api: 'payments',
  maxAttempts: 5,
  retryDelaysSeconds: [60, 300, 3600, 86_400],
  waitsAfterLastAttempt: false,
  async buildRequest(payload, secret, attemptId) {
    return {
      body: ipnFormBody(encryptIpn(payload, secret)),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-tessera-delivery-id': attemptId },
    };
  },
  isAcknowledged: (status, body) => status === 200 && body.trim() === 'OK',
};

export const CHANNELS: Record<WebhookApi, WebhookChannel> = {
  issuing: issuingChannel,
  crypto: cryptoChannel,
  payments: paymentsChannel,
};

export const newAttemptId = () => randomUUID();
