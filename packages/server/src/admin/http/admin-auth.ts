// The operator authenticates with `Authorization: Bearer <TESSERA_ADMIN_TOKEN>` on /admin and /sandbox.
import type { FastifyInstance } from 'fastify';
import { tokensEqual } from '../../platform/crypto/hashing.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { bearerCredential } from '../../platform/http/bearer.ts';

export function requireAdmin(app: FastifyInstance, adminToken: string): void {
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization;
    const token = bearerCredential(header);
    if (!token || !tokensEqual(token, adminToken)) {
      throw new DomainError('unauthenticated', 'a valid admin token is required (Authorization: Bearer …)');
    }
    request.principal = { kind: 'admin', id: 'operator', scope: 'admin' };
  });
}
