// Issuing webhooks (docs/issuing.md, Events): every event has the envelope
// {eventType, eventId, customerId, data}, is signed as a whole (HS512 JWS) and goes to the partner's URL.
import type { Executor } from '../../platform/db/database.ts';
import type { StatementBatch } from '../../platform/db/statement-batch.ts';
import type { Outbox, PublishInput } from '../../platform/events/outbox.ts';

export type IssuingEventType =
  | 'kycStatusChanged'
  | 'cardStatusChanged'
  | 'transaction3dsRequested'
  | 'transaction3dsCompleted'
  | 'transactionCreated'
  | 'transactionSettled'
  /** Tessera's addition: a transaction reversed by the merchant or lapsed unclaimed ({transactionId, status}) */
  | 'transactionStatusChanged'
  | 'topupCreated'
  | 'topupStatusChanged'
  /** Tessera's additions: a cardholder dispute opened, and decided ({disputeId, transactionId, status}) */
  | 'disputeCreated'
  | 'disputeStatusChanged';

export interface IssuingEvent {
  partnerId: string;
  customerId: string;
  eventType: IssuingEventType;
  data: Record<string, unknown>;
}

export async function publishIssuingEvent(
  outbox: Outbox,
  tx: Executor,
  event: IssuingEvent,
): Promise<{ eventId: string }> {
  return outbox.publish(tx, toPublish(event));
}

/** The event added to a batch of its business step's writes (Outbox.stage). */
export function stageIssuingEvent(outbox: Outbox, batch: StatementBatch, db: Executor, event: IssuingEvent) {
  return outbox.stage(batch, db, toPublish(event));
}

function toPublish(event: IssuingEvent): PublishInput {
  return {
    api: 'issuing',
    tenantId: event.partnerId,
    type: event.eventType,
    body: (eventId) => ({
      eventType: event.eventType,
      eventId,
      customerId: event.customerId,
      data: event.data,
    }),
  };
}
