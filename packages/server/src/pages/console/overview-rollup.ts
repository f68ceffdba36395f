// The overview's daily rollup (console_daily_figures, migration 0035): the console-daily-figures sweep
// counts each day's succeeded payments per API, tenant and currency once the day is over, so the
// overview reads 90 days of a busy tenant as a few hundred rows and counts only today live. It fills
// upward from the newest day it holds to yesterday, then backward a year, a few days per run, so the
// days it holds are always one unbroken run (overview-reads.ts relies on that). A payment that changes
// after its day was counted (a 3-D Secure payment completing after midnight, a card transaction cleared
// for another amount) is caught by counting the last RECOUNT_DAYS days again, hourly.
import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.ts';
import { LIVE_DAYS } from './reads/overview-reads.ts';

/** How far back the rollup reaches */
const HISTORY_DAYS = 400;
/** Days computed per sweep run: catching up with a year costs a few minutes of runs, not one long one */
const DAYS_PER_RUN = 7;
/** The days counted again (hourly) for the payments that changed after their day was counted */
const RECOUNT_DAYS = 3;
const RECOUNT_AFTER_MS = 3_600_000;

export async function rollUpDailyFigures(db: Executor, now: Date): Promise<number> {
  const day = (offset: number, from = now) =>
    new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate() + offset));
  const newest = day(-LIVE_DAYS);
  const oldest = day(-HISTORY_DAYS);
  const { rows } = await sql<{ min: Date | null; max: Date | null }>`
    SELECT min(day)::timestamp AT TIME ZONE 'UTC' AS min, max(day)::timestamp AT TIME ZONE 'UTC' AS max
    FROM console_daily_figures_days`.execute(db);
  const held = rows[0];
  const due: Date[] = [];
  if (!held?.min || !held.max) {
    for (let d = newest; d >= oldest && due.length < DAYS_PER_RUN; d = day(-1, d)) due.push(d);
  } else {
    for (let d = day(1, held.max); d <= newest && due.length < DAYS_PER_RUN; d = day(1, d)) due.push(d);
    for (let d = day(-1, held.min); d >= oldest && due.length < DAYS_PER_RUN; d = day(-1, d)) due.push(d);
    const { rows: stale } = await sql<{ day: Date }>`
      SELECT day::timestamp AT TIME ZONE 'UTC' AS day FROM console_daily_figures_days
      WHERE day >= ${day(-RECOUNT_DAYS).toISOString().slice(0, 10)}::date
        AND computed_at < ${new Date(now.getTime() - RECOUNT_AFTER_MS)}
      ORDER BY day DESC`.execute(db);
    for (const { day: d } of stale) if (due.length < DAYS_PER_RUN) due.push(d);
  }
  for (const d of due) await rollUpDay(db, d, day(1, d), now);
  return due.length;
}

/** One day's figures, replaced whole in one statement (the day's marker with them). */
async function rollUpDay(db: Executor, from: Date, to: Date, now: Date): Promise<void> {
  const date = from.toISOString().slice(0, 10);
  await sql`
    WITH figures AS (
      SELECT 'payments' AS api, merchant_id::text AS tenant_id, currency, count(*) AS count, sum(captured_amount) AS volume
      FROM payments_transactions
      WHERE type = 'deposit' AND status IN ('complete-ok', 'refund-ok') AND created_at >= ${from} AND created_at < ${to}
      GROUP BY 2, 3
      UNION ALL
      SELECT 'crypto', store_id, currency, count(*), sum(total)
      FROM crypto_payments WHERE created_at >= ${from} AND created_at < ${to}
      GROUP BY 2, 3
      UNION ALL
      SELECT 'issuing', partner_id, currency, count(*), sum(coalesce(settled_amount, amount))
      FROM issuing_transactions
      WHERE type = 'card_payment' AND status NOT IN ('declined', 'pending_3ds') AND created_at >= ${from}
        AND created_at < ${to}
      GROUP BY 2, 3
    ), stale AS (
      -- the parts write different rows: those no longer counted go, the counted ones are upserted
      DELETE FROM console_daily_figures f WHERE f.day = ${date}::date AND NOT EXISTS (
        SELECT 1 FROM figures g WHERE g.api = f.api AND g.tenant_id = f.tenant_id AND g.currency = f.currency)
    ), marked AS (
      INSERT INTO console_daily_figures_days (day, computed_at) VALUES (${date}::date, ${now})
      ON CONFLICT (day) DO UPDATE SET computed_at = EXCLUDED.computed_at
    )
    INSERT INTO console_daily_figures (api, tenant_id, day, currency, count, volume)
    SELECT api, tenant_id, ${date}::date, currency, count, volume FROM figures
    ON CONFLICT (api, tenant_id, day, currency) DO UPDATE SET count = EXCLUDED.count, volume = EXCLUDED.volume`.execute(
    db,
  );
}
