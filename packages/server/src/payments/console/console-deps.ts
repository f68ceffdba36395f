// What the payments API's console pages are given: the console kit's deps over the services they use,
// and the console's four eyes for a refund above the merchant's threshold.
import type { Clock } from '../../platform/clock/clock.ts';
import type { ConsoleKitServices, ConsoleRouteDeps, FourEyes } from '../../platform/console/route-kit.ts';
import type { MerchantsService } from '../../platform/tenants/merchants-service.ts';
import type { SsrfGuard } from '../../platform/webhooks/ssrf-guard.ts';
import type { PaymentsServices } from '../payments-services.ts';

export interface PaymentsConsoleServices extends ConsoleKitServices {
  clock: Clock;
  merchants: MerchantsService;
  ssrf: SsrfGuard;
  payments: PaymentsServices;
}

export interface PaymentsConsoleDeps extends ConsoleRouteDeps<PaymentsConsoleServices> {
  eyes: FourEyes;
}
