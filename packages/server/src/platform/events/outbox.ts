// The outbox: events are rows written in the business transaction, with their deliveries. Webhooks are
// sent from here after the commit; an event whose transaction rolls back never existed.
import type { Clock } from '../clock/clock.ts';
import type { Executor } from '../db/database.ts';
import type { WebhookApi } from '../db/schema.ts';
import { newId } from '../ids.ts';
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
    const createdAt = this.clock.now();
    const id = newId('event', createdAt.getTime());
    const body = input.body(id, createdAt);
    const event = {
      id,
      api: input.api,
      tenant_id: input.tenantId,
      type: input.type,
      payload: JSON.stringify(body),
      object_ids: objectIdsOf(body),
      target_url: input.targetUrl ?? null,
      created_at: createdAt,
    };
    await tx.insertInto('events').values(event).execute();
    await this.engine.createDelivery(tx, event, 'event');
    return { eventId: id };
  }
}

const OBJECT_ID_KEY = /(Id|_id)$/;

/**
 * The ids an event is about, for finding the events of one object: values of keys ending in "Id" or
 * "_id", and "reference", at the top level and inside "data" or "resource" (migration 0016 backfilled
 * older events with the same rule).
 */
export function objectIdsOf(body: Record<string, unknown>): string[] {
  const ids = new Set<string>();
  const collect = (record: unknown) => {
    if (record === null || typeof record !== 'object' || Array.isArray(record)) return;
    for (const [key, value] of Object.entries(record)) {
      if (key === 'eventId' || key === 'event_id') continue;
      if (!OBJECT_ID_KEY.test(key) && key !== 'reference') continue;
      if ((typeof value === 'string' && value !== '') || typeof value === 'number') ids.add(String(value));
    }
  };
  collect(body);
  collect(body.data);
  collect(body.resource);
  return [...ids];
}
