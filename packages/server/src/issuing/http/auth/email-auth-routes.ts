// The email flow (x-partner-id): register with the spec's password policy, verify the emailed code,
// log in (answering a two-factor session when the customer has it on).
import { z } from 'zod';
import type { ZodApp } from '../../../platform/http/api-scope.ts';
import type { AuthService } from '../../auth/auth-service.ts';
import { PASSWORD_MAX_LENGTH } from '../../auth/password-policy.ts';
import { type Authenticators, requirePartner } from '../authenticate.ts';
import { code, email, errors, tokenPair } from '../schemas.ts';

const password = z.string().min(1).max(PASSWORD_MAX_LENGTH);

export async function registerEmailAuthRoutes(
  app: ZodApp,
  auth: AuthService,
  authn: Authenticators,
): Promise<void> {
  app.post(
    '/auth/register/email',
    {
      onRequest: authn.partnerId,
      schema: {
        summary: 'Register with email and password; a verification code is emailed',
        description:
          'Passwords: at least 8 characters with lowercase, uppercase, number and symbol. The answer is the same whether or not the email is taken.',
        tags: ['auth'],
        security: [{ partnerId: [] }],
        body: z.object({ email, password }),
        response: { 202: z.object({ status: z.literal('verification_sent') }), ...errors(400, 401) },
      },
    },
    async (request, reply) => {
      await auth.email.registerEmail(requirePartner(request), request.body);
      return reply.code(202).send({ status: 'verification_sent' as const });
    },
  );

  app.post(
    '/auth/register/email/verify',
    {
      onRequest: authn.partnerId,
      schema: {
        summary: 'Confirm the email with its code; answers the first tokens',
        tags: ['auth'],
        security: [{ partnerId: [] }],
        body: z.object({ email, code }),
        response: { 200: tokenPair, ...errors(400, 401) },
      },
    },
    async (request) => auth.email.verifyEmail(requirePartner(request), request.body),
  );

  app.post(
    '/auth/login/email',
    {
      onRequest: authn.partnerId,
      schema: {
        summary: 'Log in with email and password',
        description:
          'Answers tokens, or {twoFactorRequired, sessionToken} when two-factor is on. Five failures lock the account for 15 minutes.',
        tags: ['auth'],
        security: [{ partnerId: [] }],
        body: z.object({ email, password }),
        response: {
          200: z.union([
            tokenPair,
            z.object({
              twoFactorRequired: z.literal(true),
              sessionToken: z.string(),
              expiresIn: z.number().int(),
            }),
          ]),
          ...errors(400, 401),
        },
      },
    },
    async (request) => auth.email.loginEmail(requirePartner(request), request.body),
  );
}
