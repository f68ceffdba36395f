// POST /v1/auth/register/partner and /v1/auth/login/partner (x-partner-api-key): the partner's backend
// registers and logs in its own users (docs/wire-compatibility.md: body {email, walletAddress}; login {customerId}).
import { z } from 'zod';
import type { ZodApp } from '../../../platform/http/api-scope.ts';
import type { AuthService } from '../../auth/auth-service.ts';
import { type Authenticators, requirePartner } from '../authenticate.ts';
import { email, errors, tokenPair, walletAddress } from '../schemas.ts';

const userId = z.string().regex(/^[\w.:@-]{1,128}$/, 'letters, digits and . _ : @ - only, at most 128');

export async function registerPartnerAuthRoutes(
  app: ZodApp,
  auth: AuthService,
  authn: Authenticators,
): Promise<void> {
  app.post(
    '/auth/register/partner',
    {
      onRequest: authn.partnerApiKey,
      schema: {
        summary: 'Register a customer on the partner’s authority',
        description:
          'At least one of email or userId (the partner’s own user id). A duplicate is a 409 carrying the existing customerId.',
        tags: ['auth'],
        security: [{ partnerApiKey: [] }],
        body: z.object({
          email: email.optional(),
          userId: userId.optional(),
          walletAddress: walletAddress.optional(),
        }),
        response: { 201: z.object({ customerId: z.string() }), ...errors(400, 401, 409) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await auth.registerByPartner(requirePartner(request), request.body)),
  );

  app.post(
    '/auth/login/partner',
    {
      onRequest: authn.partnerApiKey,
      schema: {
        summary: 'Log a customer in on the partner’s authority',
        description: 'By Tessera customerId or the partner’s userId; another partner’s customer is a 404.',
        tags: ['auth'],
        security: [{ partnerApiKey: [] }],
        body: z.object({ customerId: z.string().max(64).optional(), userId: userId.optional() }),
        response: { 200: tokenPair, ...errors(400, 401, 404) },
      },
    },
    async (request) => auth.loginByPartner(requirePartner(request), request.body),
  );
}
