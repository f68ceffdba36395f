// A partner's own webhook events (x-partner-api-key): list, read with every delivery attempt, redeliver
// one, replay all since a time. Tessera's addition to the spec, so a receiver that was down catches up.
import { z } from 'zod';
import {
  eventDetailView,
  eventListQuery,
  eventView,
  presentEvent,
  presentEventDetail,
  replayView,
  toEventFilter,
} from '../../../platform/events/event-views.ts';
import type { EventScope, EventsService } from '../../../platform/events/events-service.ts';
import type { ZodApp } from '../../../platform/http/api-scope.ts';
import { type Authenticators, requirePartner } from '../authenticate.ts';
import { errors } from '../schemas.ts';

const timestamp = z.iso.datetime({ offset: true });
const eventIdParam = z.object({ eventId: z.string().max(100) });

export async function registerPartnerEventsRoutes(
  app: ZodApp,
  events: EventsService,
  authn: Authenticators,
): Promise<void> {
  const scopeOf = (request: Parameters<typeof requirePartner>[0]): EventScope => ({
    api: 'issuing',
    tenantId: requirePartner(request).id,
  });
  const common = { onRequest: authn.partnerApiKey, tags: ['events'], security: [{ partnerApiKey: [] }] };

  app.get(
    '/events',
    {
      onRequest: common.onRequest,
      schema: {
        summary: 'The partner’s webhook events, newest first',
        tags: common.tags,
        security: common.security,
        querystring: eventListQuery,
        response: {
          200: z.object({ data: z.array(eventView), nextCursor: z.string().nullable() }),
          ...errors(400, 401),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const page = await events.list(toEventFilter(q), scopeOf(request));
      return { data: page.events.map(presentEvent), nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/events/:eventId',
    {
      onRequest: common.onRequest,
      schema: {
        summary: 'One event with every delivery attempt',
        tags: common.tags,
        security: common.security,
        params: eventIdParam,
        response: { 200: eventDetailView, ...errors(401, 404) },
      },
    },
    async (request) => presentEventDetail(await events.get(request.params.eventId, scopeOf(request))),
  );

  app.post(
    '/events/:eventId/redeliver',
    {
      onRequest: common.onRequest,
      schema: {
        summary: 'Send the event again (same eventId, fresh attempts)',
        tags: common.tags,
        security: common.security,
        params: eventIdParam,
        response: { 202: z.object({ deliveryId: z.string() }), ...errors(401, 404, 409) },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await events.redeliver(request.params.eventId, scopeOf(request))),
  );

  app.post(
    '/events/replay',
    {
      onRequest: common.onRequest,
      schema: {
        summary: 'Send again every event created since a time, oldest first',
        tags: common.tags,
        security: common.security,
        body: z.object({ since: timestamp }),
        response: { 202: replayView, ...errors(400, 401) },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await events.replay({ since: new Date(request.body.since) }, scopeOf(request))),
  );
}
