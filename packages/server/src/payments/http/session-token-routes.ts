// GET /auth/session-token (the real service's SDK calls it before it renders the embedded form): a
// short-lived token for the calling site, in the usual envelope.
import { z } from 'zod';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import type { CheckoutSessions } from '../checkout/checkout-sessions.ts';
import { siteOf } from '../sites.ts';
import { type MerchantAuthenticator, merchantOf } from './authenticate.ts';
import { envelope, ok, standardErrors } from './envelope.ts';
import { intField } from './fields.ts';

export async function registerSessionTokenRoutes(
  app: ZodApp,
  deps: { sessions: CheckoutSessions; authenticate: MerchantAuthenticator },
): Promise<void> {
  app.get(
    '/auth/session-token',
    {
      onRequest: deps.authenticate,
      schema: {
        summary: 'A session token for the embedded checkout form (valid 15 minutes)',
        description:
          'With a site’s secret key the token is for that site; with the merchant API key, siteId names the site when the merchant has several.',
        tags: ['checkout'],
        querystring: z.object({ siteId: intField.optional() }),
        response: {
          200: envelope(z.object({ token: z.string(), expiresAt: z.string() })),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const site = siteOf(merchantOf(request), request.query.siteId);
      const { token, expiresAt } = deps.sessions.issue(site);
      return ok({ token, expiresAt: expiresAt.toISOString() });
    },
  );
}
