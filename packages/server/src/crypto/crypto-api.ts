// The crypto merchant API (docs/crypto.md) under its base path (default /crypto/api).
import type { BankAccounts } from '../platform/bank-accounts/bank-accounts.ts';
import type { Clock } from '../platform/clock/clock.ts';
import type { Db } from '../platform/db/database.ts';
import type { EventsService } from '../platform/events/events-service.ts';
import type { ApiScopeOptions, ZodApp } from '../platform/http/api-scope.ts';
import type { Ledger } from '../platform/ledger/ledger.ts';
import type { MoneyOut } from '../platform/payouts/money-out.ts';
import type { TenantCache } from '../platform/tenants/tenant-cache.ts';
import type { CryptoServices } from './crypto-services.ts';
import { storeAuthenticator } from './http/authenticate.ts';
import { registerBankAccountRoutes } from './http/bank-account-routes.ts';
import { registerEventsRoutes } from './http/events-routes.ts';
import { acceptJsonApi, answerJsonApi, JSON_API } from './http/jsonapi.ts';
import { registerOrdersRoutes } from './http/orders-routes.ts';
import { registerPayoutRoutes } from './http/payouts-routes.ts';
import { presentCryptoError } from './http/present-error.ts';
import { registerRatesRoutes } from './http/rates-routes.ts';
import { registerRefundsRoutes } from './http/refunds-routes.ts';
import { CRYPTO_REQUEST_EXAMPLES } from './http/request-examples.ts';
import { registerSessionRoutes } from './http/session-routes.ts';

export interface CryptoApiDeps extends CryptoServices {
  tenantCache: TenantCache;
  events: EventsService;
  checkCallbackUrl: (url: string, field: string) => void;
  bankAccounts: BankAccounts;
  db: Db;
  ledger: Ledger;
  clock: Clock;
  moneyOut: MoneyOut;
}

export function cryptoApi(
  prefix: string,
  deps: CryptoApiDeps,
): Omit<ApiScopeOptions, 'onDocument' | 'idempotency'> {
  return {
    name: 'crypto',
    prefix,
    title: 'Tessera crypto merchant API',
    version: '1.1.0',
    description:
      'Stores accept crypto payments: orders with a hosted payment page, refunds, currencies, quotes. JSON:API documents (application/vnd.api+json; application/json accepted).',
    presenter: presentCryptoError,
    successMediaType: JSON_API,
    requestExamples: CRYPTO_REQUEST_EXAMPLES,
    securitySchemes: { storeApiKey: { type: 'http', scheme: 'bearer' } },
    security: [{ storeApiKey: [] }],
    routes: async (app: ZodApp) => {
      acceptJsonApi(app);
      answerJsonApi(app);
      const authenticate = storeAuthenticator(deps.sessions, deps.tenantCache);
      await registerSessionRoutes(app, deps.sessions);
      await registerOrdersRoutes(app, {
        orders: deps.orders,
        authenticate,
        checkCallbackUrl: deps.checkCallbackUrl,
      });
      await registerRefundsRoutes(app, { refunds: deps.refunds, authenticate });
      await registerRatesRoutes(app, { quotes: deps.quotes, authenticate });
      await registerEventsRoutes(app, { events: deps.events, authenticate });
      await registerBankAccountRoutes(app, { db: deps.db, bankAccounts: deps.bankAccounts, authenticate });
      await registerPayoutRoutes(app, {
        db: deps.db,
        ledger: deps.ledger,
        clock: deps.clock,
        payouts: deps.moneyOut.payouts,
        authenticate,
      });
    },
  };
}
