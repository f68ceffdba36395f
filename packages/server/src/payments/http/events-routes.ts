// A merchant's own IPN events, of all its sites (merchant API key), in the payments envelope: list, read
// with every delivery attempt, redeliver one, replay since a time or an event (Tessera's addition).
import { z } from 'zod';
import { eventDetailView, eventView, replayView } from '../../platform/events/event-views.ts';
import type { EventsService } from '../../platform/events/events-service.ts';
import { registerTenantEventRoutes } from '../../platform/events/tenant-event-routes.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { type MerchantAuthenticator, merchantOf } from './authenticate.ts';
import { envelope, errorEnvelope } from './envelope.ts';

const inEnvelope = <T extends z.ZodType>(data: T, code: 200 | 202) => ({
  schema: envelope(data),
  present: (value: unknown) => ({ code, message: code === 200 ? 'Success' : 'Accepted', data: value }),
});

export async function registerEventsRoutes(
  app: ZodApp,
  deps: { events: EventsService; authenticate: MerchantAuthenticator },
): Promise<void> {
  await registerTenantEventRoutes(app, deps.events, {
    path: '/events',
    authenticate: deps.authenticate,
    security: [{ apiPrivateKey: [] }],
    scopeOf: (request) => ({ api: 'payments', tenantIds: merchantOf(request).siteIds.map(String) }),
    errors: Object.fromEntries([400, 401, 404, 409, 429].map((s) => [s, errorEnvelope])),
    answers: {
      list: {
        schema: envelope(z.array(eventView)).extend({ nextCursor: z.string().nullable() }),
        present: ({ data, nextCursor }) => ({ code: 200, message: 'Success', data, nextCursor }),
      },
      detail: inEnvelope(eventDetailView, 200),
      redelivered: inEnvelope(z.object({ deliveryId: z.string() }), 202),
      replayed: inEnvelope(replayView, 202),
    },
  });
}
