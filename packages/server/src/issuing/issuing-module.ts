// The card issuing API as the composition root mounts it: its services built on the platform, the API
// under its base path, and the hosted topup page.
import type { EventsService } from '../platform/events/events-service.ts';
import type { ApiModule } from '../platform/http/api-module.ts';
import type { PartnersService } from '../platform/tenants/partners-service.ts';
import type { TenantCache } from '../platform/tenants/tenant-cache.ts';
import { registerIssuingConsoleRoutes } from './console/issuing-routes.ts';
import { issuingApi } from './issuing-api.ts';
import {
  createIssuingServices,
  type IssuingPlatform,
  type IssuingServices,
  type IssuingSettings,
} from './issuing-services.ts';
import { registerTopupPageRoutes } from './pages/topup-page-routes.ts';

export interface IssuingModulePlatform extends IssuingPlatform {
  config: IssuingSettings & { basePaths: { issuing: string } };
  partners: PartnersService;
  tenantCache: TenantCache;
  events: EventsService;
}

export const issuingModule: ApiModule<IssuingModulePlatform, IssuingServices> = {
  name: 'issuing',
  build: createIssuingServices,
  api: (p, services) =>
    issuingApi(p.config.basePaths.issuing, {
      ...services,
      db: p.db,
      partners: p.partners,
      tenantCache: p.tenantCache,
      events: p.events,
    }),
  registerPages: (app, p, services) =>
    registerTopupPageRoutes(app, {
      topups: services.topups,
      cardTopups: services.cardTopups,
      clock: p.clock,
    }),
  registerConsole: (app, console, p, services) =>
    registerIssuingConsoleRoutes(app, {
      ...console.frame,
      services: { db: p.db, events: p.events, clock: p.clock, partners: p.partners, issuing: services },
    }),
};
