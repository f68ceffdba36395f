// A store's own webhook events (store key), as JSON:API documents: list, read with every delivery
// attempt, redeliver one, replay since a time or an event (Tessera's addition to the spec).
import { z } from 'zod';
import { eventDetailView, eventView, replayView } from '../../platform/events/event-views.ts';
import type { EventsService } from '../../platform/events/events-service.ts';
import { registerTenantEventRoutes } from '../../platform/events/tenant-event-routes.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { type StoreAuthenticator, storeOf } from './authenticate.ts';
import { errors } from './jsonapi.ts';

const eventResource = <T extends z.ZodObject>(attributes: T) =>
  z.object({ type: z.literal('events'), id: z.string(), attributes: attributes.omit({ eventId: true }) });
const asResource = <T extends { eventId: string }>({ eventId, ...attributes }: T) => ({
  type: 'events' as const,
  id: eventId,
  attributes,
});

export async function registerEventsRoutes(
  app: ZodApp,
  deps: { events: EventsService; authenticate: StoreAuthenticator },
): Promise<void> {
  await registerTenantEventRoutes(app, deps.events, {
    path: '/stores/events',
    authenticate: deps.authenticate,
    security: [{ storeApiKey: [] }],
    scopeOf: (request) => ({ api: 'crypto', tenantIds: [storeOf(request).id] }),
    errors,
    answers: {
      list: {
        schema: z.object({
          data: z.array(eventResource(eventView)),
          links: z.object({ next: z.string().nullable() }),
        }),
        present: ({ data, nextCursor }, request) => {
          const next = new URLSearchParams(request.query as Record<string, string>);
          if (nextCursor) next.set('cursor', nextCursor);
          return {
            data: data.map(asResource),
            links: { next: nextCursor ? `${request.url.split('?')[0]}?${next}` : null },
          };
        },
      },
      detail: {
        schema: z.object({ data: eventResource(eventDetailView) }),
        present: (event) => ({ data: asResource(event) }),
      },
      redelivered: {
        schema: z.object({ data: z.object({ type: z.literal('deliveries'), id: z.string() }) }),
        present: ({ deliveryId }) => ({ data: { type: 'deliveries', id: deliveryId } }),
      },
      replayed: {
        schema: z.object({ data: z.object({ type: z.literal('replays'), attributes: replayView }) }),
        present: (result) => ({ data: { type: 'replays', attributes: result } }),
      },
    },
  });
}
