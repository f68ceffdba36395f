// A partner's own webhook events (x-partner-api-key), in the issuing API's plain JSON: list, read with
// every delivery attempt, redeliver one, replay since a time or an event (Tessera's addition to the spec).
import { z } from 'zod';
import { eventDetailView, eventView, replayView } from '../../../platform/events/event-views.ts';
import type { EventsService } from '../../../platform/events/events-service.ts';
import { registerTenantEventRoutes } from '../../../platform/events/tenant-event-routes.ts';
import type { ZodApp } from '../../../platform/http/api-scope.ts';
import { type Authenticators, requirePartner } from '../authenticate.ts';
import { errors } from '../schemas.ts';

const asIs = <T extends z.ZodType>(schema: T) => ({ schema, present: (value: unknown) => value });

export async function registerPartnerEventsRoutes(
  app: ZodApp,
  events: EventsService,
  authn: Authenticators,
): Promise<void> {
  await registerTenantEventRoutes(app, events, {
    path: '/events',
    authenticate: authn.partnerApiKey,
    security: [{ partnerApiKey: [] }],
    scopeOf: (request) => ({ api: 'issuing', tenantIds: [requirePartner(request).id] }),
    errors: errors(400, 401, 404, 409, 429),
    answers: {
      list: asIs(z.object({ data: z.array(eventView), nextCursor: z.string().nullable() })),
      detail: asIs(eventDetailView),
      redelivered: asIs(z.object({ deliveryId: z.string() })),
      replayed: asIs(replayView),
    },
  });
}
