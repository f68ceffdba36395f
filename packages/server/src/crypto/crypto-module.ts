// The crypto merchant API as the composition root mounts it: its services built on the platform, the
// API under its base path, and the hosted pay and refund pages.
import type { BankAccounts } from '../platform/bank-accounts/bank-accounts.ts';
import type { CapabilityTokens } from '../platform/crypto/capability-tokens.ts';
import type { EventsService } from '../platform/events/events-service.ts';
import type { ApiModule } from '../platform/http/api-module.ts';
import type { MoneyOut } from '../platform/payouts/money-out.ts';
import type { TenantCache } from '../platform/tenants/tenant-cache.ts';
import type { DeliveryEngine } from '../platform/webhooks/delivery-engine.ts';
import type { SsrfGuard } from '../platform/webhooks/ssrf-guard.ts';
import { registerCryptoConsoleRoutes } from './console/crypto-routes.ts';
import { cryptoApi } from './crypto-api.ts';
import { type CryptoPlatform, type CryptoServices, createCryptoServices } from './crypto-services.ts';
import { registerPayPageRoutes } from './pages/pay-page-routes.ts';
import { registerRefundPageRoutes } from './pages/refund-page-routes.ts';

export interface CryptoModulePlatform extends Omit<CryptoPlatform, 'mode' | 'publicUrl' | 'terms'> {
  config: { mode: 'sandbox' | 'production'; publicUrl: string; basePaths: { crypto: string } };
  moneyOut: MoneyOut;
  events: EventsService;
  tenantCache: TenantCache;
  bankAccounts: BankAccounts;
  capabilities: CapabilityTokens;
  deliveries: DeliveryEngine;
  ssrf: SsrfGuard;
}

export const cryptoModule: ApiModule<CryptoModulePlatform, CryptoServices> = {
  name: 'crypto',
  build: (p) =>
    createCryptoServices({
      ...p,
      mode: p.config.mode,
      publicUrl: p.config.publicUrl,
      terms: p.moneyOut.terms,
    }),
  api: (p, services) =>
    cryptoApi(p.config.basePaths.crypto, {
      ...services,
      events: p.events,
      tenantCache: p.tenantCache,
      checkCallbackUrl: (url, field) => p.ssrf.checkWebhookUrl(url, field),
      bankAccounts: p.bankAccounts,
      db: p.db,
      ledger: p.ledger,
      clock: p.clock,
      moneyOut: p.moneyOut,
    }),
  registerPages: async (app, p, services) => {
    await registerPayPageRoutes(app, {
      orders: services.orders,
      clock: p.clock,
      capabilities: p.capabilities,
      deliverBeforeAnswer: (eventId, waitMs) => p.deliveries.deliverBeforeAnswer(eventId, waitMs),
    });
    await registerRefundPageRoutes(app, { refunds: services.refunds });
  },
  registerConsole: (app, console, p, services) =>
    registerCryptoConsoleRoutes(app, {
      ...console.frame,
      services: { db: p.db, events: p.events, stores: p.stores, crypto: services },
    }),
};
