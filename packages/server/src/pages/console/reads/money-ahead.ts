// The overview's money for a merchant's or a store's member: each site's or store's balance per currency
// (available now, pending the settlement delay) and when its next scheduled payout goes, from its payout
// schedule (docs/payouts.md, Payouts). An operator's overview lists tenants instead: every tenant's
// balance is a read per tenant, which the Balances page makes one tenant at a time.

import type { Viewer } from '../../../platform/console/console-users.ts';
import type { Executor } from '../../../platform/db/database.ts';
import type { Ledger } from '../../../platform/ledger/ledger.ts';
import { balancesOf } from '../../../platform/payouts/balance-transactions.ts';
import { paysOn } from '../../../platform/payouts/payout-run.ts';
import { type PayoutSchedule, parseOwnerKey, type TermsStore } from '../../../platform/payouts/terms.ts';
import { ownerNames, ownersOf } from './payouts-reads.ts';

/** A site's or store's money in one currency */
export interface MoneyAhead {
  key: string;
  name: string | undefined;
  currency: string;
  available: bigint;
  pending: bigint;
  /** The next day (UTC, YYYY-MM-DD) its schedule pays on; undefined when it pays only by hand */
  nextPayoutDay: string | undefined;
}

/** The most sites a merchant's overview lists (a merchant with more reads the Balances page) */
export const OWNERS_SHOWN = 10;

export async function moneyAhead(
  services: { db: Executor; ledger: Ledger; terms: TermsStore },
  viewer: Viewer,
  now: Date,
): Promise<MoneyAhead[]> {
  const { db, ledger, terms } = services;
  const owners = await ownersOf(db, viewer);
  if (owners === 'all') return [];
  const shown = owners.slice(0, OWNERS_SHOWN);
  const names = await ownerNames(db, shown);
  const today = now.toISOString().slice(0, 10);
  const lines: MoneyAhead[] = [];
  for (const key of shown) {
    const owner = parseOwnerKey(key);
    const { schedule } = await terms.get(db, owner);
    for (const b of await balancesOf(db, ledger, owner, now)) {
      const paidToday = await db
        .selectFrom('payouts')
        .select('id')
        .where('owner', '=', key)
        .where('currency', '=', b.currency)
        .where('scheduled_for', '=', today)
        .executeTakeFirst();
      lines.push({
        key,
        name: names.get(key),
        currency: b.currency,
        available: b.available,
        pending: b.pending,
        nextPayoutDay: nextPayoutDay(schedule, now, paidToday !== undefined),
      });
    }
  }
  return lines;
}

/** The first day from today (tomorrow when today's payout is made) that the schedule pays on */
export function nextPayoutDay(schedule: PayoutSchedule, now: Date, paidToday: boolean): string | undefined {
  if (schedule.interval === 'manual') return undefined;
  // A monthly schedule pays within 31 days; a weekly one within 7.
  for (let offset = paidToday ? 1 : 0; offset <= 32; offset++) {
    const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + offset));
    if (paysOn(schedule, day)) return day.toISOString().slice(0, 10);
  }
  return undefined;
}
