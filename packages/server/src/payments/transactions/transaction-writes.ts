// What every step of a payments card transaction shares: the record locked for its owner, its status
// written, its network reference, and the orders module told of every change (IPN, order status).
import type { Clock } from '../../platform/clock/clock.ts';
import type { Tx } from '../../platform/db/database.ts';
import type { PaymentsTransactionStatus } from '../../platform/db/schema.ts';
import { notFound } from '../../platform/errors/domain-error.ts';
import type { MerchantScope } from '../sites.ts';
import { TRANSACTION_STEPS, type TransactionRow } from './transaction-row.ts';

export type ChangeListener = (
  tx: Tx,
  transaction: TransactionRow,
  change?: { captured: boolean },
) => Promise<void>;

export class TransactionWrites {
  constructor(
    private readonly deps: { clock: Clock },
    /** The orders module's listener (PaymentTransactionsService.onChange), read at each change */
    readonly onChange: ChangeListener,
  ) {}

  /** Moves the transaction on to `status`; a step the lifecycle (TRANSACTION_STEPS) does not have is a bug. */
  async setStatus(
    tx: Tx,
    t: Pick<TransactionRow, 'id' | 'status'>,
    status: PaymentsTransactionStatus,
    extra: Partial<{
      is_3d: boolean;
      captured_amount: bigint;
      auth_expires_at: Date | null;
      decline_reason: string;
      error_code: number;
      error_message: string;
      reason: string | null;
      message: string | null;
    }>,
  ): Promise<TransactionRow> {
    if (!TRANSACTION_STEPS[t.status].includes(status)) {
      throw new Error(`payments transaction ${t.id}: no step from ${t.status} to ${status}`);
    }
    return tx
      .updateTable('payments_transactions')
      .set({ status, updated_at: this.deps.clock.now(), ...extra })
      .where('id', '=', t.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  reference(t: TransactionRow): string {
    if (!t.network_reference) throw new Error(`transaction ${t.id} was never sent to the network`);
    return t.network_reference;
  }

  async lockOwned(tx: Tx, merchant: MerchantScope, id: number): Promise<TransactionRow> {
    const t = await tx
      .selectFrom('payments_transactions')
      .selectAll()
      .where('id', '=', id)
      .where('merchant_id', '=', merchant.merchantId)
      .where('site_id', 'in', merchant.siteIds)
      .forUpdate()
      .executeTakeFirst();
    if (!t) throw notFound('transaction');
    return t;
  }
}
