// /sandbox/triggers: make the sandbox produce a real event of any documented type for a tenant (what
// `tessera trigger` calls). Each trigger makes its objects through the APIs' own services, so the event,
// its webhook and its place in the event log are the same as in real use.
import { z } from 'zod';
import { standardErrors } from '../../admin/http/schemas.ts';
import type { Db } from '../../platform/db/database.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import type { EventsService } from '../../platform/events/events-service.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { CRYPTO_TRIGGERS, type CryptoTriggerServices } from '../triggers/crypto-triggers.ts';
import { ISSUING_TRIGGERS, type IssuingTriggerServices } from '../triggers/issuing-triggers.ts';
import { PAYMENTS_TRIGGERS, type PaymentsTriggerServices } from '../triggers/payments-triggers.ts';
import type { Trigger, TriggerApi, TriggerClock } from '../triggers/trigger-context.ts';
import { advanceAndRunSweeps, type ClockDeps } from './clock-routes.ts';

export interface TriggerDeps {
  db: Db;
  events: EventsService;
  clockDeps: ClockDeps;
  crypto: Omit<CryptoTriggerServices, 'clock'>;
  payments: Omit<PaymentsTriggerServices, 'clock'>;
  issuing: Omit<IssuingTriggerServices, 'clock'>;
}

/** A trigger with its API's services bound: what the routes run. */
interface BoundTrigger {
  api: TriggerApi;
  description: string;
  run(tenantId: string, clock: TriggerClock): Promise<Record<string, string>>;
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
      run: (tenantId, clock) => t.run({ ...services, clock } as S, tenantId),
    },
  ]);
}

const TENANT_TABLE = { issuing: 'partners', payments: 'sites', crypto: 'stores' } as const;

export async function registerTriggerRoutes(app: ZodApp, deps: TriggerDeps): Promise<void> {
  const catalog = new Map<string, BoundTrigger>([
    ...bind(ISSUING_TRIGGERS, deps.issuing),
    ...bind(PAYMENTS_TRIGGERS, deps.payments),
    ...bind(CRYPTO_TRIGGERS, deps.crypto),
  ]);
  const triggerView = z.object({
    event: z.string(),
    api: z.enum(['issuing', 'payments', 'crypto']),
    description: z.string(),
  });

  app.get(
    '/triggers',
    {
      schema: {
        summary: 'The events a trigger can produce',
        tags: ['triggers'],
        response: { 200: z.object({ data: z.array(triggerView) }), ...standardErrors },
      },
    },
    async () => ({
      data: [...catalog].map(([event, t]) => ({ event, api: t.api, description: t.description })),
    }),
  );

  app.post(
    '/triggers/:event',
    {
      // A trigger may move the sandbox clock on: not a replayable unit of work (as /clock/advance).
      config: { idempotency: 'refuse' },
      schema: {
        summary:
          'Produce a real event of this type for a tenant (the newest tenant of its API when none is named)',
        tags: ['triggers'],
        params: z.object({ event: z.string().max(60) }),
        body: z.object({ tenantId: z.string().trim().min(1).max(64).optional() }).nullish(),
        response: {
          201: z.object({
            event: z.string(),
            api: z.enum(['issuing', 'payments', 'crypto']),
            tenantId: z.string(),
            objects: z.record(z.string(), z.string()),
            events: z.array(z.object({ eventId: z.string(), type: z.string() })),
          }),
          ...standardErrors,
        },
      },
    },
    async (request, reply) => {
      const trigger = catalog.get(request.params.event);
      if (!trigger) {
        throw new DomainError(
          'not_found',
          `no trigger for ${request.params.event}: GET /sandbox/triggers lists them`,
          {
            field: 'event',
          },
        );
      }
      const tenantId = request.body?.tenantId ?? (await newestTenant(deps.db, trigger.api));
      const clock: TriggerClock = {
        advance: async (seconds) => {
          await advanceAndRunSweeps(deps.clockDeps, seconds, request.log);
        },
      };
      const since = deps.clockDeps.clock.now();
      const objects = await trigger.run(tenantId, clock);
      const page = await deps.events.list({ api: trigger.api, tenantId, since, limit: 100 });
      const events = page.events.reverse().map((e) => ({ eventId: e.eventId, type: e.type }));
      if (!events.some((e) => e.type === request.params.event)) {
        throw new Error(`the trigger ${request.params.event} made no such event`);
      }
      return reply
        .code(201)
        .send({ event: request.params.event, api: trigger.api, tenantId, objects, events });
    },
  );
}

async function newestTenant(db: Db, api: TriggerApi): Promise<string> {
  const row = await db
    .selectFrom(TENANT_TABLE[api])
    .select('id')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
  if (!row)
    throw notFound(
      `${api === 'issuing' ? 'partner' : api === 'payments' ? 'site' : 'store'} (create one first)`,
    );
  return String(row.id);
}
