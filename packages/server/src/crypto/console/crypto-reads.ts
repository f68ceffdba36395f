// What the console shows of the crypto API: orders with their deposits and the chain transfers behind
// them (confirmations counted), refund proposals, stores and their session keys.

import { sql } from 'kysely';
import { tenantCondition } from '../../platform/console/console-scope.ts';
import type { Viewer } from '../../platform/console/console-users.ts';
import { pageOf, UUID, whenGiven } from '../../platform/console/paging.ts';
import type { Executor } from '../../platform/db/database.ts';
import { notFound } from '../../platform/errors/domain-error.ts';

type Filters = Record<string, string | undefined>;
interface Cursor {
  cursor_at: Date;
  cursor_id: string;
}

export const CRYPTO_REFUND_STATUSES = ['proposed', 'accepted', 'rejected', 'complete', 'expired'] as const;

export interface CryptoOrderRow extends Cursor {
  id: string;
  store_id: string;
  store_name: string;
  reference: string;
  status: string;
  currency: string;
  total: string;
  pay_asset: string | null;
  pay_network: string | null;
  deposit_address: string | null;
  payment_id: string | null;
  expires_at: Date;
  created_at: Date;
}

const ORDER_COLUMNS = sql`o.id, o.store_id, s.name AS store_name, o.reference, o.status, o.currency, o.total, o.pay_asset,
  o.pay_network, o.deposit_address, o.payment_id, o.expires_at, o.created_at
  FROM crypto_orders o JOIN stores s ON s.id = o.store_id`;

export function listCryptoOrders(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<CryptoOrderRow>(
    db,
    {
      selectFrom: ORDER_COLUMNS,
      where: [
        tenantCondition(viewer, 'store', 'o.store_id', { hashed: true }),
        ...whenGiven(f, 'status', (v) => sql`o.status = ${v}`),
        ...whenGiven(f, 'reference', (v) => sql`o.reference = ${v}`),
      ],
      createdAt: 'o.created_at',
      id: 'o.id',
      sequence: 'o.seq',
      table: 'crypto_orders',
      amount: { column: 'o.total', currency: 'o.currency' },
    },
    f,
  );
}

export async function getCryptoOrder(db: Executor, viewer: Viewer, id: string): Promise<CryptoOrderRow> {
  if (!UUID.test(id)) throw notFound('crypto order');
  const { rows } = await sql<CryptoOrderRow>`
    SELECT o.created_at AS cursor_at, o.id::text AS cursor_id, ${ORDER_COLUMNS}
    WHERE o.id = ${id} AND ${tenantCondition(viewer, 'store', 'o.store_id')}`.execute(db);
  const row = rows[0];
  if (!row) throw notFound('crypto order');
  return row;
}

export interface DepositRow {
  id: string;
  asset: string;
  network: string;
  amount: string;
  status: string;
  late: boolean;
  confirmations_required: number;
  detected_at: Date;
  confirmed_at: Date | null;
}

export async function depositsOf(db: Executor, orderId: string): Promise<DepositRow[]> {
  const { rows } = await sql<DepositRow>`
    SELECT id, asset, network, amount, status, late, confirmations_required, detected_at, confirmed_at
    FROM crypto_deposits WHERE order_id = ${orderId} ORDER BY detected_at`.execute(db);
  return rows;
}

export interface ChainTransferRow {
  id: string;
  /** The transaction on the chain (a real chain's hash; the simulator's transfer id is its hash) */
  tx_hash: string | null;
  network: string;
  asset: string;
  direction: string;
  address: string;
  amount: string;
  status: string;
  confirmations_required: number;
  broadcast_at: Date;
  confirmed_at: Date | null;
}

/**
 * The chain transfers to an address (the order's deposit address) or of a reference (a refund's payout),
 * whichever rail carried them: the chain simulator's and the EVM adapter's records (EVM addresses are
 * compared without their checksum case).
 */
export async function chainTransfers(db: Executor, by: { address?: string; reference?: string }) {
  const simulated = by.address ? sql`address = ${by.address}` : sql`reference = ${by.reference ?? ''}`;
  const onEvm = by.address
    ? sql`lower(address) = lower(${by.address})`
    : sql`reference = ${by.reference ?? ''}`;
  const { rows } = await sql<ChainTransferRow>`
    SELECT id, id AS tx_hash, network, asset, direction, address, amount, status, confirmations_required,
      broadcast_at, confirmed_at
    FROM chain_transfers WHERE ${simulated}
    UNION ALL
    SELECT id, tx_hash, network, asset, direction, address, amount, status, confirmations_required,
      COALESCE(last_broadcast_at, created_at), confirmed_at
    FROM evm_transfers WHERE ${onEvm}
    ORDER BY broadcast_at`.execute(db);
  return rows;
}

export interface CryptoRefundRow extends Cursor {
  id: string;
  payment_id: string;
  order_id: string;
  store_id: string;
  status: string;
  amount: string;
  currency: string;
  crypto_amount: string;
  asset: string;
  network: string;
  refund_address: string | null;
  reason: string | null;
  payout_id: string | null;
  expires_at: Date;
  created_at: Date;
}

const REFUND_COLUMNS = sql`r.id, r.payment_id, r.order_id, r.store_id, r.status, r.amount, r.currency, r.crypto_amount,
  r.asset, r.network, r.refund_address, r.reason, r.payout_id, r.expires_at, r.created_at FROM crypto_refunds r`;

export function listCryptoRefunds(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<CryptoRefundRow>(
    db,
    {
      selectFrom: REFUND_COLUMNS,
      where: [
        tenantCondition(viewer, 'store', 'r.store_id'),
        ...whenGiven(f, 'status', (v) => sql`r.status = ${v}`),
        ...whenGiven(f, 'orderId', (v) => sql`r.order_id = ${v}`, UUID),
      ],
      createdAt: 'r.created_at',
      id: 'r.id',
    },
    f,
  );
}

export async function getCryptoRefund(db: Executor, viewer: Viewer, id: string): Promise<CryptoRefundRow> {
  if (!UUID.test(id)) throw notFound('crypto refund');
  const { rows } = await sql<CryptoRefundRow>`
    SELECT r.created_at AS cursor_at, r.id::text AS cursor_id, ${REFUND_COLUMNS}
    WHERE r.id = ${id} AND ${tenantCondition(viewer, 'store', 'r.store_id')}`.execute(db);
  const row = rows[0];
  if (!row) throw notFound('crypto refund');
  return row;
}

export interface StoreKeyRow extends Cursor {
  id: string;
  store_id: string;
  store_name: string;
  mode: string;
  created_at: Date;
  revoked_at: Date | null;
}

export function listStoreKeys(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<StoreKeyRow>(
    db,
    {
      selectFrom: sql`k.id, k.store_id, s.name AS store_name, k.mode, k.created_at, k.revoked_at
        FROM crypto_api_keys k JOIN stores s ON s.id = k.store_id`,
      where: [
        tenantCondition(viewer, 'store', 'k.store_id'),
        ...whenGiven(f, 'storeId', (v) => sql`k.store_id = ${v}`),
      ],
      createdAt: 'k.created_at',
      id: 'k.id',
    },
    f,
  );
}
