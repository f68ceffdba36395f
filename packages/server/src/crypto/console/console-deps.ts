// What the crypto API's console pages (stores, invoices, deposits and refunds; docs/console.md) are given: the console kit's
// deps over the services they use.
import type { ConsoleKitServices, ConsoleRouteDeps } from '../../platform/console/route-kit.ts';
import type { StoresService } from '../../platform/tenants/stores-service.ts';
import type { CryptoServices } from '../crypto-services.ts';

export interface CryptoConsoleServices extends ConsoleKitServices {
  stores: StoresService;
  crypto: CryptoServices;
}

export type CryptoConsoleDeps = ConsoleRouteDeps<CryptoConsoleServices>;
