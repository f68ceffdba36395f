// The card issuing API (docs/issuing.md) under its base path (default /issuing/v1).
import type { Db } from '../platform/db/database.ts';
import type { EventsService } from '../platform/events/events-service.ts';
import type { ApiScopeOptions, ZodApp } from '../platform/http/api-scope.ts';
import type { PartnersService } from '../platform/tenants/partners-service.ts';
import type { TenantCache } from '../platform/tenants/tenant-cache.ts';
import type { AccountsService } from './accounts/accounts-service.ts';
import type { AuthService } from './auth/auth-service.ts';
import type { CardsService } from './cards/cards-service.ts';
import type { SpendingControlsService } from './cards/spending-controls-service.ts';
import type { IssuingDisputesService } from './disputes/disputes-service.ts';
import { registerAccountsRoutes } from './http/accounts/accounts-routes.ts';
import { registerEmailAuthRoutes } from './http/auth/email-auth-routes.ts';
import { registerPartnerAuthRoutes } from './http/auth/partner-auth-routes.ts';
import { registerSessionRoutes } from './http/auth/session-routes.ts';
import { registerWalletAuthRoutes } from './http/auth/wallet-auth-routes.ts';
import { authenticators } from './http/authenticate.ts';
import { registerCardsRoutes } from './http/cards/cards-routes.ts';
import { registerSpendingControlsRoutes } from './http/cards/spending-controls-routes.ts';
import { registerDisputesRoutes } from './http/disputes/disputes-routes.ts';
import { registerPartnerEventsRoutes } from './http/events/partner-events-routes.ts';
import { registerKycRoutes } from './http/kyc/kyc-routes.ts';
import { presentIssuingError } from './http/present-error.ts';
import { registerTopupsRoutes } from './http/topups/topups-routes.ts';
import { registerTransactionsRoutes } from './http/transactions/transactions-routes.ts';
import type { KycService } from './kyc/kyc-service.ts';
import type { CryptoTopups } from './topups/crypto-topups.ts';
import type { TopupsService } from './topups/topups-service.ts';
import type { TransactionsService } from './transactions/transactions-service.ts';

export interface IssuingDeps {
  db: Db;
  partners: PartnersService;
  tenantCache: TenantCache;
  auth: AuthService;
  events: EventsService;
  kyc: KycService;
  accounts: AccountsService;
  cards: CardsService;
  spendingControls: SpendingControlsService;
  transactions: TransactionsService;
  disputes: IssuingDisputesService;
  topups: TopupsService;
  cryptoTopups: CryptoTopups;
}

export function issuingApi(
  prefix: string,
  deps: IssuingDeps,
): Omit<ApiScopeOptions, 'onDocument' | 'idempotency'> {
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
    routes: async (app: ZodApp) => {
      const authn = authenticators(deps);
      await registerPartnerAuthRoutes(app, deps.auth, authn);
      await registerEmailAuthRoutes(app, deps.auth, authn);
      await registerWalletAuthRoutes(app, deps.auth, authn);
      await registerSessionRoutes(app, deps.auth, authn);
      await registerPartnerEventsRoutes(app, deps.events, authn);
      await registerKycRoutes(app, deps.kyc, authn);
      await registerAccountsRoutes(app, deps.accounts, authn);
      await registerCardsRoutes(app, deps.cards, authn);
      await registerSpendingControlsRoutes(app, deps.spendingControls, authn);
      await registerTransactionsRoutes(app, deps.transactions, authn);
      await registerDisputesRoutes(app, deps.disputes, authn);
      await registerTopupsRoutes(app, deps.topups, deps.cryptoTopups, authn);
    },
  };
}
