// What the console's own rooms (overview, money, approvals, audit, members, developers, sandbox) are
// given: the console kit's deps over the whole platform, for pages that read across the APIs. An API's
// pages take only that API's services (issuing/console, payments/console, crypto/console).
import type { ConsoleRouteDeps } from '../../platform/console/route-kit.ts';
import type { PlatformServices } from '../../platform-services.ts';

export type PlatformConsoleDeps = ConsoleRouteDeps<PlatformServices>;
