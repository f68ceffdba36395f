// Who is calling the issuing API (docs/issuing.md, Authentication). Each route names the credential
// it takes; the hook runs in onRequest so the principal exists before the idempotency claim. Partners
// found by key or id are remembered until any tenant changes (platform/tenants/tenant-cache.ts); a
// customer's access token is checked against its login every time (a logout ends it at once).
import type { FastifyRequest } from 'fastify';
import { hashToken } from '../../platform/crypto/hashing.ts';
import type { Db } from '../../platform/db/database.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { bearerCredential } from '../../platform/http/bearer.ts';
import type { Partner, PartnersService } from '../../platform/tenants/partners-service.ts';
import type { TenantCache } from '../../platform/tenants/tenant-cache.ts';
import type { AuthService } from '../auth/auth-service.ts';

declare module 'fastify' {
  interface FastifyRequest {
    issuingPartner?: Partner;
    issuingCustomer?: { customerId: string; partnerId: string };
  }
}

export interface AuthenticateDeps {
  db: Db;
  partners: PartnersService;
  auth: AuthService;
  tenantCache: TenantCache;
}

const unauthenticated = (message: string) => new DomainError('unauthenticated', message);

export function bearerToken(request: FastifyRequest): string | undefined {
  return bearerCredential(request.headers.authorization);
}

export function authenticators(deps: AuthenticateDeps) {
  const found = (partner: Partner | undefined) => (partner ? { value: partner } : undefined);
  return {
    /** `x-partner-api-key`: the partner's backend (server-side only). */
    partnerApiKey: async (request: FastifyRequest) => {
      const key = request.headers['x-partner-api-key'];
      const partner =
        typeof key === 'string' && key
          ? await deps.tenantCache.get(`issuing-key:${hashToken(key)}`, async () =>
              found(await deps.partners.findByApiKey(deps.db, key)),
            )
          : undefined;
      if (!partner) throw unauthenticated('a valid x-partner-api-key is required');
      request.issuingPartner = partner;
      request.principal = { kind: 'partner', id: partner.id, scope: `issuing:partner:${partner.id}` };
    },
    /** `x-partner-id`: public registration and login routes of one partner's customers. */
    partnerId: async (request: FastifyRequest) => {
      const id = request.headers['x-partner-id'];
      const partner =
        typeof id === 'string' && id
          ? await deps.tenantCache.get(`issuing-id:${id}`, async () =>
              found(await deps.partners.findByPartnerId(deps.db, id)),
            )
          : undefined;
      // An unknown partner id is a 401, like a wrong key: nothing is said about which partners exist.
      if (!partner) throw unauthenticated('a valid x-partner-id is required');
      request.issuingPartner = partner;
      request.principal = {
        kind: 'anonymous',
        id: request.ip,
        scope: `issuing:public:${partner.id}:${request.ip}`,
      };
    },
    /** `Authorization: Bearer <access token>`: a customer. */
    customer: async (request: FastifyRequest) => {
      const token = bearerToken(request);
      const customer = token ? await deps.auth.authenticateAccess(token) : undefined;
      if (!customer) throw unauthenticated('a valid access token is required (Authorization: Bearer …)');
      request.issuingCustomer = customer;
      request.principal = {
        kind: 'customer',
        id: customer.customerId,
        scope: `issuing:customer:${customer.customerId}`,
      };
    },
    /** Refresh and two-factor session tokens are checked by the service; this only names the caller for idempotency. */
    bearerSecret: async (request: FastifyRequest) => {
      const token = bearerToken(request);
      if (!token) throw unauthenticated('a bearer token is required');
      request.principal = { kind: 'anonymous', id: request.ip, scope: `issuing:token:${token.slice(-16)}` };
    },
  };
}

export type Authenticators = ReturnType<typeof authenticators>;

export function requirePartner(request: FastifyRequest): Partner {
  if (!request.issuingPartner) throw new Error('route registered without partner authentication');
  return request.issuingPartner;
}

export function requireCustomer(request: FastifyRequest): { customerId: string; partnerId: string } {
  if (!request.issuingCustomer) throw new Error('route registered without customer authentication');
  return request.issuingCustomer;
}
