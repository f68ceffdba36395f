// What the issuing API's console pages (partners, customers, accounts, cards and transactions; docs/console.md) are given: the console kit's
// deps over the services they use.
import type { Clock } from '../../platform/clock/clock.ts';
import type { ConsoleKitServices, ConsoleRouteDeps } from '../../platform/console/route-kit.ts';
import type { PartnersService } from '../../platform/tenants/partners-service.ts';
import type { IssuingServices } from '../issuing-services.ts';

export interface IssuingConsoleServices extends ConsoleKitServices {
  clock: Clock;
  partners: PartnersService;
  issuing: IssuingServices;
}

export type IssuingConsoleDeps = ConsoleRouteDeps<IssuingConsoleServices>;
