// Crypto events: what the store's event log keeps is {event_id, event_type, resource, state} with every
// fact of the change in `resource` (ids, statuses, crypto amounts). The webhook the channel sends carries
// only the real service's fields (event_type, resource.amount/currency/reference, state, signature) and
// the ids as `Tessera-*` headers (platform/webhooks/channels.ts). Order events are the real service's;
// refund events follow the same style. Every resource value is a string.
import type { Executor } from '../../platform/db/database.ts';
import type { Outbox } from '../../platform/events/outbox.ts';

export const CRYPTO_EVENT_STATES = {
  'ORDER.PAYMENT.DETECTED': 'detected',
  // Tessera's own: a reorg took an unconfirmed transfer off the chain (docs/crypto.md, Reorgs)
  'ORDER.PAYMENT.REVERTED': 'reverted',
  'ORDER.PAYMENT.PARTIAL': 'partial',
  'ORDER.PAYMENT.RECEIVED': 'completed',
  'ORDER.PAYMENT.LATE': 'late',
  'ORDER.PAYMENT.CANCELLED': 'cancelled',
  'ORDER.REFUND.PROPOSED': 'proposed',
  'ORDER.REFUND.ACCEPTED': 'accepted',
  'ORDER.REFUND.REJECTED': 'rejected',
  'ORDER.REFUND.EXPIRED': 'expired',
  'ORDER.REFUND.COMPLETED': 'completed',
} as const;

export type CryptoEventType = keyof typeof CRYPTO_EVENT_STATES;

export async function publishCryptoEvent(
  outbox: Outbox,
  tx: Executor,
  event: {
    storeId: string;
    /** The order's callback_url; the store's webhook URL when absent */
    callbackUrl: string | null;
    eventType: CryptoEventType;
    resource: Record<string, string>;
  },
): Promise<{ eventId: string }> {
  return outbox.publish(tx, {
    api: 'crypto',
    tenantId: event.storeId,
    type: event.eventType,
    targetUrl: event.callbackUrl,
    body: (eventId) => ({
      event_id: eventId,
      event_type: event.eventType,
      resource: event.resource,
      state: CRYPTO_EVENT_STATES[event.eventType],
    }),
  });
}
