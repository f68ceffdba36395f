// A merchant as the payments services see it (its sites), and which of its sites a request means (spec:
// `siteId` is mandatory when the merchant has more than one site). Another merchant's site is refused
// like an unknown one.
import type { Executor } from '../platform/db/database.ts';
import { DomainError } from '../platform/errors/domain-error.ts';

/**
 * A site as the card network knows it (ISO 8583's card acceptor): the name card statements and challenge
 * pages show, and the category code and country an issuer's spending controls read.
 */
export interface CardAcceptor {
  name: string;
  mcc: string | null;
  country: string | null;
}

export interface MerchantScope {
  merchantId: number;
  siteIds: number[];
  /** Each site as its authorizations name it */
  sites: Map<number, CardAcceptor>;
}

export async function loadMerchantScope(db: Executor, merchantId: number): Promise<MerchantScope> {
  const sites = await db
    .selectFrom('sites')
    .select(['id', 'name', 'mcc', 'country'])
    .where('merchant_id', '=', merchantId)
    .orderBy('id')
    .execute();
  return {
    merchantId,
    siteIds: sites.map((s) => s.id),
    sites: new Map(sites.map((s) => [s.id, { name: s.name, mcc: s.mcc, country: s.country }])),
  };
}

/** One site as its authorizations name it (for a charge made without its merchant's scope at hand). */
export async function cardAcceptorOf(db: Executor, siteId: number): Promise<CardAcceptor> {
  return db
    .selectFrom('sites')
    .select(['name', 'mcc', 'country'])
    .where('id', '=', siteId)
    .executeTakeFirstOrThrow();
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
