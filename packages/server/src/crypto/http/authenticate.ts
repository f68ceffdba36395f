// Who is calling the crypto API (docs/crypto.md, Authentication): `Authorization: Bearer
// <u_test_…|u_live_…>`. Runs in onRequest so the principal exists before the idempotency claim. A key
// once found is remembered with its store until any tenant changes (platform/tenants/tenant-cache.ts).
import type { FastifyRequest } from 'fastify';
import { hashToken } from '../../platform/crypto/hashing.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { bearerCredential } from '../../platform/http/bearer.ts';
import type { Store } from '../../platform/tenants/stores-service.ts';
import type { TenantCache } from '../../platform/tenants/tenant-cache.ts';
import type { SessionService } from '../session/session-service.ts';

declare module 'fastify' {
  interface FastifyRequest {
    cryptoStore?: Store;
  }
}

export type StoreAuthenticator = (request: FastifyRequest) => Promise<void>;

export function storeAuthenticator(sessions: SessionService, cache: TenantCache): StoreAuthenticator {
  const find = async (key: string) => {
    const store = await sessions.authenticate(key);
    return store ? { value: store } : undefined;
  };
  return async (request) => {
    const key = bearerCredential(request.headers.authorization);
    const store = key ? await cache.get(`crypto:${hashToken(key)}`, () => find(key)) : undefined;
    if (!store) throw new DomainError('unauthenticated', 'invalid_api_key');
    request.cryptoStore = store;
    request.principal = { kind: 'store', id: store.id, scope: `crypto:store:${store.id}` };
  };
}

/** The authenticated store (the route's onRequest hook has run). */
export function storeOf(request: FastifyRequest): Store {
  if (!request.cryptoStore) throw new DomainError('unauthenticated', 'invalid_api_key');
  return request.cryptoStore;
}
