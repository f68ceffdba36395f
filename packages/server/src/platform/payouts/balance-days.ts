// Each tenant's balance per currency and UTC day (balance_days, migration 0052; docs/payouts.md, Reports):
// the balance-days sweep sums a day's balance transactions once the day is over, so the balance-by-day and
// revenue reports read a year as 365 rows plus the live rows of the days not yet summed. It fills forward
// from the first day with movements, 31 days with movements per run (days without one only marked), so
// the days summed are one unbroken run (the reads rely on it), and sums each day once more six hours after
// its end, for a business step that read the clock before midnight and committed after the first sum. A re-summed day that changed moves
// the closing balances of the days after it by the difference, in the same transaction.
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';

const DAY_MS = 86_400_000;
/** A day is summed this long after its end (later business steps of the day have committed by then)… */
const FIRST_SUM_AFTER_MS = 3_600_000;
/** …and once more this long after its end. */
const RESUM_AFTER_MS = 6 * 3_600_000;
/** Days with movements summed per run: catching up with a year takes a dozen runs, none of them long. */
const DAYS_PER_RUN = 31;
/** Days looked at per run (those without movements are only marked) */
const EMPTY_DAYS_PER_RUN = 400;

export const dayOf = (at: Date) => at.toISOString().slice(0, 10);
const nextDay = (day: string) => dayOf(new Date(Date.parse(day) + DAY_MS));
const endOf = (day: string) => Date.parse(day) + DAY_MS;

/** The balance-days sweep: answers how many days it summed (days without movements only marked). */
export async function sumBalanceDays(db: Executor, now: Date): Promise<number> {
  const { rows } = await sql<{ max: string | null; first: Date | null }>`
    SELECT (SELECT max(day)::text FROM balance_days_summed) AS max,
      (SELECT min(created_at) FROM balance_transactions) AS first`.execute(db);
  const held = rows[0];
  if (!held?.first) return 0;
  const due: string[] = [];
  for (
    let day = held.max ? nextDay(held.max) : dayOf(held.first);
    endOf(day) + FIRST_SUM_AFTER_MS <= now.getTime() && due.length < EMPTY_DAYS_PER_RUN;
    day = nextDay(day)
  )
    due.push(day);
  // Days summed before six hours past their end whose six hours are over now: a handful at most.
  const { rows: again } = await sql<{ day: string }>`
    SELECT day::text AS day FROM balance_days_summed
    WHERE summed_at < (day + 1)::timestamp AT TIME ZONE 'UTC' + ${`${RESUM_AFTER_MS} milliseconds`}::interval
      AND (day + 1)::timestamp AT TIME ZONE 'UTC' + ${`${RESUM_AFTER_MS} milliseconds`}::interval <= ${now}
    ORDER BY day`.execute(db);
  const days = [...again.map((r) => r.day), ...due];
  if (days.length === 0) return 0;
  // A sandbox clock jumps years at once: the days without a movement are only marked, in one statement.
  const moved = new Set(await daysWithMovements(db, days));
  const summed: string[] = [];
  const marked: string[] = [];
  for (const day of days) {
    if (!moved.has(day)) marked.push(day);
    else if (summed.length < DAYS_PER_RUN) summed.push(day);
    else break;
  }
  for (const day of summed) await sumDay(db, day, now);
  if (marked.length > 0) {
    await db
      .insertInto('balance_days_summed')
      .values(marked.map((day) => ({ day, summed_at: now })))
      .onConflict((oc) => oc.column('day').doUpdateSet({ summed_at: now }))
      .execute();
  }
  return summed.length + marked.length;
}

/** Which of these days have a balance transaction: a probe of the created index per day. */
async function daysWithMovements(db: Executor, days: string[]): Promise<string[]> {
  const { rows } = await sql<{ day: string }>`
    SELECT d::text AS day FROM unnest(${days}::date[]) d
    WHERE EXISTS (SELECT 1 FROM balance_transactions
                  WHERE created_at >= d::timestamp AT TIME ZONE 'UTC'
                    AND created_at < (d + 1)::timestamp AT TIME ZONE 'UTC')`.execute(db);
  return rows.map((r) => r.day);
}

/**
 * One day summed (or summed again) in one statement: its rows replaced by the day's sums, each closing
 * balance the one before it plus the day's net, and the later days' closings moved by what changed.
 */
async function sumDay(db: Executor, day: string, now: Date): Promise<void> {
  await sql`
    WITH moves AS (
      SELECT owner, currency, sum(gross) AS gross, sum(fee) AS fee, sum(net) AS net,
        count(*) FILTER (WHERE fee <> 0) AS fee_count
      FROM balance_transactions
      WHERE created_at >= ${new Date(day)} AND created_at < ${new Date(endOf(day))}
      GROUP BY owner, currency
    ), old AS (
      SELECT owner, currency, net FROM balance_days WHERE day = ${day}::date
    ), changed AS (
      SELECT coalesce(m.owner, o.owner) AS owner, coalesce(m.currency, o.currency) AS currency,
        coalesce(m.net, 0) - coalesce(o.net, 0) AS delta
      FROM moves m FULL JOIN old o ON o.owner = m.owner AND o.currency = m.currency
    ), gone AS (
      DELETE FROM balance_days b USING old o
      WHERE b.owner = o.owner AND b.currency = o.currency AND b.day = ${day}::date
        AND NOT EXISTS (SELECT 1 FROM moves m WHERE m.owner = o.owner AND m.currency = o.currency)
    ), later AS (
      UPDATE balance_days b SET closing = b.closing + c.delta FROM changed c
      WHERE b.owner = c.owner AND b.currency = c.currency AND b.day > ${day}::date AND c.delta <> 0
    ), marked AS (
      INSERT INTO balance_days_summed (day, summed_at) VALUES (${day}::date, ${now})
      ON CONFLICT (day) DO UPDATE SET summed_at = EXCLUDED.summed_at
    )
    INSERT INTO balance_days (owner, currency, day, gross, fee, net, fee_count, closing)
    SELECT m.owner, m.currency, ${day}::date, m.gross, m.fee, m.net, m.fee_count,
      coalesce((SELECT b.closing FROM balance_days b
                WHERE b.owner = m.owner AND b.currency = m.currency AND b.day < ${day}::date
                ORDER BY b.day DESC LIMIT 1), 0) + m.net
    FROM moves m
    ON CONFLICT (owner, currency, day) DO UPDATE SET gross = EXCLUDED.gross, fee = EXCLUDED.fee,
      net = EXCLUDED.net, fee_count = EXCLUDED.fee_count, closing = EXCLUDED.closing`.execute(db);
}

/** The last day summed (every day from the first movement's up to it is), or null. */
export async function summedThrough(db: Executor): Promise<string | null> {
  const { rows } = await sql<{ day: string | null }>`
    SELECT max(day)::text AS day FROM balance_days_summed`.execute(db);
  return rows[0]?.day ?? null;
}

export { nextDay };
