// The sandbox API (docs/sandbox.md) under /sandbox, sandbox mode only: the clock, the triggers and each
// API's simulated rails; and the controls it shares with the console's sandbox page.

import { requireAdmin } from '../admin/http/admin-auth.ts';
import { presentAdminError } from '../admin/http/present-error.ts';
import type { SandboxClock } from '../platform/clock/clock.ts';
import type { ApiScope } from '../platform/http/api-module.ts';
import type { PlatformServices } from '../platform-services.ts';
import { registerBankSandboxRoutes } from './http/bank-routes.ts';
import { type ClockDeps, registerClockRoutes } from './http/clock-routes.ts';
import { registerCryptoSandboxRoutes } from './http/crypto-routes.ts';
import { registerIssuingSandboxRoutes } from './http/issuing-routes.ts';
import { registerMessagesRoutes } from './http/messages-routes.ts';
import { registerPaymentsSandboxRoutes } from './http/payments-routes.ts';
import { registerTriggerRoutes } from './http/trigger-routes.ts';
import { TriggerCatalog } from './triggers/trigger-catalog.ts';

export interface SandboxControls {
  clockDeps: ClockDeps;
  triggers: TriggerCatalog;
}

/** The sandbox's clock and triggers, shared by the sandbox API and the console's sandbox page. */
export function sandboxControls(services: PlatformServices, clock: SandboxClock): SandboxControls {
  const clockDeps = { db: services.db, clock, sweeps: services.sweeps, processes: services.processes };
  const triggers = new TriggerCatalog({
    db: services.db,
    events: services.events,
    clockDeps,
    issuing: { db: services.db, partners: services.partners, ...services.issuing },
    payments: {
      db: services.db,
      payments: services.payments,
      moneyOut: services.moneyOut,
      bankAccounts: services.bankAccounts,
      reviews: services.risk.reviews,
    },
    crypto: {
      db: services.db,
      transact: services.transact,
      stores: services.stores,
      orders: services.crypto.orders,
      refunds: services.crypto.refunds,
      chain: services.railSandbox.chain,
      moneyOut: services.moneyOut,
      bankAccounts: services.bankAccounts,
    },
  });
  return { clockDeps, triggers };
}

export function sandboxApi(
  services: PlatformServices,
  adminToken: string,
  sandbox: SandboxControls,
): ApiScope {
  return {
    name: 'sandbox',
    prefix: '/sandbox',
    title: 'Tessera sandbox API',
    version: '1.0.0',
    description:
      'Drives the simulated world: the clock and, per API, the simulated rails. Sandbox mode only.',
    presenter: presentAdminError,
    securitySchemes: { adminToken: { type: 'http', scheme: 'bearer' } },
    security: [{ adminToken: [] }],
    routes: async (routes) => {
      requireAdmin(routes, adminToken);
      await registerClockRoutes(routes, sandbox.clockDeps);
      await registerTriggerRoutes(routes, sandbox.triggers);
      await registerMessagesRoutes(routes, { db: services.db, inbox: services.railSandbox.inbox });
      await registerIssuingSandboxRoutes(routes, {
        ...services.issuing,
        transact: services.transact,
        chain: services.railSandbox.chain,
      });
      await registerPaymentsSandboxRoutes(routes, {
        payments: services.payments,
        network: services.railSandbox.cardNetwork,
        walletTokens: services.railSandbox.walletTokens,
      });
      await registerBankSandboxRoutes(routes, {
        transact: services.transact,
        lifecycle: services.moneyOut.lifecycle,
        bank: services.moneyOut.bank,
      });
      await registerCryptoSandboxRoutes(routes, {
        db: services.db,
        transact: services.transact,
        orders: services.crypto.orders,
        refunds: services.crypto.refunds,
        chain: services.railSandbox.chain,
        fx: services.railSandbox.fx,
      });
    },
  };
}
