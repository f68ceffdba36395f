// Delivers outbox events. The first attempt is a pg-boss job enqueued with the event; each failure
// stores the next due time (injected clock) on the delivery row, and the sweep sends what is due, so
// advancing the sandbox clock runs due retries at once. A wall-clock lease guards each attempt: two
// processes never attempt one delivery together, and a crashed attempt is retried when its lease ends.
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { Clock } from '../clock/clock.ts';
import { addSeconds } from '../clock/clock.ts';
import { afterCommit } from '../db/connection-scope.ts';
import type { Db, Executor } from '../db/database.ts';
import type { EventsTable, WebhookApi } from '../db/schema.ts';
import type { StatementBatch } from '../db/statement-batch.ts';
import { runTransaction } from '../db/transact.ts';
import { newId } from '../ids.ts';
import type { JobQueue } from '../jobs/job-queue.ts';
import {
  currentTraceparent,
  inSpan,
  linkTo,
  ROOT_CONTEXT,
  SpanKind,
  trace,
} from '../observability/tracing.ts';
import { CHANNELS, type ChannelRequest, newAttemptId, type WebhookChannel } from './channels.ts';
import { postInClientSpan } from './client-span.ts';
import { endpointAnswered, WAITING_PROBE_SECONDS } from './delivery-recovery.ts';
import { FailureLog, logAttempt } from './failure-log.ts';
import type { HttpSender, OutboundResult } from './http-sender.ts';
import type { WebhookTenantDirectory } from './tenant-directory.ts';

export const DELIVERY_QUEUE = 'webhook-delivery';
const EXCERPT_CHARS = 1024;

export interface DeliveryEngineDeps {
  db: Db;
  clock: Clock;
  jobs: JobQueue;
  sender: HttpSender;
  tenants: WebhookTenantDirectory;
  logger: Logger;
  attemptsCounter: Counter<'api' | 'outcome'>;
  failuresCounter: Counter<'api' | 'tenant'>;
  /** Extra seconds a lease outlives the HTTP timeout */
  leaseSlackSeconds?: number;
  timeoutMs: number;
  channels?: Record<WebhookApi, WebhookChannel>;
}

type StoredEvent = Pick<EventsTable, 'id' | 'api' | 'tenant_id' | 'payload' | 'target_url'>;

export class DeliveryEngine {
  private readonly channels: Record<WebhookApi, WebhookChannel>;
  private isStopping = false;

  private readonly failureLog = new FailureLog();

  constructor(private readonly deps: DeliveryEngineDeps) {
    this.channels = deps.channels ?? CHANNELS;
  }

  async start(): Promise<void> {
    await this.deps.jobs.createQueue(DELIVERY_QUEUE);
    await this.deps.jobs.work<{ deliveryId: string; traceparent?: string }>(
      DELIVERY_QUEUE,
      ({ deliveryId, traceparent }) => this.attempt(deliveryId, traceparent).then(() => undefined),
      {
        pollingIntervalSeconds: 1,
      },
    );
  }

  /**
   * Creates a delivery for the event to its target (the event's own URL, else the tenant's) and
   * enqueues its first attempt, in the caller's transaction. No URL configured: nothing to send, the
   * event stays listable and replayable.
   */
  async createDelivery(
    tx: Executor,
    event: StoredEvent,
    reason: 'event' | 'redelivery' | 'replay',
  ): Promise<string | undefined> {
    const url = event.target_url ?? (await this.deps.tenants.webhookUrl(tx, event.api, event.tenant_id));
    if (!url) return undefined;
    const id = newId('delivery');
    const now = this.deps.clock.now();
    await tx
      .insertInto('webhook_deliveries')
      .values({
        id,
        event_id: event.id,
        url,
        reason,
        status: 'pending',
        max_attempts: this.channels[event.api].maxAttempts,
        next_attempt_at: now,
        created_at: now,
      })
      .execute();
    await this.queueFirstAttempt(tx, id);
    return id;
  }

  /**
   * The delivery of a new event to its target, added to a batch of its business step's writes; answers
   * its id, or undefined when there is nowhere to send it. Its first attempt is queued by
   * queueFirstAttempt once the batch has run.
   */
  async stageDelivery(batch: StatementBatch, db: Executor, event: StoredEvent): Promise<string | undefined> {
    const url = event.target_url ?? (await this.deps.tenants.webhookUrl(db, event.api, event.tenant_id));
    if (!url) return undefined;
    const id = newId('delivery');
    batch.add({
      sql: `INSERT INTO webhook_deliveries (id, event_id, url, reason, status, max_attempts, next_attempt_at, created_at)
        VALUES ($1, $2, $3, 'event', 'pending', $4, $5, $5)`,
      parameters: [id, event.id, url, this.channels[event.api].maxAttempts, this.deps.clock.now()],
    });
    return id;
  }

  /** Queues a delivery's first attempt (in the caller's transaction, or after the batch that wrote it). */
  async queueFirstAttempt(db: Executor, deliveryId: string): Promise<void> {
    // The attempt's span links to the request that queued it (its trace context rides with the job).
    const traceparent = currentTraceparent();
    await this.deps.jobs.send(db, DELIVERY_QUEUE, { deliveryId, ...(traceparent ? { traceparent } : {}) });
    // The worker is woken only when a job was queued, and only once it can see it.
    afterCommit(() => this.notify());
  }

  /**
   * Shutdown: no new attempt starts, and attempts in flight are cut short. They are recorded as
   * abandoned, do not count, and are due again at once, for whichever process runs next.
   */
  stop(): void {
    this.isStopping = true;
    this.deps.sender.abandonAll();
  }

  /** Wakes the worker after a commit that created deliveries. */
  notify(): void {
    this.deps.jobs.notify(DELIVERY_QUEUE);
  }

  /**
   * The request a delivery of this event would make, signed with its tenant's current secret, without
   * sending it: what `tessera listen` forwards to a developer's machine.
   */
  async requestFor(
    event: { api: WebhookApi; tenant_id: string; payload: string },
    attemptId: string,
  ): Promise<ChannelRequest> {
    const secret = await this.deps.tenants.signingSecret(this.deps.db, event.api, event.tenant_id);
    return this.channels[event.api].buildRequest(event.payload, secret, attemptId);
  }

  /**
   * Attempts the event's delivery now and waits for it, at most `waitMs`: for an event whose receiver
   * is about to be visited by the person who caused it (a buyer sent back to the shop right after
   * cancelling), so the shop hears of it before the person arrives. A shop served by one process (PHP's
   * own server, a small WordPress) cannot take the webhook while it serves the buyer's page, and a page
   * that waits for the webhook would wait for itself. The job queued with the event still runs; whichever
   * comes first claims the delivery, and an attempt still running at the deadline finishes on its own.
   */
  async deliverBeforeAnswer(eventId: string, waitMs: number): Promise<void> {
    const delivery = await this.deps.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('event_id', '=', eventId)
      .where('reason', '=', 'event')
      .executeTakeFirst();
    if (!delivery) return;
    const deadline = Date.now() + waitMs;
    const attempted = this.attempt(delivery.id).catch(() => false);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), waitMs);
    });
    try {
      const first = await Promise.race([attempted, timedOut]);
      if (first !== false) return;
      // Claimed by the queued job first: wait for its attempt, polling, until the deadline.
      while (Date.now() < deadline) {
        const row = await this.deps.db
          .selectFrom('webhook_deliveries')
          .select(['attempt_count', 'leased_until'])
          .where('id', '=', delivery.id)
          .executeTakeFirst();
        if (!row || (row.attempt_count > 0 && row.leased_until === null)) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** Makes one attempt if the delivery is due and free; answers whether an attempt was made. */
  async attempt(deliveryId: string, traceparent?: string): Promise<boolean> {
    if (this.isStopping) return false;
    // Its own trace (it runs later, in whichever process): a link leads to the request that queued it.
    return inSpan(
      'webhook attempt',
      { 'tessera.delivery_id': deliveryId },
      async (span) => {
        const sent = await this.attemptNow(deliveryId);
        span.setAttribute('tessera.attempted', sent);
        return sent;
      },
      { kind: SpanKind.PRODUCER, links: linkTo(traceparent), parent: ROOT_CONTEXT },
    );
  }

  private async attemptNow(deliveryId: string): Promise<boolean> {
    const { db, clock } = this.deps;
    const leaseSeconds = Math.ceil(this.deps.timeoutMs / 1000) + (this.deps.leaseSlackSeconds ?? 15);
    const claimed = await db
      .updateTable('webhook_deliveries as d')
      .from('events as e')
      .set((eb) => ({
        attempt_count: eb('d.attempt_count', '+', 1),
        leased_until: sql<Date>`now() + make_interval(secs => ${leaseSeconds})`,
      }))
      .whereRef('e.id', '=', 'd.event_id')
      .where('d.id', '=', deliveryId)
      .where('d.status', '=', 'pending')
      .where('d.next_attempt_at', '<=', clock.now())
      .where((eb) => eb.or([eb('d.leased_until', 'is', null), eb('d.leased_until', '<', sql<Date>`now()`)]))
      .returning([
        'd.id',
        'd.url',
        'd.attempt_count',
        'd.max_attempts',
        'e.id as event_id',
        'e.api',
        'e.tenant_id',
        'e.payload',
      ])
      .executeTakeFirst();
    if (!claimed) return false;

    const channel = this.channels[claimed.api];
    const attemptId = newAttemptId();
    const startedAt = clock.now();
    let result: OutboundResult;
    try {
      const secret = await this.deps.tenants.signingSecret(db, claimed.api, claimed.tenant_id);
      const request = await channel.buildRequest(claimed.payload, secret, attemptId);
      result = await postInClientSpan(this.deps.sender, { url: claimed.url, ...request });
    } catch (err) {
      result = {
        statusCode: undefined,
        body: '',
        error: `could not build the request: ${(err as Error).message}`,
        durationMs: 0,
      };
    }
    const span = trace.getActiveSpan();
    if (result.isAbandoned) {
      await this.recordAbandoned(claimed.id, claimed.attempt_count, attemptId, startedAt, result);
      span?.setAttribute('tessera.outcome', 'abandoned');
      return true;
    }
    const isAcknowledged =
      result.error === undefined && channel.isAcknowledged(result.statusCode, result.body);
    const isLast = claimed.attempt_count >= claimed.max_attempts;
    const waits =
      !isAcknowledged &&
      isLast &&
      channel.waitsAfterLastAttempt &&
      (await this.deps.tenants.redeliversWhenBack(db, claimed.api, claimed.tenant_id));
    const delay = channel.retryDelaysSeconds[claimed.attempt_count - 1] ?? 0;
    const error =
      result.error ??
      (isAcknowledged ? undefined : `not acknowledged: HTTP ${result.statusCode ?? 'no status'}`);
    const now = clock.now();
    await runTransaction(db, async (tx) => {
      await tx
        .insertInto('webhook_attempts')
        .values({
          id: attemptId,
          delivery_id: claimed.id,
          attempt_number: claimed.attempt_count,
          started_at: startedAt,
          duration_ms: result.durationMs,
          status_code: result.statusCode ?? null,
          response_excerpt: result.body ? result.body.slice(0, EXCERPT_CHARS) : null,
          error: error ?? null,
          succeeded: isAcknowledged,
        })
        .execute();
      const ends = isAcknowledged || (isLast && !waits);
      await tx
        .updateTable('webhook_deliveries')
        .set({
          status: isAcknowledged ? 'succeeded' : waits ? 'waiting' : isLast ? 'failed' : 'pending',
          next_attempt_at: ends ? null : addSeconds(now, waits ? WAITING_PROBE_SECONDS : delay),
          leased_until: null,
          completed_at: ends ? now : null,
        })
        .where('id', '=', claimed.id)
        .execute();
      if (isAcknowledged && channel.waitsAfterLastAttempt)
        await endpointAnswered(tx, now, claimed.event_id, claimed.api, claimed.tenant_id);
    });
    const outcome = isAcknowledged ? 'delivered' : waits ? 'waiting' : isLast ? 'dead' : 'retry';
    span?.setAttributes({
      'tessera.outcome': outcome,
      'tessera.attempt': claimed.attempt_count,
      ...(outcome === 'retry' ? { 'tessera.retry_at': addSeconds(now, delay).toISOString() } : {}),
    });
    this.deps.attemptsCounter.inc({ api: claimed.api, outcome: isAcknowledged ? 'acknowledged' : 'failed' });
    // The tenant's failure series exists from its first attempt, at 0: increase() over a counter whose
    // series is born at 1 never sees that first failure, and an alert on it never fires.
    this.deps.failuresCounter.inc({ api: claimed.api, tenant: claimed.tenant_id }, isAcknowledged ? 0 : 1);
    logAttempt(this.deps.logger, this.failureLog, claimed, { isAcknowledged, isLast, waits, error, at: now });
    return true;
  }

  private async recordAbandoned(
    deliveryId: string,
    attemptNumber: number,
    attemptId: string,
    startedAt: Date,
    result: OutboundResult,
  ): Promise<void> {
    await runTransaction(this.deps.db, async (tx) => {
      await tx
        .insertInto('webhook_attempts')
        .values({
          id: attemptId,
          delivery_id: deliveryId,
          attempt_number: attemptNumber,
          started_at: startedAt,
          duration_ms: result.durationMs,
          status_code: null,
          response_excerpt: null,
          error: result.error ?? 'abandoned',
          succeeded: false,
          abandoned: true,
        })
        .execute();
      await tx
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          attempt_count: eb('attempt_count', '-', 1),
          leased_until: null,
          next_attempt_at: this.deps.clock.now(),
        }))
        .where('id', '=', deliveryId)
        .execute();
    });
  }

  /** The sweep: attempts every delivery whose due time has passed on the injected clock. */
  async deliverDue(limit = 200): Promise<number> {
    const due = await this.deps.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', this.deps.clock.now())
      .where((eb) => eb.or([eb('leased_until', 'is', null), eb('leased_until', '<', sql<Date>`now()`)]))
      .orderBy('next_attempt_at')
      .limit(limit)
      .execute();
    let attempted = 0;
    const queue = due.map((d) => d.id);
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        if (await this.attempt(id)) attempted++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, queue.length) }, worker));
    return attempted;
  }
}
