// Every sandbox trigger with its API's services bound: what `POST /sandbox/triggers/{event}`, `tessera
// trigger` and the console's sandbox page fire. Each makes its objects through the APIs' own services, so
// the event, its webhook and its place in the event log are those of real use.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../platform/db/database.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import type { EventsService } from '../../platform/events/events-service.ts';
import { advanceAndRunSweeps, type ClockDeps } from '../http/clock-routes.ts';
import { CRYPTO_TRIGGERS, type CryptoTriggerServices } from './crypto-triggers.ts';
import { ISSUING_TRIGGERS, type IssuingTriggerServices } from './issuing-triggers.ts';
import { PAYMENTS_TRIGGERS, type PaymentsTriggerServices } from './payments-triggers.ts';
import type { Trigger, TriggerApi, TriggerClock } from './trigger-context.ts';

export interface TriggerDeps {
  db: Db;
  events: EventsService;
  clockDeps: ClockDeps;
  crypto: Omit<CryptoTriggerServices, 'clock'>;
  payments: Omit<PaymentsTriggerServices, 'clock'>;
  issuing: Omit<IssuingTriggerServices, 'clock'>;
}

/** A trigger with its API's services bound. */
interface BoundTrigger {
  api: TriggerApi;
  description: string;
  produces: string | undefined;
  run(tenantId: string, clock: TriggerClock): Promise<Record<string, string>>;
}

export interface Fired {
  event: string;
  api: TriggerApi;
  tenantId: string;
  objects: Record<string, string>;
  events: { eventId: string; type: string }[];
}

function bind<S extends { clock: TriggerClock }>(
  triggers: Record<string, Trigger<S>>,
  services: Omit<S, 'clock'>,
): [string, BoundTrigger][] {
  return Object.entries(triggers).map(([event, t]) => [
    event,
    {
      api: t.api,
      description: t.description,
      produces: t.produces,
      run: (tenantId, clock) => t.run({ ...services, clock } as S, tenantId),
    },
  ]);
}

const TENANT_TABLE = { issuing: 'partners', payments: 'sites', crypto: 'stores' } as const;

export class TriggerCatalog {
  private readonly catalog: Map<string, BoundTrigger>;

  constructor(private readonly deps: TriggerDeps) {
    this.catalog = new Map([
      ...bind(ISSUING_TRIGGERS, deps.issuing),
      ...bind(PAYMENTS_TRIGGERS, deps.payments),
      ...bind(CRYPTO_TRIGGERS, deps.crypto),
    ]);
  }

  list(): { event: string; api: TriggerApi; description: string; produces: string }[] {
    return [...this.catalog].map(([event, t]) => ({
      event,
      api: t.api,
      description: t.description,
      produces: t.produces ?? event,
    }));
  }

  /**
   * Produces a real event of this type for a tenant (the newest tenant of its API when none is named); a
   * step's trigger (a review's outcome) the event the step ends in.
   */
  async fire(event: string, tenantIdGiven: string | undefined, log: FastifyBaseLogger): Promise<Fired> {
    const trigger = this.catalog.get(event);
    if (!trigger) {
      throw new DomainError('not_found', `no trigger for ${event}: GET /sandbox/triggers lists them`, {
        field: 'event',
      });
    }
    const tenantId = tenantIdGiven ?? (await this.newestTenant(trigger.api));
    const clock: TriggerClock = {
      advance: async (seconds) => {
        await advanceAndRunSweeps(this.deps.clockDeps, seconds, log);
      },
    };
    const since = this.deps.clockDeps.clock.now();
    const objects = await trigger.run(tenantId, clock);
    const page = await this.deps.events.list({ api: trigger.api, tenantId, since, limit: 100 });
    const events = page.events.reverse().map((e) => ({ eventId: e.eventId, type: e.type }));
    const produced = trigger.produces ?? event;
    if (!events.some((e) => e.type === produced))
      throw new Error(`the trigger ${event} made no ${produced} event`);
    return { event, api: trigger.api, tenantId, objects, events };
  }

  private async newestTenant(api: TriggerApi): Promise<string> {
    const row = await this.deps.db
      .selectFrom(TENANT_TABLE[api])
      .select('id')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .executeTakeFirst();
    if (!row) {
      throw notFound(
        `${api === 'issuing' ? 'partner' : api === 'payments' ? 'site' : 'store'} (create one first)`,
      );
    }
    return String(row.id);
  }
}
