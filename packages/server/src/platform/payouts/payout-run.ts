// The payout run (docs/payouts.md, Payouts): who is due today, and each tenant and currency looked at as its
// own step — one that throws is reported and tried again next round, while every other tenant is paid.
import { sql } from 'kysely';
import type { Clock } from '../clock/clock.ts';
import type { Db, Executor } from '../db/database.ts';
import { findAsset } from '../money/assets.ts';
import { isRefused, type RefusedPayout } from './money-out-risk.ts';
import type { PayoutRow } from './payout-view.ts';
import {
  type Owner,
  ownerKey,
  type PayoutSchedule,
  parseOwnerKey,
  type TermsStore,
  WEEKDAYS,
} from './terms.ts';

/** What the run reads and is told with (PayoutsService's own deps). */
interface RunDeps {
  db: Db;
  clock: Clock;
  terms: TermsStore;
  onRunFailure?: (failure: RunFailure, error: unknown) => void;
}

/** Who makes the payouts (PayoutsService): itemized, in batches, under the tenant's lock. */
interface Payer {
  payItemized(
    owner: Owner,
    currency: string,
    options: { minimum: bigint; scheduledFor: string | null },
  ): Promise<PayoutRow | RefusedPayout | undefined>;
  assemblyOf(
    db: Executor,
    key: string,
    currency: string,
  ): Promise<{ scheduled_for: string | null } | undefined>;
}

/** One tenant's step of a payout run that threw; the next round tries it again. */
export interface RunFailure {
  tenant: string;
  currency: string;
  error: string;
}

/**
 * The scheduled run: a tenant is paid once a day (UTC) in each currency when its schedule pays that day,
 * its available money comes to its minimum and it has a bank account. The candidates are the tenants
 * with unpaid money available (a skip scan of the unpaid index: one probe per tenant and currency, not a
 * read of every unpaid row) and those with a payout being made in batches. A look that pays nothing is
 * remembered with when it looked and the schedule's and bank account's change times, so the sweep looks
 * again the same day only when one of its unpaid rows became available since, one of those changed, or
 * the run is explicit (`POST /admin/payout-runs`, `tessera payout-run`). What becomes available after the
 * day's payout waits for the next day's. Each tenant and currency is its own step: one that throws is
 * reported and tried again next round, and every other tenant is paid.
 */
export async function runPayouts(
  deps: RunDeps,
  payouts: Payer,
  options: { explicit?: boolean } = {},
): Promise<{ made: PayoutRow[]; failed: RunFailure[] }> {
  const now = deps.clock.now();
  const today = now.toISOString().slice(0, 10);
  const explicit = options.explicit === true;
  const { rows: candidates } = await sql<{ owner: string; currency: string; seen: string }>`
    WITH RECURSIVE pairs AS (
      (SELECT owner, currency FROM balance_transactions WHERE payout_id IS NULL ORDER BY owner, currency LIMIT 1)
      UNION ALL
      SELECT n.owner, n.currency FROM pairs p CROSS JOIN LATERAL (
        SELECT b.owner, b.currency FROM balance_transactions b
        WHERE b.payout_id IS NULL AND (b.owner, b.currency) > (p.owner, p.currency)
        ORDER BY b.owner, b.currency LIMIT 1) n
    ), looking AS (
      SELECT p.owner, p.currency,
        concat_ws('|', coalesce(s.updated_at::text, '-'), coalesce(a.updated_at::text, '-')) AS seen
      FROM pairs p
      LEFT JOIN payout_schedules s ON s.owner = p.owner
      LEFT JOIN bank_accounts a ON a.owner = p.owner
      WHERE EXISTS (SELECT 1 FROM balance_transactions b WHERE b.owner = p.owner AND b.currency = p.currency
                      AND b.payout_id IS NULL AND b.available_at <= ${now})
    )
    SELECT l.owner, l.currency, l.seen FROM looking l
    WHERE NOT EXISTS (
      SELECT 1 FROM payout_run_days d
      WHERE d.owner = l.owner AND d.currency = l.currency AND d.day = ${today}
        AND (d.paid OR (NOT ${explicit}::boolean AND d.seen = l.seen AND d.looked_at IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM balance_transactions b
                          WHERE b.owner = l.owner AND b.currency = l.currency AND b.payout_id IS NULL
                            AND b.available_at >= d.looked_at AND b.available_at <= ${now}))))
    UNION
    SELECT owner, currency, '' FROM payout_assemblies
    ORDER BY 1, 2`.execute(deps.db);
  const made: PayoutRow[] = [];
  const failed: RunFailure[] = [];
  for (const { owner: key, currency, seen } of candidates) {
    try {
      const payout = await look(deps, payouts, parseOwnerKey(key), currency, seen, now);
      if (payout) made.push(payout);
    } catch (error) {
      const failure = {
        tenant: key,
        currency,
        error: error instanceof Error ? error.message : String(error),
      };
      failed.push(failure);
      deps.onRunFailure?.(failure, error);
    }
  }
  // The days looked at are only needed for today: a week is kept for the curious.
  await deps.db
    .deleteFrom('payout_run_days')
    .where('day', '<', new Date(now.getTime() - 7 * 86_400_000).toISOString().slice(0, 10))
    .execute();
  return { made, failed };
}

/** One tenant and currency of the run: its scheduled payout when due (or the one being made), and the memo. */
async function look(
  deps: RunDeps,
  payouts: Payer,
  owner: Owner,
  currency: string,
  seen: string,
  now: Date,
): Promise<PayoutRow | undefined> {
  const key = ownerKey(owner);
  const today = now.toISOString().slice(0, 10);
  const { schedule } = await deps.terms.get(deps.db, owner);
  const assembly = await payouts.assemblyOf(deps.db, key, currency);
  // Under the lock (payItemized), the day's scheduled payout is the truth the memo only caches: another
  // process (or an earlier round whose memo was lost) may have made it.
  const paidToday = await deps.db
    .selectFrom('payouts')
    .select('id')
    .where('owner', '=', key)
    .where('currency', '=', currency)
    .where('scheduled_for', '=', today)
    .executeTakeFirst();
  const made =
    assembly || (!paidToday && paysOn(schedule, now))
      ? await payouts.payItemized(owner, currency, {
          minimum: minimumOf(schedule, currency),
          scheduledFor: assembly ? assembly.scheduled_for : today,
        })
      : undefined;
  // A payout a rule blocked is not made: the day's look is remembered, and the next day's run asks again.
  const payout = isRefused(made) ? undefined : made;
  const memo = {
    paid: paidToday !== undefined || (payout !== undefined && payout.scheduled_for === today),
    seen,
    looked_at: now,
  };
  await deps.db
    .insertInto('payout_run_days')
    .values({ owner: key, currency, day: today, ...memo })
    .onConflict((oc) => oc.columns(['owner', 'currency', 'day']).doUpdateSet(memo))
    .execute();
  return payout;
}

/** Whether the schedule pays on this (UTC) day. */
export function paysOn(schedule: PayoutSchedule, at: Date): boolean {
  switch (schedule.interval) {
    case 'daily':
      return true;
    case 'weekly':
      return WEEKDAYS[(at.getUTCDay() + 6) % 7] === schedule.weeklyAnchor;
    case 'monthly': {
      const lastDay = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 0)).getUTCDate();
      return at.getUTCDate() === Math.min(schedule.monthlyAnchor, lastDay);
    }
    case 'manual':
      return false;
  }
}

function minimumOf(schedule: PayoutSchedule, currency: string): bigint {
  const asset = findAsset(currency);
  if (!asset) return 1n;
  const [whole = '0', fraction = ''] = schedule.minimum.split('.');
  const minor = BigInt(whole + fraction.slice(0, asset.exponent).padEnd(asset.exponent, '0'));
  return minor > 0n ? minor : 1n;
}
