// The payments API (docs/payments.md) under its base path (default /payments).
import type { BankAccounts } from '../platform/bank-accounts/bank-accounts.ts';
import type { Clock } from '../platform/clock/clock.ts';
import type { Db } from '../platform/db/database.ts';
import type { EventsService } from '../platform/events/events-service.ts';
import type { ApiScopeOptions, ZodApp } from '../platform/http/api-scope.ts';
import type { Ledger } from '../platform/ledger/ledger.ts';
import type { MoneyOut } from '../platform/payouts/money-out.ts';
import type { MerchantsService } from '../platform/tenants/merchants-service.ts';
import type { TenantCache } from '../platform/tenants/tenant-cache.ts';
import type { WalletPaymentTokens } from '../rails/wallet-tokenization/payment-tokens.ts';
import { merchantAuthenticator } from './http/authenticate.ts';
import { registerBankAccountRoutes } from './http/bank-account-routes.ts';
import { registerCardsRoutes } from './http/cards-routes.ts';
import { registerCustomersRoutes } from './http/customers-routes.ts';
import { registerDisputesRoutes } from './http/disputes-routes.ts';
import { registerEventsRoutes } from './http/events-routes.ts';
import { acceptPaymentsBodies } from './http/form-body.ts';
import { registerLinksRoutes } from './http/links-routes.ts';
import { registerOrdersRoutes } from './http/orders-routes.ts';
import { registerPayoutRoutes } from './http/payouts-routes.ts';
import { presentPaymentsError } from './http/present-error.ts';
import { PAYMENTS_REQUEST_EXAMPLES } from './http/request-examples.ts';
import { registerSessionTokenRoutes } from './http/session-token-routes.ts';
import { registerTransactionsRoutes } from './http/transactions-routes.ts';
import type { PaymentsServices } from './payments-services.ts';

export interface PaymentsApiDeps extends PaymentsServices {
  db: Db;
  events: EventsService;
  merchants: MerchantsService;
  tenantCache: TenantCache;
  bankAccounts: BankAccounts;
  ledger: Ledger;
  clock: Clock;
  moneyOut: MoneyOut;
  /** The wallet rail: an order's encrypted wallet token is decrypted at the edge */
  walletTokens: WalletPaymentTokens;
}

export function paymentsApi(
  prefix: string,
  deps: PaymentsApiDeps,
): Omit<ApiScopeOptions, 'onDocument' | 'idempotency'> {
  return {
    name: 'payments',
    prefix,
    title: 'Tessera payments API',
    version: '1.0.0',
    description:
      'Merchants accept card payments: customers, orders, transactions, stored cards, payment links, IPN. Bodies are form-encoded (bracket keys) or JSON; answers are JSON in the {code, message, data} envelope.',
    presenter: presentPaymentsError,
    securitySchemes: { apiPrivateKey: { type: 'http', scheme: 'bearer' } },
    security: [{ apiPrivateKey: [] }],
    formBodies: true,
    requestExamples: PAYMENTS_REQUEST_EXAMPLES,
    routes: async (app: ZodApp) => {
      acceptPaymentsBodies(app);
      const authenticate = merchantAuthenticator(deps.db, deps.merchants, deps.tenantCache);
      await registerCustomersRoutes(app, { customers: deps.customers, authenticate });
      await registerOrdersRoutes(app, {
        orders: deps.orders,
        authenticate,
        walletTokens: deps.walletTokens,
        clock: deps.clock,
      });
      await registerTransactionsRoutes(app, { transactions: deps.transactions, authenticate });
      await registerDisputesRoutes(app, { disputes: deps.disputes, authenticate });
      await registerCardsRoutes(app, { cards: deps.cards, authenticate });
      await registerLinksRoutes(app, { links: deps.links, authenticate });
      await registerEventsRoutes(app, { events: deps.events, authenticate });
      await registerSessionTokenRoutes(app, { sessions: deps.checkoutSessions, authenticate });
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
