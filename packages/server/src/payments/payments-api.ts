// The payments API (spec/payments.md) under its base path (default /payments).
import type { ApiScopeOptions, ZodApp } from '../platform/http/api-scope.ts';
import { presentPaymentsError } from './http/present-error.ts';

export function paymentsApi(prefix: string): Omit<ApiScopeOptions, 'onDocument' | 'idempotency'> {
  return {
    name: 'payments',
    prefix,
    title: 'Tessera payments API',
    version: '1.0.0',
    description:
      'Merchants accept card payments: customers, orders, transactions, stored cards, payment links, IPN.',
    presenter: presentPaymentsError,
    securitySchemes: { apiPrivateKey: { type: 'http', scheme: 'bearer' } },
    routes: async (_app: ZodApp) => {},
  };
}
