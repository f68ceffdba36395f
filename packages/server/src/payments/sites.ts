// A merchant as the payments services see it (its sites), and which of its sites a request means (spec:
// `siteId` is mandatory when the merchant has more than one site). Another merchant's site is refused
// like an unknown one.
import type { Executor } from '../platform/db/database.ts';
import { DomainError } from '../platform/errors/domain-error.ts';

export interface MerchantScope {
  merchantId: number;
  siteIds: number[];
  /** The sites' names (what card statements and challenge pages show) */
  siteNames: Map<number, string>;
}

export async function loadMerchantScope(db: Executor, merchantId: number): Promise<MerchantScope> {
  const sites = await db
    .selectFrom('sites')
    .select(['id', 'name'])
    .where('merchant_id', '=', merchantId)
    .orderBy('id')
    .execute();
  return {
    merchantId,
    siteIds: sites.map((s) => s.id),
    siteNames: new Map(sites.map((s) => [s.id, s.name])),
  };
}

export function siteOf(merchant: MerchantScope, siteId: number | undefined, field = 'siteId'): number {
  if (siteId === undefined) {
    const [only, ...others] = merchant.siteIds;
    if (only === undefined || others.length > 0) {
      throw new DomainError('validation_failed', 'siteId is required when the merchant has several sites', {
        field,
      });
    }
    return only;
  }
  if (!merchant.siteIds.includes(siteId)) {
    throw new DomainError('validation_failed', 'siteId is not one of your sites', { field });
  }
  return siteId;
}
