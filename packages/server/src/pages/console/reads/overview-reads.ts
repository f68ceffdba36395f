// The overview's figures: per day and API, how many payments succeeded and their volume per currency
// (exact decimal strings; only the chart turns them into numbers to draw), and what needs a person now:
// failed webhooks, open 3-D Secure challenges and refund proposals awaiting the buyer.
import { type RawBuilder, sql } from 'kysely';
import type { Viewer } from '../../../platform/console/console-users.ts';
import type { Executor } from '../../../platform/db/database.ts';
import { sees } from '../console-scope.ts';
import { eventVisible } from './search.ts';

export interface DayFigure {
  api: 'payments' | 'crypto' | 'issuing';
  day: string;
  currency: string;
  count: number;
  volume: string;
}

const tenantIs = (viewer: Viewer, column: string): RawBuilder<boolean> =>
  viewer.role === 'operator'
    ? sql<boolean>`true`
    : sql<boolean>`${sql.ref(column)}::text = ${viewer.tenant.id}`;

/** Succeeded payments per day, API and currency over [since, until). */
export async function dailyFigures(
  db: Executor,
  viewer: Viewer,
  since: Date,
  until: Date,
): Promise<DayFigure[]> {
  const parts: RawBuilder<DayFigure>[] = [];
  if (sees(viewer, 'merchant')) {
    parts.push(sql<DayFigure>`
      SELECT 'payments' AS api, to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, currency,
        count(*)::int AS count, sum(captured_amount)::text AS volume
      FROM payments_transactions
      WHERE type = 'deposit' AND status IN ('complete-ok', 'refund-ok') AND created_at >= ${since} AND created_at < ${until}
        AND ${tenantIs(viewer, 'merchant_id')}
      GROUP BY 2, 3`);
  }
  if (sees(viewer, 'store')) {
    parts.push(sql<DayFigure>`
      SELECT 'crypto' AS api, to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, currency,
        count(*)::int AS count, sum(total)::text AS volume
      FROM crypto_payments
      WHERE created_at >= ${since} AND created_at < ${until} AND ${tenantIs(viewer, 'store_id')}
      GROUP BY 2, 3`);
  }
  if (sees(viewer, 'partner')) {
    parts.push(sql<DayFigure>`
      SELECT 'issuing' AS api, to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, currency,
        count(*)::int AS count, sum(coalesce(settled_amount, amount))::text AS volume
      FROM issuing_transactions
      WHERE type = 'card_payment' AND status NOT IN ('declined', 'pending_3ds') AND created_at >= ${since}
        AND created_at < ${until} AND ${tenantIs(viewer, 'partner_id')}
      GROUP BY 2, 3`);
  }
  if (parts.length === 0) return [];
  const { rows } =
    await sql<DayFigure>`${sql.join(parts, sql` UNION ALL `)} ORDER BY day, api, currency`.execute(db);
  return rows;
}

export interface Attention {
  failedWebhooks: number;
  openChallenges: number;
  refundProposals: number;
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
      } AS "refundProposals"`.execute(db);
  return rows[0] ?? { failedWebhooks: 0, openChallenges: 0, refundProposals: 0 };
}
