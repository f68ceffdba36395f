// The Tessera console, served by the same server under /console: operators and tenant members sign in,
// find any object by id, and do what the APIs do through the same services (docs/console.md).
import type { FastifyInstance } from 'fastify';
import { registerConsoleFrame } from '../../platform/console/console-http.ts';
import type { ConsoleUsers } from '../../platform/console/console-users.ts';
import type { BuiltModule } from '../../platform/http/api-module.ts';
import type { PlatformServices } from '../../platform-services.ts';
import type { ClockDeps } from '../../sandbox/http/clock-routes.ts';
import type { TriggerCatalog } from '../../sandbox/triggers/trigger-catalog.ts';
import { fourEyes, registerApprovalsConsoleRoutes } from './routes/approvals-routes.ts';
import { registerAuditConsoleRoutes } from './routes/audit-routes.ts';
import { registerAuthRoutes } from './routes/auth-routes.ts';
import { registerComplianceAlertsConsoleRoutes } from './routes/compliance-alerts-routes.ts';
import { registerComplianceCasesConsoleRoutes } from './routes/compliance-cases-routes.ts';
import { registerComplianceOnboardingConsoleRoutes } from './routes/compliance-onboarding-routes.ts';
import { registerDevelopersConsoleRoutes } from './routes/developers-routes.ts';
import { registerLedgerConsoleRoutes } from './routes/ledger-routes.ts';
import { registerMembersConsoleRoutes } from './routes/members-routes.ts';
import { registerOverviewRoutes } from './routes/overview-routes.ts';
import { registerPayoutsConsoleRoutes } from './routes/payouts-routes.ts';
import { registerRiskBacktestConsoleRoutes } from './routes/risk-backtest-routes.ts';
import { registerRiskListsConsoleRoutes } from './routes/risk-lists-routes.ts';
import { registerRiskReviewsConsoleRoutes } from './routes/risk-reviews-routes.ts';
import { registerRiskRulesConsoleRoutes } from './routes/risk-rules-routes.ts';
import { registerSandboxConsoleRoutes } from './routes/sandbox-routes.ts';

export interface ConsoleDeps {
  services: PlatformServices;
  /** The APIs' modules: each registers its own pages */
  apis: readonly BuiltModule[];
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
    // Each API's pages, registered by its module with the console's kit.
    const context = { frame, eyes: fourEyes(routeDeps) };
    for (const api of deps.apis) await api.registerConsole(scope, context);
    await registerLedgerConsoleRoutes(scope, routeDeps);
    await registerPayoutsConsoleRoutes(scope, routeDeps);
    await registerApprovalsConsoleRoutes(scope, routeDeps);
    await registerRiskRulesConsoleRoutes(scope, routeDeps);
    await registerRiskBacktestConsoleRoutes(scope, routeDeps);
    await registerRiskListsConsoleRoutes(scope, routeDeps);
    await registerRiskReviewsConsoleRoutes(scope, routeDeps);
    await registerComplianceCasesConsoleRoutes(scope, routeDeps);
    await registerComplianceAlertsConsoleRoutes(scope, routeDeps);
    await registerComplianceOnboardingConsoleRoutes(scope, routeDeps);
    await registerAuditConsoleRoutes(scope, routeDeps);
    await registerMembersConsoleRoutes(scope, routeDeps);
    await registerDevelopersConsoleRoutes(scope, routeDeps);
    if (deps.sandbox) await registerSandboxConsoleRoutes(scope, { ...routeDeps, ...deps.sandbox });
  });
}
