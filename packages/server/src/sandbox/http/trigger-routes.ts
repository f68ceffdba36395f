// /sandbox/triggers: make the sandbox produce a real event of any documented type for a tenant (what
// `tessera trigger` calls). Each trigger makes its objects through the APIs' own services, so the event,
// its webhook and its place in the event log are the same as in real use.
import { z } from 'zod';
import { standardErrors } from '../../admin/http/schemas.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import type { TriggerCatalog } from '../triggers/trigger-catalog.ts';

export async function registerTriggerRoutes(app: ZodApp, catalog: TriggerCatalog): Promise<void> {
  const triggerView = z.object({
    event: z.string().describe('the trigger’s name: an event type, or a step (review.approved)'),
    api: z.enum(['issuing', 'payments', 'crypto']),
    description: z.string(),
    produces: z.string().describe('the event type it produces: its name, or the event a step ends in'),
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
    async () => ({ data: catalog.list() }),
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
        params: z.object({ event: z.string().max(60).meta({ example: catalog.list()[0]?.event }) }),
        // The newest tenant of the trigger's API unless one is named.
        body: z
          .object({ tenantId: z.string().trim().min(1).max(64).optional() })
          .nullish()
          .meta({ example: {} }),
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
    async (request, reply) =>
      reply.code(201).send(await catalog.fire(request.params.event, request.body?.tenantId, request.log)),
  );
}
