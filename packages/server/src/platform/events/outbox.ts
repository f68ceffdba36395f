// The outbox: events are rows written in the business transaction, with their deliveries. Webhooks are
// sent from here after the commit; an event whose transaction rolls back never existed.
import type { Span } from '@opentelemetry/api';
import type { Clock } from '../clock/clock.ts';
import type { Executor } from '../db/database.ts';
import type { WebhookApi } from '../db/schema.ts';
import type { StatementBatch } from '../db/statement-batch.ts';
import { idTime, newId } from '../ids.ts';
import { inSpan } from '../observability/tracing.ts';
import type { DeliveryEngine } from '../webhooks/delivery-engine.ts';

export interface PublishInput {
  api: WebhookApi;
  /** Partner id, site id or store id: whose endpoint and secret the event uses */
  tenantId: string;
  type: string;
  /** Builds the exact event body; gets the new event id and time so envelopes can carry them */
  body: (eventId: string, createdAt: Date) => Record<string, unknown>;
  /** An explicit endpoint (a crypto order's callback_url); default: the tenant's configured URL */
  targetUrl?: string | null;
}

export class Outbox {
  constructor(
    private readonly clock: Clock,
    private readonly engine: DeliveryEngine,
  ) {}

  async publish(tx: Executor, input: PublishInput): Promise<{ eventId: string }> {
    return inSpan('outbox publish', { 'tessera.event_type': input.type }, async (span) => {
      const event = this.event(input);
      span.setAttribute('tessera.event_id', event.id);
      await tx.insertInto('events').values(event).execute();
      await this.engine.createDelivery(tx, event, 'event');
      return { eventId: event.id };
    });
  }

  /**
   * Adds the event, and its delivery when there is somewhere to send it, to a batch of its business
   * step's writes (platform/db/statement-batch.ts). Once the batch has run, `queued()` queues the first
   * attempt (on its own statement: a delivery whose job is lost to a crash is sent by the sweep).
   */
  async stage(
    batch: StatementBatch,
    db: Executor,
    input: PublishInput,
  ): Promise<{ eventId: string; queued: () => Promise<void> }> {
    return inSpan('outbox stage', { 'tessera.event_type': input.type }, (span) =>
      this.stageEvent(batch, db, input, span),
    );
  }

  private async stageEvent(batch: StatementBatch, db: Executor, input: PublishInput, span: Span) {
    const event = this.event(input);
    span.setAttribute('tessera.event_id', event.id);
    batch.add({
      sql: INSERT_EVENT,
      parameters: [
        event.id,
        event.api,
        event.tenant_id,
        event.type,
        event.payload,
        event.target_url,
        event.created_at,
      ],
    });
    const deliveryId = await this.engine.stageDelivery(batch, db, event);
    return {
      eventId: event.id,
      queued: async () => {
        if (deliveryId) await this.engine.queueFirstAttempt(db, deliveryId);
      },
    };
  }

  private event(input: PublishInput) {
    // The event's time is its id's, to the millisecond: an id made within a millisecond already used (or
    // after the clock stepped back) carries that later time, and then so does the event, so a window of
    // time is a range of ids (events-service.ts; migration 0089)
    const id = newId('event', this.clock.now().getTime());
    const createdAt = new Date(idTime(id));
    const body = input.body(id, createdAt);
    return {
      id,
      api: input.api,
      tenant_id: input.tenantId,
      type: input.type,
      payload: JSON.stringify(body),
      target_url: input.targetUrl ?? null,
      created_at: createdAt,
    };
  }
}

const INSERT_EVENT = `
  INSERT INTO events (id, api, tenant_id, type, payload, target_url, created_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7)`;
