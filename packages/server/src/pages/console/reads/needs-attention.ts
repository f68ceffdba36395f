// What needs a person now, for the overview: failed webhooks, open 3-D Secure challenges, refund proposals
// awaiting the buyer, open disputes (the nearest deadlines listed), reviews held by a risk rule and
// requests waiting for a second person; for an operator, the tenants with the most of them. Every count
// reads a partial or status index of the few open rows, never a tenant's history.
import { sql } from 'kysely';
import { sees } from '../../../platform/console/console-scope.ts';
import type { Viewer } from '../../../platform/console/console-users.ts';
import type { Executor } from '../../../platform/db/database.ts';
import { tenantIs } from './overview-reads.ts';
import { eventVisible } from './search.ts';

export interface Attention {
  failedWebhooks: number;
  openChallenges: number;
  refundProposals: number;
  openDisputes: number;
  pendingReviews: number;
  pendingApprovals: number;
}

/** A tenant's key as reviews and the attention list name it (`merchant:2001`); none for an operator */
const tenantKey = (viewer: Viewer) =>
  viewer.role === 'operator' ? undefined : `${viewer.tenant.kind}:${viewer.tenant.id}`;

/** The last delivery of an event failed (a later one, a redelivery, may have succeeded since) */
const LAST_DELIVERY_FAILED = sql<boolean>`d.status = 'failed' AND NOT EXISTS (
  SELECT 1 FROM webhook_deliveries later WHERE later.event_id = d.event_id AND later.created_at > d.created_at)`;

export async function needsAttention(db: Executor, viewer: Viewer): Promise<Attention> {
  const key = tenantKey(viewer);
  const { rows } = await sql<Attention>`
    SELECT
      (SELECT count(*)::int FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        WHERE ${LAST_DELIVERY_FAILED} AND ${eventVisible(viewer)}) AS "failedWebhooks",
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
              AND ${tenantIs(viewer, 'd.merchant_id')})`
          : sql`0`
      } AS "openDisputes",
      (SELECT count(*)::int FROM risk_reviews r WHERE r.status = 'pending'
        AND ${key ? sql`r.tenant = ${key}` : sql`true`}) AS "pendingReviews",
      (SELECT count(*)::int FROM approval_requests a WHERE a.status = 'pending'
        AND ${viewer.role === 'operator' ? sql`true` : sql`a.tenant_kind = ${viewer.tenant.kind} AND a.tenant_id = ${viewer.tenant.id}`}) AS "pendingApprovals"
  `.execute(db);
  return (
    rows[0] ?? {
      failedWebhooks: 0,
      openChallenges: 0,
      refundProposals: 0,
      openDisputes: 0,
      pendingReviews: 0,
      pendingApprovals: 0,
    }
  );
}

export interface DisputeDue {
  id: string;
  merchant_id: number;
  amount: string;
  currency: string;
  network: string;
  reason_code: string;
  evidence_due_at: Date;
}

/** The disputes waiting for the merchant's answer, nearest deadline first (the deadline's partial index) */
export async function disputesDue(db: Executor, viewer: Viewer, limit: number): Promise<DisputeDue[]> {
  if (!sees(viewer, 'merchant')) return [];
  const { rows } = await sql<DisputeDue>`
    SELECT d.id::text, d.merchant_id, d.amount::text, d.currency, d.network, d.reason_code, d.evidence_due_at
    FROM payments_disputes d
    WHERE d.status = 'needs_response' AND ${tenantIs(viewer, 'd.merchant_id')}
    ORDER BY d.evidence_due_at, d.id
    LIMIT ${limit}`.execute(db);
  return rows;
}

export interface TenantAttention {
  /** `merchant:2001`, `store:str_…`, `partner:…` */
  tenant: string;
  name: string | null;
  disputes: number;
  failedWebhooks: number;
  reviews: number;
  approvals: number;
}

/**
 * For an operator: the tenants with the most waiting on them — open disputes, failed webhooks, reviews and
 * approvals — most first, with their names.
 */
export async function tenantsNeedingAttention(db: Executor, limit: number): Promise<TenantAttention[]> {
  const { rows } = await sql<TenantAttention>`
    WITH waiting AS (
      SELECT 'merchant:' || merchant_id AS tenant, 'disputes' AS what FROM payments_disputes
      WHERE status IN ('needs_response', 'under_review')
      UNION ALL
      SELECT CASE e.api WHEN 'payments' THEN 'merchant:' || (SELECT s.merchant_id FROM sites s WHERE s.id::text = e.tenant_id)
                        WHEN 'crypto' THEN 'store:' || e.tenant_id ELSE 'partner:' || e.tenant_id END, 'webhooks'
      FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE ${LAST_DELIVERY_FAILED}
      UNION ALL
      SELECT tenant, 'reviews' FROM risk_reviews WHERE status = 'pending'
      UNION ALL
      SELECT tenant_kind || ':' || tenant_id, 'approvals' FROM approval_requests WHERE status = 'pending'
    ), counted AS (
      SELECT tenant,
        count(*) FILTER (WHERE what = 'disputes')::int AS disputes,
        count(*) FILTER (WHERE what = 'webhooks')::int AS "failedWebhooks",
        count(*) FILTER (WHERE what = 'reviews')::int AS reviews,
        count(*) FILTER (WHERE what = 'approvals')::int AS approvals
      FROM waiting WHERE tenant IS NOT NULL GROUP BY tenant
      ORDER BY count(*) DESC, tenant LIMIT ${limit}
    )
    SELECT c.*, CASE split_part(c.tenant, ':', 1)
        WHEN 'merchant' THEN (SELECT m.name FROM merchants m WHERE m.id::text = split_part(c.tenant, ':', 2))
        WHEN 'store' THEN (SELECT st.name FROM stores st WHERE st.id = split_part(c.tenant, ':', 2))
        WHEN 'partner' THEN (SELECT p.name FROM partners p WHERE p.id = split_part(c.tenant, ':', 2))
      END AS name
    FROM counted c ORDER BY c.disputes + c."failedWebhooks" + c.reviews + c.approvals DESC, c.tenant`.execute(
    db,
  );
  return rows;
}
