// Token maintenance: refresh rotation and the two-factor routes (spec: bearer refresh token; bearer
// session token from a login that requires two-factor).
import { z } from 'zod';
import type { ZodApp } from '../../../platform/http/api-scope.ts';
import type { AuthService } from '../../auth/auth-service.ts';
import { type Authenticators, bearerToken, requireCustomer } from '../authenticate.ts';
import { code, errors, tokenPair } from '../schemas.ts';

export async function registerSessionRoutes(
  app: ZodApp,
  auth: AuthService,
  authn: Authenticators,
): Promise<void> {
  app.post(
    '/auth/refresh',
    {
      onRequest: authn.bearerSecret,
      schema: {
        summary: 'Rotate a refresh token (Authorization: Bearer <refresh token>)',
        description:
          'The old token stops working. Presenting a rotated token again revokes every token of that login.',
        tags: ['auth'],
        security: [{ customerToken: [] }],
        response: { 200: tokenPair, ...errors(401) },
      },
    },
    async (request) => auth.refresh(bearerToken(request) ?? ''),
  );

  app.post(
    '/auth/logout',
    {
      onRequest: authn.bearerSecret,
      schema: {
        summary: 'End a login: its refresh and access tokens stop working at once (Tessera extension)',
        description: 'Authorization: Bearer <access token> or <refresh token> of the login to end.',
        tags: ['auth'],
        security: [{ customerToken: [] }],
        response: { 204: z.null(), ...errors(401) },
      },
    },
    async (request, reply) => {
      await auth.logout(bearerToken(request) ?? '');
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/auth/2fa/send',
    {
      onRequest: authn.bearerSecret,
      schema: {
        summary: 'Send a 6-digit login code (Authorization: Bearer <session token>)',
        tags: ['auth'],
        security: [{ customerToken: [] }],
        response: {
          202: z.object({ channel: z.literal('email'), expiresAt: z.iso.datetime() }),
          ...errors(401, 429),
        },
      },
    },
    async (request, reply) => {
      const sent = await auth.email.sendTwoFactorCode(bearerToken(request) ?? '');
      return reply.code(202).send({ channel: sent.channel, expiresAt: sent.expiresAt.toISOString() });
    },
  );

  app.post(
    '/auth/2fa/verify',
    {
      onRequest: authn.bearerSecret,
      schema: {
        summary: 'Exchange the session and its code for tokens',
        description: 'Five wrong codes end the session and count as a failed login.',
        tags: ['auth'],
        security: [{ customerToken: [] }],
        body: z.object({ code }),
        response: { 200: tokenPair, ...errors(400, 401) },
      },
    },
    async (request) => auth.email.verifyTwoFactor(bearerToken(request) ?? '', request.body.code),
  );

  app.put(
    '/auth/2fa',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'Turn two-factor login on or off for the calling customer',
        tags: ['auth'],
        security: [{ customerToken: [] }],
        body: z.object({ enabled: z.boolean() }),
        response: { 200: z.object({ twoFactorEnabled: z.boolean() }), ...errors(400, 401, 409) },
      },
    },
    async (request) => auth.email.setTwoFactor(requireCustomer(request).customerId, request.body.enabled),
  );
}
