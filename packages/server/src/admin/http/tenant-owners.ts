// The two kinds of tenant money goes out to, as admin paths: a merchant's site
// (/merchants/{id}/sites/{siteId}) and a store (/stores/{id}). Each admin route about a tenant's money is
// registered once per kind with this; a site of another merchant, or an unknown store, is not found.
import { z } from 'zod';
import { notFound } from '../../platform/errors/domain-error.ts';
import type { Owner } from '../../platform/payouts/terms.ts';
import type { AdminDeps } from './admin-deps.ts';
import { idParam, numericIdParam } from './schemas.ts';

export interface OwnerRoute<P extends z.ZodType> {
  /** The tenant's path, to which the route's own segment is appended */
  path: string;
  tag: string;
  whose: 'site' | 'store';
  params: P;
  /** The owner the (validated) path names, or 404 */
  ownerOf: (params: unknown) => Promise<Owner>;
}

export function ownerRoutes(deps: Pick<AdminDeps, 'db' | 'merchants' | 'stores'>): OwnerRoute<z.ZodType>[] {
  const siteParams = numericIdParam.extend({ siteId: z.coerce.number().int().positive() });
  return [
    {
      path: '/merchants/:id/sites/:siteId',
      tag: 'merchants',
      whose: 'site',
      params: siteParams,
      ownerOf: async (params) => {
        // The params schema validated and transformed the path already.
        const { id, siteId } = params as z.output<typeof siteParams>;
        const merchant = await deps.merchants.get(deps.db, id);
        if (!merchant.sites.some((s) => s.id === siteId)) throw notFound('site');
        return { kind: 'site', siteId };
      },
    },
    {
      path: '/stores/:id',
      tag: 'stores',
      whose: 'store',
      params: idParam,
      ownerOf: async (params) => {
        const { id } = params as z.output<typeof idParam>;
        await deps.stores.get(deps.db, id);
        return { kind: 'store', storeId: id };
      },
    },
  ];
}
