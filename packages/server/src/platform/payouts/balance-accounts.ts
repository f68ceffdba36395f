// The ledger accounts money out moves between (docs/payouts.md, Ledger): a tenant's balance, the
// platform's fee revenue, and payouts on their way to and at the bank. Balances that every capture
// credits are split into shards so captures do not queue on one row (Ledger.systemAccounts).
import type { Executor } from '../db/database.ts';
import type { Ledger } from '../ledger/ledger.ts';
import type { Owner } from './terms.ts';

/** A site's balance shards; the first is the balance account opened before balances were sharded. */
export const SITE_BALANCE_PURPOSES = ['balance', ...Array.from({ length: 7 }, (_, i) => `balance:${i + 1}`)];
const REVENUE_PURPOSES = Array.from({ length: 16 }, (_, shard) => `fees:${shard}`);

/** Who owns a tenant's balance accounts in the ledger, and their purposes. */
export function balanceAccountsOf(owner: Owner): { ownerType: string; ownerId: string; purposes: string[] } {
  return owner.kind === 'site'
    ? { ownerType: 'payments_site', ownerId: String(owner.siteId), purposes: SITE_BALANCE_PURPOSES }
    : { ownerType: 'crypto_store', ownerId: owner.storeId, purposes: ['settlement'] };
}

/** The accounts that hold a tenant's balance in a currency: a site's shards, a store's one account. */
export function balanceAccounts(
  ledger: Ledger,
  db: Executor,
  owner: Owner,
  currency: string,
): Promise<string[]> {
  return owner.kind === 'site'
    ? ledger.systemAccounts(
        db,
        { ownerType: 'payments_site', ownerId: String(owner.siteId), asset: currency, isBounded: true },
        SITE_BALANCE_PURPOSES,
      )
    : // Unbounded: a store's accepted crypto refunds and its owed fees may take it below zero; payouts
      // never take more than is available, so it is recovered from the next settlements.
      ledger.systemAccounts(
        db,
        { ownerType: 'crypto_store', ownerId: owner.storeId, asset: currency, isBounded: false },
        ['settlement'],
      );
}

/** The platform's fee revenue in a currency, one shard picked by `spread` (a transaction id). */
export async function revenueAccount(
  ledger: Ledger,
  db: Executor,
  currency: string,
  spread: number,
): Promise<string> {
  const shards = await ledger.systemAccounts(
    db,
    { ownerType: 'platform', ownerId: 'revenue', asset: currency, isBounded: false },
    REVENUE_PURPOSES,
  );
  return shards[spread % shards.length] as string;
}

/** Payouts sent and not yet confirmed (in_transit), and those the bank confirmed paid (paid_out). */
export async function payoutAccounts(
  ledger: Ledger,
  db: Executor,
  currency: string,
): Promise<{ inTransit: string; paidOut: string }> {
  const [inTransit, paidOut] = await ledger.systemAccounts(
    db,
    { ownerType: 'platform', ownerId: 'payouts', asset: currency, isBounded: false },
    ['in_transit', 'paid_out'],
  );
  return { inTransit: inTransit as string, paidOut: paidOut as string };
}
