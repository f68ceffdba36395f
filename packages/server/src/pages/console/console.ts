// The Tessera console, served by the same server under /console: operators and tenant members sign in,
// find any object by id, and do what the APIs do through the same services (docs/console.md).
import type { FastifyInstance } from 'fastify';
import type { ConsoleUsers } from '../../platform/console/console-users.ts';
import type { PlatformServices } from '../../platform-services.ts';
import type { ClockDeps } from '../../sandbox/http/clock-routes.ts';
import type { TriggerCatalog } from '../../sandbox/triggers/trigger-catalog.ts';
import { registerConsoleFrame } from './console-http.ts';
import { registerApprovalsConsoleRoutes } from './routes/approvals-routes.ts';
import { registerAuditConsoleRoutes } from './routes/audit-routes.ts';
import { registerAuthRoutes } from './routes/auth-routes.ts';
import { registerCryptoConsoleRoutes } from './routes/crypto-routes.ts';
import { registerDevelopersConsoleRoutes } from './routes/developers-routes.ts';
import { registerDisputesConsoleRoutes } from './routes/disputes-routes.ts';
import { registerIssuingConsoleRoutes } from './routes/issuing-routes.ts';
import { registerLedgerConsoleRoutes } from './routes/ledger-routes.ts';
import { registerMembersConsoleRoutes } from './routes/members-routes.ts';
import { registerOverviewRoutes } from './routes/overview-routes.ts';
import { registerPaymentsConsoleRoutes } from './routes/payments-routes.ts';
import { registerPayoutsConsoleRoutes } from './routes/payouts-routes.ts';
import { registerSandboxConsoleRoutes } from './routes/sandbox-routes.ts';

export interface ConsoleDeps {
  services: PlatformServices;
  users: ConsoleUsers;
  adminToken: string;
  /** Sandbox mode only: the clock and the triggers the sandbox page drives */
  sandbox?: { clockDeps: ClockDeps; triggers: TriggerCatalog };
}

export async function registerConsole(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const frame = { users: deps.users, sandbox: deps.sandbox !== undefined };
  const routeDeps = { ...frame, services: deps.services };
  const audit = { db: deps.services.db, clock: deps.services.clock };
  await registerConsoleFrame(app, frame, deps.services.idempotency, audit, async (scope) => {
    await registerAuthRoutes(scope, { ...frame, adminToken: deps.adminToken });
    await registerOverviewRoutes(scope, routeDeps);
    await registerPaymentsConsoleRoutes(scope, routeDeps);
    await registerDisputesConsoleRoutes(scope, routeDeps);
    await registerCryptoConsoleRoutes(scope, routeDeps);
    await registerIssuingConsoleRoutes(scope, routeDeps);
    await registerLedgerConsoleRoutes(scope, routeDeps);
    await registerPayoutsConsoleRoutes(scope, routeDeps);
    await registerApprovalsConsoleRoutes(scope, routeDeps);
    await registerAuditConsoleRoutes(scope, routeDeps);
    await registerMembersConsoleRoutes(scope, routeDeps);
    await registerDevelopersConsoleRoutes(scope, routeDeps);
    if (deps.sandbox) await registerSandboxConsoleRoutes(scope, { ...routeDeps, ...deps.sandbox });
  });
}
