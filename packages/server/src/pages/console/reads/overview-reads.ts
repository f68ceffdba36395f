// The overview's figures: per day and API, how many payments succeeded and their volume per currency
// (exact decimal strings; only the chart turns them into numbers to draw), and what needs a person now:
// failed webhooks, open 3-D Secure challenges and refund proposals awaiting the buyer.
import { type RawBuilder, sql } from 'kysely';
import { sees } from '../../../platform/console/console-scope.ts';
import type { Viewer } from '../../../platform/console/console-users.ts';
import type { Executor } from '../../../platform/db/database.ts';
import { eventVisible } from './search.ts';

export interface DayFigure {
  api: 'payments' | 'crypto' | 'issuing';
  day: string;
  currency: string;
  count: number;
  volume: string;
}

const tenantIs = (viewer: Viewer, column: string): RawBuilder<boolean> =>
  viewer.role === 'operator' ? sql<boolean>`true` : sql<boolean>`${sql.ref(column)} = ${viewer.tenant.id}`;

/** Days younger than this are counted from the tables (today); older ones come from the rollup. */
export const LIVE_DAYS = 1;

/**
 * Succeeded payments per day, API and currency over [since, until): the days the rollup holds
 * (console_daily_figures, filled by the console-daily-figures sweep) read from it, the rest counted from
 * the tables by their creation-time indexes.
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
  const parts: RawBuilder<DayFigure>[] = [];
  if (rolled) {
    parts.push(sql<DayFigure>`
      SELECT api, to_char(day, 'YYYY-MM-DD') AS day, currency, sum(count)::int AS count, sum(volume)::text AS volume
      FROM console_daily_figures
      WHERE day >= ${rolled.from} AND day < ${rolled.until} AND api = ANY(${apis.map(apiOf)}::text[])
        AND ${viewer.role === 'operator' ? sql`true` : sql`tenant_id = ${viewer.tenant.id}`}
      GROUP BY api, day, currency`);
  }
  const live = (from: Date, to: Date) => {
    if (from >= to) return;
    for (const kind of apis) parts.push(liveFigures(kind, from, to, tenantIs(viewer, TENANT_COLUMN[kind])));
  };
  if (rolled) {
    live(since, rolled.fromTime);
    live(rolled.untilTime, until);
  } else {
    live(since, until);
  }
  const { rows } =
    await sql<DayFigure>`${sql.join(parts, sql` UNION ALL `)} ORDER BY day, api, currency`.execute(db);
  return rows;
}

type Kind = 'merchant' | 'store' | 'partner';
const TENANT_COLUMN: Record<Kind, string> = {
  merchant: 'merchant_id',
  store: 'store_id',
  partner: 'partner_id',
};
const apiOf = (kind: Kind) => ({ merchant: 'payments', store: 'crypto', partner: 'issuing' })[kind];

/** One API's succeeded payments per day and currency over [from, to), counted from its table. */
function liveFigures(kind: Kind, from: Date, to: Date, tenant: RawBuilder<boolean>): RawBuilder<DayFigure> {
  const day = sql`to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')`;
  switch (kind) {
    case 'merchant':
      return sql<DayFigure>`
        SELECT 'payments' AS api, ${day} AS day, currency, count(*)::int AS count, sum(captured_amount)::text AS volume
        FROM payments_transactions
        WHERE type = 'deposit' AND status IN ('complete-ok', 'refund-ok') AND created_at >= ${from} AND created_at < ${to}
          AND ${tenant}
        GROUP BY 2, 3`;
    case 'store':
      return sql<DayFigure>`
        SELECT 'crypto' AS api, ${day} AS day, currency, count(*)::int AS count, sum(total)::text AS volume
        FROM crypto_payments
        WHERE created_at >= ${from} AND created_at < ${to} AND ${tenant}
        GROUP BY 2, 3`;
    case 'partner':
      return sql<DayFigure>`
        SELECT 'issuing' AS api, ${day} AS day, currency, count(*)::int AS count,
          sum(coalesce(settled_amount, amount))::text AS volume
        FROM issuing_transactions
        WHERE type = 'card_payment' AND status NOT IN ('declined', 'pending_3ds') AND created_at >= ${from}
          AND created_at < ${to} AND ${tenant}
        GROUP BY 2, 3`;
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
    FROM console_daily_figures_days WHERE day >= ${firstDay}::date AND day < ${endDay}::date`.execute(db);
  const row = rows[0];
  if (!row?.from || !row.until) return undefined;
  return {
    from: row.from,
    until: row.until,
    fromTime: new Date(`${row.from}T00:00:00Z`),
    untilTime: new Date(`${row.until}T00:00:00Z`),
  };
}

export interface Attention {
  failedWebhooks: number;
  openChallenges: number;
  refundProposals: number;
  openDisputes: number;
}

export async function needsAttention(db: Executor, viewer: Viewer): Promise<Attention> {
  const eventScope = eventVisible(viewer);
  const { rows } = await sql<Attention>`
    SELECT
      (SELECT count(*)::int FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        WHERE d.status = 'failed' AND ${eventScope}
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries later WHERE later.event_id = d.event_id
                          AND later.created_at > d.created_at)) AS "failedWebhooks",
      ${
        sees(viewer, 'partner')
          ? sql`(SELECT count(*)::int FROM issuing_3ds_challenges c WHERE c.status = 'pending'
              AND ${viewer.role === 'operator' ? sql`true` : sql`c.customer_id IN (SELECT id FROM issuing_customers WHERE partner_id = ${viewer.tenant.id})`})`
          : sql`0`
      } AS "openChallenges",
      ${
        sees(viewer, 'store')
          ? sql`(SELECT count(*)::int FROM crypto_refunds r WHERE r.status = 'proposed' AND ${tenantIs(viewer, 'r.store_id')})`
          : sql`0`
      } AS "refundProposals",
      ${
        sees(viewer, 'merchant')
          ? sql`(SELECT count(*)::int FROM payments_disputes d WHERE d.status IN ('needs_response', 'under_review')
              AND ${viewer.role === 'operator' ? sql`true` : sql`d.merchant_id = ${Number(viewer.tenant.id)}`})`
          : sql`0`
      } AS "openDisputes"`.execute(db);
  return rows[0] ?? { failedWebhooks: 0, openChallenges: 0, refundProposals: 0, openDisputes: 0 };
}
