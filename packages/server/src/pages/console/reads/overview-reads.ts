// The overview's figures: per day and API, how many payments succeeded and their volume per currency
// (exact decimal strings; only the chart turns them into numbers to draw), how many were declined or
// failed, the refunds and the disputes; and what needs a person now (needs-attention.ts).
import { type RawBuilder, sql } from 'kysely';
import { sees } from '../../../platform/console/console-scope.ts';
import type { Viewer } from '../../../platform/console/console-users.ts';
import type { Executor } from '../../../platform/db/database.ts';

export interface DayFigure {
  api: 'payments' | 'crypto' | 'issuing';
  day: string;
  currency: string;
  /** Succeeded payments and what they brought in (minor units) */
  count: number;
  volume: string;
  /** Payments declined or failed: the success rate is count / (count + failed) */
  failed: number;
  refunds: number;
  refund_volume: string;
  disputes: number;
  dispute_volume: string;
}

/** The viewer's own tenant's rows (an operator's: every tenant's) by the column naming the tenant */
export const tenantIs = (viewer: Viewer, column: string): RawBuilder<boolean> =>
  viewer.role === 'operator' ? sql<boolean>`true` : sql<boolean>`${sql.ref(column)} = ${viewer.tenant.id}`;

/** Days younger than this are counted from the tables (today); older ones come from the rollup. */
export const LIVE_DAYS = 1;
/** The rollup's rows of this shape hold every figure of DayFigure (migration 0074) */
export const ROLLUP_SHAPE = 2;

/**
 * Per day, API and currency over [since, until): the days the rollup holds (console_daily_figures, filled
 * by the console-daily-figures sweep) read from it, the rest counted from the tables by their
 * creation-time indexes.
 */
export async function dailyFigures(
  db: Executor,
  viewer: Viewer,
  since: Date,
  until: Date,
): Promise<DayFigure[]> {
  const apis = (['merchant', 'store', 'partner'] as const).filter((kind) => sees(viewer, kind));
  if (apis.length === 0) return [];
  const rolled = await rolledUpDays(db, since, until);
  const parts: RawBuilder<unknown>[] = [];
  if (rolled) {
    parts.push(sql`
      SELECT api, tenant_id, day, currency, count, volume, failed, refunds, refund_volume, disputes, dispute_volume
      FROM console_daily_figures
      WHERE day >= ${rolled.from} AND day < ${rolled.until} AND api = ANY(${apis.map(apiOf)}::text[])
        AND ${viewer.role === 'operator' ? sql`true` : sql`tenant_id = ${viewer.tenant.id}`}`);
  }
  const live = (from: Date, to: Date) => {
    if (from >= to) return;
    for (const kind of apis)
      parts.push(figuresByTenant(kind, from, to, tenantIs(viewer, TENANT_COLUMN[kind])));
  };
  if (rolled) {
    live(since, rolled.fromTime);
    live(rolled.untilTime, until);
  } else {
    live(since, until);
  }
  const { rows } = await sql<DayFigure>`
    SELECT api, to_char(day, 'YYYY-MM-DD') AS day, currency, sum(count)::int AS count, sum(volume)::text AS volume,
      sum(failed)::int AS failed, sum(refunds)::int AS refunds, sum(refund_volume)::text AS refund_volume,
      sum(disputes)::int AS disputes, sum(dispute_volume)::text AS dispute_volume
    FROM (${sql.join(parts, sql` UNION ALL `)}) f
    GROUP BY api, day, currency
    ORDER BY day, api, currency`.execute(db);
  return rows;
}

export type Kind = 'merchant' | 'store' | 'partner';
const TENANT_COLUMN: Record<Kind, string> = {
  merchant: 'merchant_id',
  store: 'store_id',
  partner: 'partner_id',
};
const apiOf = (kind: Kind) => ({ merchant: 'payments', store: 'crypto', partner: 'issuing' })[kind];

/**
 * One API's figures per tenant, day (UTC) and currency over [from, to), counted from its tables by their
 * creation-time indexes: the rollup's rows for a day, and the overview's for the hours it does not hold.
 * Payments: deposits succeeded and declined or failed, refunds, disputes opened. Crypto: payments received
 * (an order that expires was not refused, so there is no rate). Issuing: card payments authorized and
 * declined.
 */
export function figuresByTenant(
  kind: Kind,
  from: Date,
  to: Date,
  tenant: RawBuilder<boolean>,
): RawBuilder<unknown> {
  const day = sql`(created_at AT TIME ZONE 'UTC')::date`;
  switch (kind) {
    case 'merchant':
      return sql`
        SELECT 'payments' AS api, merchant_id::text AS tenant_id, ${day} AS day, currency,
          count(*) FILTER (WHERE type = 'deposit' AND status <> 'complete-failed') AS count,
          coalesce(sum(captured_amount) FILTER (WHERE type = 'deposit' AND status <> 'complete-failed'), 0) AS volume,
          count(*) FILTER (WHERE status = 'complete-failed') AS failed,
          count(*) FILTER (WHERE type = 'refund') AS refunds,
          coalesce(sum(amount) FILTER (WHERE type = 'refund'), 0) AS refund_volume,
          0 AS disputes, 0 AS dispute_volume
        FROM payments_transactions
        WHERE (type = 'deposit' AND status IN ('complete-ok', 'refund-ok', 'complete-failed')
               OR type = 'refund' AND status = 'refund-ok')
          AND created_at >= ${from} AND created_at < ${to} AND ${tenant}
        GROUP BY 2, 3, 4
        UNION ALL
        SELECT 'payments', merchant_id::text, ${day}, currency, 0, 0, 0, 0, 0, count(*), sum(amount)
        FROM payments_disputes
        WHERE created_at >= ${from} AND created_at < ${to} AND ${tenant}
        GROUP BY 2, 3, 4`;
    case 'store':
      return sql`
        SELECT 'crypto' AS api, store_id AS tenant_id, ${day} AS day, currency, count(*) AS count,
          sum(total) AS volume, 0 AS failed, 0 AS refunds, 0 AS refund_volume, 0 AS disputes, 0 AS dispute_volume
        FROM crypto_payments
        WHERE created_at >= ${from} AND created_at < ${to} AND ${tenant}
        GROUP BY 2, 3, 4`;
    case 'partner':
      return sql`
        SELECT 'issuing' AS api, partner_id AS tenant_id, ${day} AS day, currency,
          count(*) FILTER (WHERE status <> 'declined') AS count,
          coalesce(sum(coalesce(settled_amount, amount)) FILTER (WHERE status <> 'declined'), 0) AS volume,
          count(*) FILTER (WHERE status = 'declined') AS failed,
          0 AS refunds, 0 AS refund_volume, 0 AS disputes, 0 AS dispute_volume
        FROM issuing_transactions
        WHERE type = 'card_payment' AND status <> 'pending_3ds' AND created_at >= ${from}
          AND created_at < ${to} AND ${tenant}
        GROUP BY 2, 3, 4`;
  }
}

/** The contiguous run of rolled-up days inside [since, until), if any (the sweep fills newest first). */
async function rolledUpDays(db: Executor, since: Date, until: Date) {
  // Only whole UTC days inside [since, until) can come from the rollup.
  const DAY = 86_400_000;
  const firstDay = new Date(Math.ceil(since.getTime() / DAY) * DAY).toISOString().slice(0, 10);
  const endDay = new Date(Math.floor(until.getTime() / DAY) * DAY).toISOString().slice(0, 10);
  const { rows } = await sql<{ from: string | null; until: string | null }>`
    SELECT to_char(min(day), 'YYYY-MM-DD') AS from, to_char(max(day) + 1, 'YYYY-MM-DD') AS until
    FROM console_daily_figures_days
    WHERE day >= ${firstDay}::date AND day < ${endDay}::date AND shape = ${ROLLUP_SHAPE}`.execute(db);
  const row = rows[0];
  if (!row?.from || !row.until) return undefined;
  return {
    from: row.from,
    until: row.until,
    fromTime: new Date(`${row.from}T00:00:00Z`),
    untilTime: new Date(`${row.until}T00:00:00Z`),
  };
}
