// A crypto order's statuses and the moves between them, in one table the orders and refunds services,
// the tests and the docs all read. A status never moves backwards unless the table says so: a refund
// proposal that is rejected or lapses returns the order to where it was.
import type { Tx } from '../../platform/db/database.ts';
import type { CryptoOrderStatus } from '../../platform/db/schema.ts';

export const ORDER_TRANSITIONS: Readonly<Record<CryptoOrderStatus, readonly CryptoOrderStatus[]>> = {
  pending: ['paid', 'expired', 'canceled'],
  paid: ['refund_proposed'],
  expired: ['refund_proposed'],
  canceled: ['refund_proposed'],
  refund_proposed: ['refund_processing', 'paid', 'expired', 'canceled'],
  refund_processing: ['refund_completed'],
  refund_completed: [],
};

/** Moves the order; a move the table does not allow is a programming error, and nothing changes. */
export async function moveOrder(tx: Tx, orderId: string, to: CryptoOrderStatus, now: Date): Promise<void> {
  const from = (Object.keys(ORDER_TRANSITIONS) as CryptoOrderStatus[]).filter((s) =>
    ORDER_TRANSITIONS[s].includes(to),
  );
  const moved = await tx
    .updateTable('crypto_orders')
    .set({ status: to, updated_at: now })
    .where('id', '=', orderId)
    .where('status', 'in', from)
    .executeTakeFirst();
  if (moved.numUpdatedRows !== 1n)
    throw new Error(`crypto order ${orderId} cannot move to ${to} from its status`);
}
