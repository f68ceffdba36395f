// POST /stores/session (docs/wire-compatibility.md): client credentials in, the store's API key out (shown once).
import { z } from 'zod';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import type { SessionService } from '../session/session-service.ts';
import { errors } from './jsonapi.ts';

export async function registerSessionRoutes(app: ZodApp, sessions: SessionService): Promise<void> {
  app.post(
    '/stores/session',
    {
      schema: {
        summary: 'Exchange client_id and client_secret for an API key (u_test_/u_live_ + 24 characters)',
        description:
          'Each call issues a new key; earlier keys keep working unless revoke_existing is true, so a deployment can roll keys without downtime. The key is shown only in this answer.',
        tags: ['session'],
        security: [],
        body: z.object({
          data: z.object({
            type: z.literal('session').optional(),
            attributes: z.object({
              client_id: z.string().min(1).max(200),
              client_secret: z.string().min(1).max(200),
              revoke_existing: z.boolean().optional(),
            }),
          }),
        }),
        response: {
          200: z.object({
            data: z.object({
              type: z.literal('session'),
              id: z.string(),
              attributes: z.object({ token: z.string() }),
            }),
          }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const a = request.body.data.attributes;
      const { key } = await sessions.open({
        clientId: a.client_id,
        clientSecret: a.client_secret,
        revokeOthers: a.revoke_existing ?? false,
      });
      return reply
        .type('application/vnd.api+json')
        .send({ data: { type: 'session', id: key, attributes: { token: key } } });
    },
  );
}
