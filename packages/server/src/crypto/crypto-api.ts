// The crypto merchant API (spec/crypto-merchant.md) under its base path (default /crypto/api).
import type { ApiScopeOptions, ZodApp } from '../platform/http/api-scope.ts';
import { presentCryptoError } from './http/present-error.ts';

export function cryptoApi(prefix: string): Omit<ApiScopeOptions, 'onDocument' | 'idempotency'> {
  return {
    name: 'crypto',
    prefix,
    title: 'Tessera crypto merchant API',
    version: '1.1.0',
    description:
      'Stores accept crypto payments: orders with a hosted payment page, refunds, currencies, quotes.',
    presenter: presentCryptoError,
    securitySchemes: { storeApiKey: { type: 'http', scheme: 'bearer' } },
    routes: async (_app: ZodApp) => {},
  };
}
