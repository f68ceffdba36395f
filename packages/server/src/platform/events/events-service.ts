// Reading the outbox back: events with their deliveries and attempts, redelivery of one event and
// replay of every event since a time. Tenants see their own events through a scope; the operator sees all.

import { type ExpressionBuilder, sql } from 'kysely';
import type { Db, Executor } from '../db/database.ts';
import { ownedBy, ownedByAny } from '../db/owner-hash.ts';
import type { WebhookApi } from '../db/schema.ts';
import { runTransaction, type Transact } from '../db/transact.ts';
import { DomainError, notFound } from '../errors/domain-error.ts';
import { idFloor } from '../ids.ts';
import { newAttemptId } from '../webhooks/channels.ts';
import type { DeliveryEngine } from '../webhooks/delivery-engine.ts';
import { aboutObject, objectIdsOf } from './object-ids.ts';

/** Restricts a query to one tenant's events (a merchant's: those of every one of its sites); the operator passes none. */
export interface EventScope {
  api: WebhookApi;
  tenantIds: string[];
}

/** Where an event's webhook stands: its latest delivery's status, or `none` (no URL was configured). */
export type DeliveryState = 'pending' | 'succeeded' | 'failed' | 'waiting' | 'none';

export interface EventFilter {
  api?: WebhookApi;
  tenantId?: string;
  type?: string;
  /** An id the event is about: an order, a transaction, a card, a customer… */
  objectId?: string;
  deliveryState?: DeliveryState;
  since?: Date;
  until?: Date;
  /** The id of the last event of the previous page (ids sort by creation time) */
  cursor?: string;
  limit: number;
}

export interface EventView {
  eventId: string;
  api: WebhookApi;
  tenantId: string;
  type: string;
  createdAt: Date;
  objectIds: string[];
  deliveryState: DeliveryState;
  payload: unknown;
}

export interface AttemptView {
  deliveryAttemptId: string;
  attemptNumber: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  responseExcerpt: string | null;
  error: string | null;
  succeeded: boolean;
  abandoned: boolean;
}

export interface DeliveryView {
  deliveryId: string;
  url: string;
  reason: string;
  status: string;
  attemptCount: number;
  maxAttempts: number;
  nextAttemptAt: Date | null;
  completedAt: Date | null;
  attempts: AttemptView[];
}

/** The most a replay sends in one call; the answer says when there was more. */
export const REPLAY_LIMIT = 5000;

export class EventsService {
  constructor(
    private readonly db: Db,
    private readonly transact: Transact,
    private readonly engine: DeliveryEngine,
  ) {}

  async list(
    filter: EventFilter,
    scope?: EventScope,
  ): Promise<{ events: EventView[]; nextCursor: string | null }> {
    let query = this.scoped(this.db, scope, filter, filter.objectId)
      .selectAll('e')
      .select(latestDeliveryStatus)
      .orderBy('e.id', 'desc')
      .limit(filter.limit + 1);
    if (filter.type) query = query.where('e.type', '=', filter.type);
    if (filter.since) query = query.where(madeSince(filter.since));
    if (filter.until) query = query.where(madeBefore(filter.until));
    if (filter.cursor) query = query.where('e.id', '<', filter.cursor);
    if (filter.deliveryState) {
      const state = filter.deliveryState;
      query = query.where((eb) =>
        state === 'none'
          ? eb.not(
              eb.exists(
                eb.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'e.id'),
              ),
            )
          : eb(deliveryStatusOf(eb), '=', state),
      );
    }
    const rows = await query.execute();
    const page = rows.slice(0, filter.limit);
    const events = page.map(toEventView);
    const { objectId } = filter;
    return {
      // The index found the object's events by a 64-bit hash of its id; one whose ids share that hash
      // without naming the object is left out here, where its ids are read anyway (the page is one short;
      // the cursor still moves past it)
      events: objectId ? events.filter((e) => e.objectIds.includes(objectId)) : events,
      nextCursor: rows.length > filter.limit ? (page.at(-1)?.id ?? null) : null,
    };
  }

  async get(eventId: string, scope?: EventScope): Promise<EventView & { deliveries: DeliveryView[] }> {
    // One snapshot: an attempt committing between two reads must not show beside a stale delivery status.
    return runTransaction(this.db, (tx) => this.readEvent(tx, eventId, scope), {
      isolationLevel: 'repeatable read',
    });
  }

  private async readEvent(db: Executor, eventId: string, scope?: EventScope) {
    const event = await this.findScoped(eventId, scope, db);
    const deliveries = await db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('event_id', '=', eventId)
      // Ids are monotonic ULIDs: they order deliveries made at one instant of a frozen sandbox clock.
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    const attempts =
      deliveries.length === 0
        ? []
        : await db
            .selectFrom('webhook_attempts')
            .selectAll()
            .where(
              'delivery_id',
              'in',
              deliveries.map((d) => d.id),
            )
            .orderBy('attempt_number')
            .execute();
    return {
      ...toEventView(event),
      deliveries: deliveries.map((d) => ({
        deliveryId: d.id,
        url: d.url,
        reason: d.reason,
        status: d.status,
        attemptCount: d.attempt_count,
        maxAttempts: d.max_attempts,
        nextAttemptAt: d.next_attempt_at,
        completedAt: d.completed_at,
        attempts: attempts
          .filter((a) => a.delivery_id === d.id)
          .map((a) => ({
            deliveryAttemptId: a.id,
            attemptNumber: a.attempt_number,
            startedAt: a.started_at,
            durationMs: a.duration_ms,
            statusCode: a.status_code,
            responseExcerpt: a.response_excerpt,
            error: a.error,
            succeeded: a.succeeded,
            abandoned: a.abandoned,
          })),
      })),
    };
  }

  /** The webhook request of an event as its channel builds it (signed, not sent), for forwarding. */
  async webhookRequest(eventId: string, scope?: EventScope) {
    const event = await this.findScoped(eventId, scope);
    const attemptId = `listen-${newAttemptId()}`;
    const request = await this.engine.requestFor(event, attemptId);
    return { eventId: event.id, api: event.api, tenantId: event.tenant_id, type: event.type, ...request };
  }

  /** Sends the event again, with a fresh attempt budget, to its current endpoint. */
  async redeliver(eventId: string, scope?: EventScope): Promise<{ deliveryId: string }> {
    const event = await this.findScoped(eventId, scope);
    const deliveryId = await this.transact((tx) => this.engine.createDelivery(tx, event, 'redelivery'));
    if (!deliveryId) throw new DomainError('invalid_state', 'no webhook URL is configured for this event');
    return { deliveryId };
  }

  /**
   * Redelivers every event since a time (inclusive) or after an event (exclusive: the receiver has it),
   * oldest first: a receiver that was down catching up.
   */
  async replay(
    input: { since?: Date; afterEventId?: string; api?: WebhookApi; tenantId?: string },
    scope?: EventScope,
  ): Promise<{ replayed: number; skippedWithoutUrl: number; isTruncated: boolean }> {
    let query = this.scoped(this.db, scope, input)
      .selectAll('e')
      .orderBy('e.id')
      .limit(REPLAY_LIMIT + 1);
    if (input.afterEventId) {
      const after = await this.findScoped(input.afterEventId, scope);
      query = query.where('e.id', '>', after.id);
    }
    if (input.since) query = query.where(madeSince(input.since));
    const rows = await query.execute();
    const events = rows.slice(0, REPLAY_LIMIT);
    let replayed = 0;
    await this.transact(async (tx) => {
      for (const event of events) if (await this.engine.createDelivery(tx, event, 'replay')) replayed++;
    });
    return { replayed, skippedWithoutUrl: events.length - replayed, isTruncated: rows.length > REPLAY_LIMIT };
  }

  private async findScoped(eventId: string, scope?: EventScope, db: Executor = this.db) {
    const event = await this.scoped(db, scope, {})
      .selectAll('e')
      .select(latestDeliveryStatus)
      .where('e.id', '=', eventId)
      .executeTakeFirst();
    if (!event) throw notFound('event');
    return event;
  }

  /** The events a scope (or the operator's filter) may see. */
  private scoped(
    db: Executor,
    scope: EventScope | undefined,
    filter: { api?: WebhookApi; tenantId?: string },
    objectId?: string,
  ) {
    // An object's events are few and found by the GIN index of their ids' hashes, then ordered: read first, behind
    // an OFFSET 0 fence, so the planner never walks a busy tenant's events newest first looking for them
    // (an object with fewer events than the page read them all: 948 ms on 1.5 million, docs/scale.md).
    let query = objectId
      ? db.selectFrom(db.selectFrom('events').selectAll().where(aboutObject(objectId)).offset(0).as('e'))
      : db.selectFrom('events as e');
    const api = scope?.api ?? filter.api;
    if (api) query = query.where('e.api', '=', api);
    // A tenant's events by the index on a hash of its id and the event's id (migration 0088), newest first
    if (scope)
      query = query.where(ownedByAny('e.tenant_id', scope.tenantIds.length > 0 ? scope.tenantIds : ['']));
    else if (filter.tenantId) query = query.where(ownedBy('e.tenant_id', filter.tenantId));
    return query;
  }
}

/*
 * A window of time is a range of ids: an event's id starts with its created_at, to the millisecond
 * (outbox.ts; before migration 0089, with that time or one a few milliseconds later), so the primary key,
 * or a tenant's (hash, id) index, serves it without an index on the time (migration 0089).
 */
export const madeSince = (at: Date) =>
  sql<boolean>`e.created_at >= ${at} AND e.id >= ${idFloor('event', at.getTime())}`;
export const madeBefore = (at: Date) =>
  sql<boolean>`e.created_at < ${at} AND e.id < ${idFloor('event', at.getTime())}`;

/** The status of the event's latest delivery. */
// biome-ignore lint/suspicious/noExplicitAny: an expression builder over the events query, whatever its shape
function deliveryStatusOf(eb: ExpressionBuilder<any, any>) {
  return eb
    .selectFrom('webhook_deliveries as d')
    .select('d.status')
    .whereRef('d.event_id', '=', 'e.id')
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(1);
}

// biome-ignore lint/suspicious/noExplicitAny: as above
const latestDeliveryStatus = (eb: ExpressionBuilder<any, any>) => deliveryStatusOf(eb).as('delivery_status');

function toEventView(row: {
  id: string;
  api: WebhookApi;
  tenant_id: string;
  type: string;
  created_at: Date;
  delivery_status: string | null;
  payload: string;
}): EventView {
  const payload = JSON.parse(row.payload);
  return {
    eventId: row.id,
    api: row.api,
    tenantId: row.tenant_id,
    type: row.type,
    createdAt: row.created_at,
    objectIds: objectIdsOf(payload),
    deliveryState: (row.delivery_status ?? 'none') as DeliveryState,
    payload,
  };
}
