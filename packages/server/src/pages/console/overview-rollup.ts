// The overview's daily rollup (console_daily_figures, migrations 0035 and 0074): the console-daily-figures
// sweep counts each day's payments (succeeded, declined or failed), refunds and disputes per API, tenant and
// currency once the day is over, so the overview reads 90 days of a busy tenant as a few hundred rows and
// counts only today live. It fills upward from the newest day it holds to yesterday, then backward a year,
// a few days per run, so the days it holds are always one unbroken run (overview-reads.ts relies on that).
// A payment that changes after its day was counted (a 3-D Secure payment completing after midnight, a card
// transaction cleared for another amount) is caught by counting the last RECOUNT_DAYS days again, hourly.
import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.ts';
import { figuresByTenant, LIVE_DAYS, ROLLUP_SHAPE } from './reads/overview-reads.ts';

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
    // Days counted in an older shape (before migration 0074) are counted again, newest first, before the
    // run grows backward: the days of the current shape stay one unbroken run, as the overview reads them.
    const { rows: older } = await sql<{ day: Date }>`
      SELECT day::timestamp AT TIME ZONE 'UTC' AS day FROM console_daily_figures_days
      WHERE shape < ${ROLLUP_SHAPE} ORDER BY day DESC LIMIT ${DAYS_PER_RUN}`.execute(db);
    for (const { day: d } of older) if (due.length < DAYS_PER_RUN) due.push(d);
    if (older.length === 0) {
      for (let d = day(-1, held.min); d >= oldest && due.length < DAYS_PER_RUN; d = day(-1, d)) due.push(d);
    }
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
  const everyone = sql<boolean>`true`;
  await sql`
    WITH counted AS (
      ${figuresByTenant('merchant', from, to, everyone)}
      UNION ALL ${figuresByTenant('store', from, to, everyone)}
      UNION ALL ${figuresByTenant('partner', from, to, everyone)}
    ), figures AS (
      SELECT api, tenant_id, currency, sum(count) AS count, sum(volume) AS volume, sum(failed) AS failed,
        sum(refunds) AS refunds, sum(refund_volume) AS refund_volume, sum(disputes) AS disputes,
        sum(dispute_volume) AS dispute_volume
      FROM counted GROUP BY 1, 2, 3
    ), stale AS (
      -- the parts write different rows: those no longer counted go, the counted ones are upserted
      DELETE FROM console_daily_figures f WHERE f.day = ${date}::date AND NOT EXISTS (
        SELECT 1 FROM figures g WHERE g.api = f.api AND g.tenant_id = f.tenant_id AND g.currency = f.currency)
    ), marked AS (
      INSERT INTO console_daily_figures_days (day, computed_at, shape) VALUES (${date}::date, ${now}, ${ROLLUP_SHAPE})
      ON CONFLICT (day) DO UPDATE SET computed_at = EXCLUDED.computed_at, shape = EXCLUDED.shape
    )
    INSERT INTO console_daily_figures
      (api, tenant_id, day, currency, count, volume, failed, refunds, refund_volume, disputes, dispute_volume)
    SELECT api, tenant_id, ${date}::date, currency, count, volume, failed, refunds, refund_volume, disputes,
      dispute_volume
    FROM figures
    ON CONFLICT (api, tenant_id, day, currency) DO UPDATE SET count = EXCLUDED.count, volume = EXCLUDED.volume,
      failed = EXCLUDED.failed, refunds = EXCLUDED.refunds, refund_volume = EXCLUDED.refund_volume,
      disputes = EXCLUDED.disputes, dispute_volume = EXCLUDED.dispute_volume`.execute(db);
}
