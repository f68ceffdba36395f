// The payments API as the composition root mounts it: its services built on the platform, the API under
// its base path, and the hosted checkout (the payment page, the embedded form, payment links).
import type { BankAccounts } from '../platform/bank-accounts/bank-accounts.ts';
import type { UnitOfWork } from '../platform/db/connection-scope.ts';
import type { EventsService } from '../platform/events/events-service.ts';
import type { ApiModule } from '../platform/http/api-module.ts';
import type { MoneyOut } from '../platform/payouts/money-out.ts';
import type { MerchantsService } from '../platform/tenants/merchants-service.ts';
import type { TenantCache } from '../platform/tenants/tenant-cache.ts';
import type { SsrfGuard } from '../platform/webhooks/ssrf-guard.ts';
import { HostedCheckout } from './checkout/hosted-checkout.ts';
import { registerPaymentsConsole } from './console/payments-console.ts';
import { registerCheckoutPageRoutes } from './pages/checkout-page-routes.ts';
import { registerHostedCheckoutRoutes } from './pages/hosted-checkout-routes.ts';
import { paymentsApi } from './payments-api.ts';
import { createPaymentsServices, type PaymentsPlatform, type PaymentsServices } from './payments-services.ts';

export interface PaymentsModulePlatform
  extends Omit<PaymentsPlatform, 'publicUrl' | 'authorizationSeconds' | 'disputeFeeMajor' | 'terms'> {
  config: {
    publicUrl: string;
    paymentsAuthorizationSeconds: number;
    disputeFeeMajor: number;
    basePaths: { payments: string };
  };
  moneyOut: MoneyOut;
  events: EventsService;
  merchants: MerchantsService;
  tenantCache: TenantCache;
  bankAccounts: BankAccounts;
  createUnit: () => UnitOfWork;
  ssrf: SsrfGuard;
}

export const paymentsModule: ApiModule<PaymentsModulePlatform, PaymentsServices> = {
  name: 'payments',
  build: (p) =>
    createPaymentsServices({
      ...p,
      publicUrl: p.config.publicUrl,
      authorizationSeconds: p.config.paymentsAuthorizationSeconds,
      disputeFeeMajor: p.config.disputeFeeMajor,
      terms: p.moneyOut.terms,
    }),
  api: (p, services) =>
    paymentsApi(p.config.basePaths.payments, {
      ...services,
      db: p.db,
      events: p.events,
      merchants: p.merchants,
      tenantCache: p.tenantCache,
      bankAccounts: p.bankAccounts,
      ledger: p.ledger,
      clock: p.clock,
      moneyOut: p.moneyOut,
      walletTokens: p.rails.walletTokens,
    }),
  registerPages: async (app, p, services) => {
    const frameAncestorsOf = (siteId: number) => p.merchants.frameAncestors(p.db, siteId);
    const reading = () => ({ walletTokens: p.rails.walletTokens, now: p.clock.now() });
    const hostedCheckout = new HostedCheckout({
      db: p.db,
      createUnit: p.createUnit,
      clock: p.clock,
      merchants: p.merchants,
      payments: services,
    });
    await registerCheckoutPageRoutes(app, {
      payments: services,
      publicUrl: p.config.publicUrl,
      frameAncestorsOf,
      hostedCheckout,
      brandOf: (siteId) => p.merchants.brandOf(p.db, siteId),
      reading,
    });
    await registerHostedCheckoutRoutes(app, {
      checkout: hostedCheckout,
      sessions: services.checkoutSessions,
      merchants: p.merchants,
      frameAncestorsOf,
      reading,
    });
  },
  registerConsole: (app, console, p, services) =>
    registerPaymentsConsole(app, {
      ...console.frame,
      eyes: console.eyes,
      services: {
        db: p.db,
        events: p.events,
        clock: p.clock,
        merchants: p.merchants,
        ssrf: p.ssrf,
        payments: services,
      },
    }),
};
