// /admin/events: the operator's view of the outbox — every event of every API, its deliveries and
// attempts; redelivery of one event and replay of all events since a time.
import { z } from 'zod';
import {
  eventDetailView,
  eventListQuery,
  eventView,
  presentEvent,
  presentEventDetail,
  toEventFilter,
} from '../../platform/events/event-views.ts';
import { exactlyOneStart, REPLAY_EXAMPLE, replayFields } from '../../platform/events/tenant-event-routes.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import type { AdminDeps } from './admin-deps.ts';
import { idParam, standardErrors } from './schemas.ts';

const apiEnum = z.enum(['issuing', 'payments', 'crypto']);

export async function registerEventRoutes(app: ZodApp, deps: AdminDeps): Promise<void> {
  app.get(
    '/events',
    {
      schema: {
        summary: 'List events, newest first',
        tags: ['events'],
        querystring: eventListQuery.extend({
          api: apiEnum.optional(),
          tenantId: z.string().max(100).optional(),
        }),
        response: {
          200: z.object({ data: z.array(eventView), nextCursor: z.string().nullable() }),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await deps.events.list({
        ...toEventFilter(q),
        ...(q.api ? { api: q.api } : {}),
        ...(q.tenantId ? { tenantId: q.tenantId } : {}),
      });
      return { data: page.events.map(presentEvent), nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/events/:id',
    {
      schema: {
        summary: 'Retrieve an event with every delivery and attempt',
        tags: ['events'],
        params: idParam,
        response: { 200: eventDetailView, ...standardErrors },
      },
    },
    async (request) => presentEventDetail(await deps.events.get(request.params.id)),
  );

  app.get(
    '/events/:id/webhook-request',
    {
      schema: {
        summary:
          'The webhook request the event makes, signed with its tenant’s secret, not sent (what `tessera listen` forwards)',
        tags: ['events'],
        params: idParam,
        response: {
          200: z.object({
            eventId: z.string(),
            api: apiEnum,
            tenantId: z.string(),
            type: z.string(),
            headers: z.record(z.string(), z.string()),
            body: z.string(),
          }),
          ...standardErrors,
        },
      },
    },
    async (request) => deps.events.webhookRequest(request.params.id),
  );

  app.post(
    '/events/:id/redeliver',
    {
      schema: {
        summary: 'Send the event again (same eventId, fresh attempts) to its current endpoint',
        tags: ['events'],
        params: idParam,
        response: { 202: z.object({ deliveryId: z.string() }), ...standardErrors },
      },
    },
    async (request, reply) => reply.code(202).send(await deps.events.redeliver(request.params.id)),
  );

  app.post(
    '/events/replay',
    {
      schema: {
        summary:
          'Redeliver every event since a time or after an event (optionally of one API or tenant), oldest first',
        tags: ['events'],
        body: replayFields
          .extend({ api: apiEnum.optional(), tenantId: z.string().max(100).optional() })
          .refine(...exactlyOneStart)
          .meta(REPLAY_EXAMPLE),
        response: {
          202: z.object({
            replayed: z.number().int(),
            skippedWithoutUrl: z.number().int(),
            isTruncated: z.boolean(),
          }),
          ...standardErrors,
        },
      },
    },
    async (request, reply) => {
      const { since, afterEventId, api, tenantId } = request.body;
      return reply.code(202).send(
        await deps.events.replay({
          ...(since ? { since: new Date(since) } : {}),
          ...(afterEventId ? { afterEventId } : {}),
          ...(api ? { api } : {}),
          ...(tenantId ? { tenantId } : {}),
        }),
      );
    },
  );
}
