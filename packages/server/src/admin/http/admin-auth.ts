// The operator authenticates with `Authorization: Bearer <TESSERA_ADMIN_TOKEN>` on /admin and /sandbox.
import type { FastifyInstance } from 'fastify';
import { tokensEqual } from '../../platform/crypto/hashing.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';

export function requireAdmin(app: FastifyInstance, adminToken: string): void {
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization;
    const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : undefined;
    if (!token || !tokensEqual(token, adminToken)) {
      throw new DomainError('unauthenticated', 'a valid admin token is required (Authorization: Bearer …)');
    }
    request.principal = { kind: 'admin', id: 'operator', scope: 'admin' };
  });
}
