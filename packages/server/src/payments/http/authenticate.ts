// Who is calling (spec, Authentication): the API private key, a JWT, as `Authorization: Bearer <key>`
// or a bare `Authorization: <key>` (shop plugins send it without Bearer, docs/wire-compatibility.md); or a site's secret
// key (`sk_<env>_<key>` or the key alone, as the real service's SDK sends it), which acts for that one
// site. Runs in onRequest so the principal exists before the idempotency claim. Revoked, rotated-out and
// tampered keys are 401.
import type { FastifyRequest } from 'fastify';
import type { Db } from '../../platform/db/database.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { bearerCredential } from '../../platform/http/bearer.ts';
import type { MerchantsService } from '../../platform/tenants/merchants-service.ts';
import { loadMerchantScope, type MerchantScope } from '../sites.ts';

declare module 'fastify' {
  interface FastifyRequest {
    paymentsMerchant?: MerchantScope;
  }
}

export type MerchantAuthenticator = (request: FastifyRequest) => Promise<void>;

export function merchantAuthenticator(db: Db, merchants: MerchantsService): MerchantAuthenticator {
  return async (request) => {
    // Shop plugins send the bare key as well as `Bearer <key>`.
    const header = request.headers.authorization;
    const key = bearerCredential(header) ?? (typeof header === 'string' ? header.trim() : '');
    const site = key ? await merchants.authenticateSecretKey(db, key) : undefined;
    const found = site ?? (key ? await merchants.authenticate(db, key) : undefined);
    if (!found) throw new DomainError('unauthenticated', 'the API key is missing, invalid or revoked');
    const scope = await loadMerchantScope(db, found.merchantId);
    // A site's key sees that site only: siteId defaults to it, another site's id is refused.
    request.paymentsMerchant = site ? { ...scope, siteIds: [site.siteId] } : scope;
    request.principal = {
      kind: 'merchant',
      id: String(found.merchantId),
      scope: `payments:merchant:${found.merchantId}`,
    };
  };
}

/** The authenticated merchant (the route's onRequest hook has run). */
export function merchantOf(request: FastifyRequest): MerchantScope {
  if (!request.paymentsMerchant) throw new DomainError('unauthenticated', 'the API key is missing');
  return request.paymentsMerchant;
}
