// The pages of the simulated outside systems a person meets: the KYC vendor's identity check and the card
// network's 3-D Secure challenge (ACS).
import type { FastifyInstance } from 'fastify';
import type { Db } from '../platform/db/database.ts';
import { registerAcsPageRoutes } from './card-network/acs-page-routes.ts';
import { registerKycPageRoutes } from './kyc-vendor/kyc-page-routes.ts';
import type { RailSandbox } from './sandbox.ts';

export async function registerSimulatorPages(
  app: FastifyInstance,
  deps: { db: Db; railSandbox: RailSandbox },
): Promise<void> {
  await registerKycPageRoutes(app, { db: deps.db, vendor: deps.railSandbox.kycVendor });
  await registerAcsPageRoutes(app, { network: deps.railSandbox.cardNetwork });
}
