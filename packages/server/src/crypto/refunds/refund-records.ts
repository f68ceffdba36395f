// A refund proposal as the crypto API, its pages and its services read it (docs/crypto.md, refunds): the
// row, found by id, payment, store or the buyer's decision token, with its order's reference and its
// store's name and brand.
import type { Selectable } from 'kysely';
import type { Executor } from '../../platform/db/database.ts';
import type { CryptoRefundStatus, CryptoRefundsTable } from '../../platform/db/schema.ts';
import { notFound } from '../../platform/errors/domain-error.ts';
import { type Brand, brandOf } from '../../platform/tenants/brand.ts';

export interface Refund {
  id: string;
  paymentId: string;
  orderId: string;
  orderReference: string;
  storeName: string;
  /** What the buyer's refund page shows of the store */
  storeBrand: Brand;
  status: CryptoRefundStatus;
  /** Held by a risk rule for a person: the buyer cannot decide until approved (docs/risk.md) */
  inReview: boolean;
  amount: bigint;
  currency: string;
  reason: string | null;
  cryptoAmount: bigint;
  asset: string;
  network: string;
  refundAddress: string | null;
  payoutTransactionHash: string | null;
  expiresAt: Date;
  createdAt: Date;
  decidedAt: Date | null;
  completedAt: Date | null;
}

export interface RefundLookup {
  id?: string;
  paymentId?: string;
  storeId?: string;
  tokenHash?: string;
}

function toRefund(
  row: Selectable<CryptoRefundsTable>,
  orderReference: string,
  store: { name: string; brand: unknown },
): Refund {
  return {
    id: row.id,
    paymentId: row.payment_id,
    orderId: row.order_id,
    orderReference,
    storeName: store.name,
    storeBrand: { name: store.name, ...brandOf(store.brand) },
    status: row.status,
    inReview: row.in_review,
    amount: BigInt(row.amount),
    currency: row.currency,
    reason: row.reason,
    cryptoAmount: BigInt(row.crypto_amount),
    asset: row.asset,
    network: row.network,
    refundAddress: row.refund_address,
    payoutTransactionHash: row.payout_id,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    decidedAt: row.decided_at,
    completedAt: row.completed_at,
  };
}

/** The latest proposal matching `where` (a payment's current refund when by payment). */
export function refundQuery(db: Executor, where: RefundLookup) {
  let q = db.selectFrom('crypto_refunds').selectAll();
  if (where.id) q = q.where('id', '=', where.id);
  if (where.paymentId) q = q.where('payment_id', '=', where.paymentId);
  if (where.storeId) q = q.where('store_id', '=', where.storeId);
  if (where.tokenHash) q = q.where('decision_token_hash', '=', where.tokenHash);
  return q.orderBy('seq', 'desc').limit(1);
}

export async function findRefund(db: Executor, where: RefundLookup): Promise<Refund> {
  const row = await refundQuery(db, where).executeTakeFirst();
  if (!row) throw notFound('refund');
  const order = await db
    .selectFrom('crypto_orders as o')
    .innerJoin('stores as s', 's.id', 'o.store_id')
    .select(['o.reference', 's.name', 's.brand'])
    .where('o.id', '=', row.order_id)
    .executeTakeFirstOrThrow();
  return toRefund(row, order.reference, order);
}
