// The payments API's pages in the console (docs/console.md, Payments): its sites, transactions and
// disputes, read and acted on through the payments services. The console registers them with its kit;
// a refund above the merchant's threshold goes through the console's four eyes.
import type { FastifyInstance } from 'fastify';
import type { PaymentsConsoleDeps } from './console-deps.ts';
import { registerDisputesConsoleRoutes } from './disputes-routes.ts';
import { registerMonitoringConsoleRoutes } from './monitoring-routes.ts';
import { registerPaymentsConsoleRoutes } from './payments-routes.ts';

export async function registerPaymentsConsole(
  app: FastifyInstance,
  deps: PaymentsConsoleDeps,
): Promise<void> {
  await registerPaymentsConsoleRoutes(app, deps);
  await registerDisputesConsoleRoutes(app, deps);
  await registerMonitoringConsoleRoutes(app, deps);
}
