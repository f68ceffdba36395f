// Waiting deliveries (docs/webhooks.md): an issuing delivery whose three attempts all failed is not
// dropped. It waits, and when the partner's endpoint answers 2xx again — to its next event, or to a probe
// every few minutes on the injected clock — the waiting events are delivered oldest first, one at a time,
// each once. The work runs in the sweep, which one process holds at a time, so deliveries of one tenant
// never race each other out of order.
import type { Logger } from 'pino';
import type { Clock } from '../clock/clock.ts';
import { addSeconds } from '../clock/clock.ts';
import type { Db, Executor } from '../db/database.ts';
import type { WebhookApi } from '../db/schema.ts';
import type { WebhookTenantDirectory } from './tenant-directory.ts';

/** How often a waiting tenant's endpoint is probed with its oldest waiting event */
export const WAITING_PROBE_SECONDS = 300;
/** A delivery waits this long at most; then it fails for good (the partner's replay route remains) */
export const WAITING_DAYS = 30;
/** Tenants and deliveries handled per sweep (one attempt at a time), so a sweep stays short; the rest are due at the next */
const TENANTS_PER_SWEEP = 20;
const DELIVERIES_PER_SWEEP = 200;

/**
 * In the transaction of an acknowledged attempt: the event's other waiting deliveries end (it arrived:
 * a redelivery must not be followed by the waiting one), and the tenant's other waiting deliveries are
 * due now, since its endpoint answers again.
 */
export async function endpointAnswered(
  tx: Executor,
  now: Date,
  eventId: string,
  api: WebhookApi,
  tenantId: string,
): Promise<void> {
  await tx
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', next_attempt_at: null, completed_at: now })
    .where('status', '=', 'waiting')
    .where('event_id', '=', eventId)
    .execute();
  await tx
    .updateTable('webhook_deliveries as d')
    .from('events as e')
    .set({ next_attempt_at: now })
    .whereRef('e.id', '=', 'd.event_id')
    .where('d.status', '=', 'waiting')
    .where('d.next_attempt_at', '>', now)
    .where('e.api', '=', api)
    .where('e.tenant_id', '=', tenantId)
    .execute();
}

export interface DeliveryRecoveryDeps {
  db: Db;
  clock: Clock;
  /** The delivery engine's one attempt of a delivery (passed in: the engine itself uses this module) */
  engine: { attempt(deliveryId: string): Promise<unknown> };
  tenants: WebhookTenantDirectory;
  logger: Logger;
}

export class DeliveryRecovery {
  constructor(private readonly deps: DeliveryRecoveryDeps) {}

  /** The sweep: delivers the waiting events of every tenant that is due (a probe, or its endpoint back). */
  async recoverDue(): Promise<number> {
    const { db, clock } = this.deps;
    const now = clock.now();
    await db
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', next_attempt_at: null, completed_at: now })
      .where('status', '=', 'waiting')
      .where('created_at', '<', addSeconds(now, -WAITING_DAYS * 86_400))
      .execute();
    const due = await db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .select(['e.api', 'e.tenant_id'])
      .distinct()
      .where('d.status', '=', 'waiting')
      .where('d.next_attempt_at', '<=', now)
      .limit(TENANTS_PER_SWEEP)
      .execute();
    let delivered = 0;
    for (const tenant of due) {
      delivered += await this.drain(tenant.api, tenant.tenant_id, DELIVERIES_PER_SWEEP - delivered);
      if (delivered >= DELIVERIES_PER_SWEEP) break;
    }
    return delivered;
  }

  /**
   * Delivers a tenant's waiting events oldest first, one attempt each, until one is not acknowledged:
   * then they all wait for the next probe. Answers how many were delivered.
   */
  private async drain(api: WebhookApi, tenantId: string, budget: number): Promise<number> {
    const { db, clock, engine, tenants, logger } = this.deps;
    let delivered = 0;
    while (delivered < budget) {
      const next = await db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('events as e', 'e.id', 'd.event_id')
        .select(['d.id', 'e.target_url'])
        .where('d.status', '=', 'waiting')
        .where('e.api', '=', api)
        .where('e.tenant_id', '=', tenantId)
        .orderBy('e.created_at')
        .orderBy('e.id')
        .limit(1)
        .executeTakeFirst();
      if (!next) break;
      // To the endpoint as it is now: a partner that moved its endpoint during the outage gets them there.
      const url = next.target_url ?? (await tenants.webhookUrl(db, api, tenantId));
      if (!url) {
        // No endpoint now (the URL was removed): nothing to try until the next probe.
        await this.waitForProbe(api, tenantId);
        break;
      }
      const released = await db
        .updateTable('webhook_deliveries')
        .set((eb) => ({
          status: 'pending',
          url,
          max_attempts: eb('attempt_count', '+', 1),
          next_attempt_at: clock.now(),
        }))
        .where('id', '=', next.id)
        .where('status', '=', 'waiting')
        .executeTakeFirst();
      if (released.numUpdatedRows === 0n) continue;
      await engine.attempt(next.id);
      const after = await db
        .selectFrom('webhook_deliveries')
        .select('status')
        .where('id', '=', next.id)
        .executeTakeFirstOrThrow();
      if (after.status === 'succeeded') {
        delivered++;
        continue;
      }
      if (after.status === 'waiting') await this.waitForProbe(api, tenantId);
      break;
    }
    if (delivered > 0) logger.info({ api, tenantId, delivered }, 'waiting webhook deliveries delivered');
    return delivered;
  }

  /** The endpoint still fails: the tenant's whole queue waits for the next probe. */
  private async waitForProbe(api: WebhookApi, tenantId: string): Promise<void> {
    const { db, clock } = this.deps;
    await db
      .updateTable('webhook_deliveries as d')
      .from('events as e')
      .set({ next_attempt_at: addSeconds(clock.now(), WAITING_PROBE_SECONDS) })
      .whereRef('e.id', '=', 'd.event_id')
      .where('d.status', '=', 'waiting')
      .where('e.api', '=', api)
      .where('e.tenant_id', '=', tenantId)
      .execute();
  }
}
