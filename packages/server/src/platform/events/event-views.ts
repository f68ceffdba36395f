// How events, deliveries and attempts are shown over HTTP, by the operator's and the tenants' routes alike.
import { z } from 'zod';
import type { DeliveryView, EventFilter, EventView } from './events-service.ts';

const timestamp = z.iso.datetime({ offset: true });

export const eventView = z.object({
  eventId: z.string(),
  api: z.enum(['issuing', 'payments', 'crypto']),
  tenantId: z.string(),
  type: z.string(),
  createdAt: timestamp,
  /** The ids the event is about (an order, a transaction, a card, a customer…) */
  objectIds: z.array(z.string()),
  /** The latest delivery's status, or `none` when no webhook URL was configured */
  deliveryState: z.enum(['pending', 'succeeded', 'failed', 'waiting', 'none']),
  payload: z.unknown(),
});

const attemptView = z.object({
  deliveryAttemptId: z.string(),
  attemptNumber: z.number().int(),
  startedAt: timestamp,
  durationMs: z.number().int(),
  statusCode: z.number().int().nullable(),
  responseExcerpt: z.string().nullable(),
  error: z.string().nullable(),
  succeeded: z.boolean(),
  /** Cut short by a shutdown of Tessera: not counted, tried again */
  abandoned: z.boolean(),
});

export const eventDetailView = eventView.extend({
  deliveries: z.array(
    z.object({
      deliveryId: z.string(),
      url: z.string(),
      reason: z.string(),
      status: z.string(),
      attemptCount: z.number().int(),
      maxAttempts: z.number().int(),
      nextAttemptAt: timestamp.nullable(),
      completedAt: timestamp.nullable(),
      attempts: z.array(attemptView),
    }),
  ),
});

export const replayView = z.object({
  replayed: z.number().int(),
  skippedWithoutUrl: z.number().int(),
  isTruncated: z.boolean(),
});

export const presentEvent = (e: EventView) => ({ ...e, createdAt: e.createdAt.toISOString() });

export const presentEventDetail = (e: EventView & { deliveries: DeliveryView[] }) => ({
  ...presentEvent(e),
  deliveries: e.deliveries.map((d) => ({
    ...d,
    nextAttemptAt: d.nextAttemptAt?.toISOString() ?? null,
    completedAt: d.completedAt?.toISOString() ?? null,
    attempts: d.attempts.map((a) => ({ ...a, startedAt: a.startedAt.toISOString() })),
  })),
});

/** The query of an event list (a tenant's or the operator's). */
export const eventListQuery = z.object({
  type: z.string().max(100).optional(),
  objectId: z
    .string()
    .max(100)
    .optional()
    .describe('Only events about this object (order, transaction, card…)'),
  deliveryState: z.enum(['pending', 'succeeded', 'failed', 'waiting', 'none']).optional(),
  since: timestamp.optional(),
  until: timestamp.optional(),
  cursor: z.string().max(100).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export function toEventFilter(q: z.infer<typeof eventListQuery>): EventFilter {
  return {
    limit: q.limit,
    ...(q.type ? { type: q.type } : {}),
    ...(q.objectId ? { objectId: q.objectId } : {}),
    ...(q.deliveryState ? { deliveryState: q.deliveryState } : {}),
    ...(q.since ? { since: new Date(q.since) } : {}),
    ...(q.until ? { until: new Date(q.until) } : {}),
    ...(q.cursor ? { cursor: q.cursor } : {}),
  };
}
