// Who is calling (spec, Authentication): the API private key, a JWT, as `Authorization: Bearer <key>`
// or a bare `Authorization: <key>` (shop plugins send it without Bearer, docs/wire-compatibility.md); or a site's secret
// key (`sk_<env>_<key>` or the key alone, as the real service's SDK sends it), which acts for that one
// site. Runs in onRequest so the principal exists before the idempotency claim. Revoked, rotated-out and
// tampered keys are 401. A key once verified is remembered with its merchant's sites until any tenant
// changes (platform/tenants/tenant-cache.ts): a request then pays no signature check and no query.
import type { FastifyRequest } from 'fastify';
import { hashToken } from '../../platform/crypto/hashing.ts';
import type { Db } from '../../platform/db/database.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { bearerCredential } from '../../platform/http/bearer.ts';
import type { MerchantsService } from '../../platform/tenants/merchants-service.ts';
import type { Cached, TenantCache } from '../../platform/tenants/tenant-cache.ts';
import { loadMerchantScope, type MerchantScope } from '../sites.ts';

declare module 'fastify' {
  interface FastifyRequest {
    paymentsMerchant?: MerchantScope;
  }
}

export type MerchantAuthenticator = (request: FastifyRequest) => Promise<void>;

interface VerifiedKey {
  merchantId: number;
  scope: MerchantScope;
}

export function merchantAuthenticator(
  db: Db,
  merchants: MerchantsService,
  cache: TenantCache,
): MerchantAuthenticator {
  const verify = async (key: string): Promise<Cached<VerifiedKey> | undefined> => {
    const site = await merchants.authenticateSecretKey(db, key);
    const found = site ?? (await merchants.authenticate(db, key));
    if (!found) return undefined;
    const scope = await loadMerchantScope(db, found.merchantId);
    // A site's key sees that site only: siteId defaults to it, another site's id is refused.
    return {
      value: { merchantId: found.merchantId, scope: site ? { ...scope, siteIds: [site.siteId] } : scope },
      // A rotated-out key works until its overlap ends, on the injected clock.
      validUntil: site?.validUntil ?? null,
    };
  };
  return async (request) => {
    // Shop plugins send the bare key as well as `Bearer <key>`.
    const header = request.headers.authorization;
    const key = bearerCredential(header) ?? (typeof header === 'string' ? header.trim() : '');
    const verified = key ? await cache.get(`payments:${hashToken(key)}`, () => verify(key)) : undefined;
    if (!verified) throw new DomainError('unauthenticated', 'the API key is missing, invalid or revoked');
    request.paymentsMerchant = verified.scope;
    request.principal = {
      kind: 'merchant',
      id: String(verified.merchantId),
      scope: `payments:merchant:${verified.merchantId}`,
    };
  };
}

/** The authenticated merchant (the route's onRequest hook has run). */
export function merchantOf(request: FastifyRequest): MerchantScope {
  if (!request.paymentsMerchant) throw new DomainError('unauthenticated', 'the API key is missing');
  return request.paymentsMerchant;
}
