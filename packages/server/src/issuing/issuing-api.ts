// The card issuing API (spec/card-issuing.md) under its base path (default /issuing/v1).
import type { ApiScopeOptions, ZodApp } from '../platform/http/api-scope.ts';
import { presentIssuingError } from './http/present-error.ts';

export function issuingApi(prefix: string): Omit<ApiScopeOptions, 'onDocument' | 'idempotency'> {
  return {
    name: 'issuing',
    prefix,
    title: 'Tessera card issuing API',
    version: '1.0.0',
    description:
      'Partners issue cards to their customers: auth, KYC, accounts, cards, topups, 3D Secure, webhooks.',
    presenter: presentIssuingError,
    securitySchemes: {
      partnerApiKey: { type: 'apiKey', in: 'header', name: 'x-partner-api-key' },
      partnerId: { type: 'apiKey', in: 'header', name: 'x-partner-id' },
      customerToken: { type: 'http', scheme: 'bearer' },
    },
    routes: async (_app: ZodApp) => {},
  };
}
