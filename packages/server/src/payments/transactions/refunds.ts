// Refunds and voids of payments card transactions (docs/payments.md, Transactions; the spec's DELETE
// /transaction/{id}): an authorization not yet captured is voided; a captured one is refunded, in full or
// in part, as a transaction of its own, the sites' balances debited in the same database transaction.
import type { Clock } from '../../platform/clock/clock.ts';
import type { Tx } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { uuidv7 } from '../../platform/ids.ts';
import { type ClientAmount, formatAmountIn } from '../../platform/money/amount.ts';
import type { CardNetwork } from '../../rails/card-network/port.ts';
import { openDisputeOf } from '../disputes/dispute.ts';
import type { MerchantScope } from '../sites.ts';
import { FAILURES } from './decline-codes.ts';
import type { SiteMoney } from './site-money.ts';
import { assetOf, insertChild, leftOf, NETWORK_OWNER, type TransactionRow } from './transaction-row.ts';
import type { TransactionWrites } from './transaction-writes.ts';

export class Refunds {
  constructor(
    private readonly deps: {
      transact: Transact;
      clock: Clock;
      network: CardNetwork;
      money: SiteMoney;
      writes: TransactionWrites;
    },
  ) {}

  /**
   * DELETE /transaction/{id}: an authorization not yet captured is voided; a captured one is refunded,
   * in full or in part up to what is left. A refund is its own transaction (type refund).
   */
  async refund(
    merchant: MerchantScope,
    id: number,
    input: { amount?: ClientAmount; reason?: string; message?: string },
  ): Promise<TransactionRow> {
    return this.deps.transact(async (tx) => {
      const t = await this.deps.writes.lockOwned(tx, merchant, id);
      const now = this.deps.clock.now();
      if (t.type === 'deposit' && t.status === 'in-progress') {
        if (input.amount !== undefined && input.amount.in(assetOf(t.currency)) !== BigInt(t.amount)) {
          throw new DomainError('validation_failed', 'an uncaptured authorization is voided in full', {
            field: 'amount',
          });
        }
        return this.voidAuthorization(tx, t, input.reason ?? null, input.message ?? null);
      }
      if (t.type !== 'deposit' || (t.status !== 'complete-ok' && t.status !== 'refund-ok')) {
        throw new DomainError(
          'invalid_state',
          `a ${t.type} transaction that is ${t.status} cannot be refunded`,
          {
            details: { transactionStatus: t.status },
          },
        );
      }
      // A chargeback under way decides what is left: nothing is refunded until the dispute ends.
      const open = await openDisputeOf(tx, t.id);
      if (open !== undefined) {
        throw new DomainError(
          'invalid_state',
          `the transaction is disputed (dispute ${open}): it cannot be refunded until the dispute ends`,
          {
            details: { transactionStatus: t.status, disputeId: open },
          },
        );
      }
      const left = leftOf(t);
      if (left === 0n) {
        throw new DomainError('invalid_state', 'the transaction is already fully refunded or charged back', {
          details: { transactionStatus: t.status },
        });
      }
      const amount = input.amount === undefined ? left : input.amount.in(assetOf(t.currency));
      if (amount > left) {
        throw new DomainError(
          'validation_failed',
          `the refund exceeds what is left to refund (${formatAmountIn(left, t.currency)} ${t.currency})`,
          {
            field: 'amount',
            details: { data: { refundable: formatAmountIn(left, t.currency), currency: t.currency } },
          },
        );
      }
      const refund = await insertChild(tx, t, {
        type: 'refund',
        status: 'refund-ok',
        amount,
        reason: input.reason ?? null,
        message: input.message ?? null,
        at: now,
      });
      const moved = await this.deps.money.refund(tx, t, refund, amount);
      if (!moved) {
        throw new DomainError('invalid_state', 'the site’s balance does not cover this refund', {
          details: { systemCode: FAILURES.merchant_balance_insufficient.code },
        });
      }
      await this.deps.network.refund(
        tx,
        this.deps.writes.reference(t),
        `${NETWORK_OWNER}:${uuidv7()}`,
        amount,
      );
      const refunded = BigInt(t.refunded_amount) + amount;
      const deposit = await tx
        .updateTable('payments_transactions')
        .set({
          refunded_amount: refunded,
          status: refunded === BigInt(t.captured_amount) ? 'refund-ok' : t.status,
          updated_at: now,
        })
        .where('id', '=', t.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await this.deps.writes.onChange(tx, deposit);
      await this.deps.writes.onChange(tx, refund);
      return refund;
    });
  }

  /** Releases an approved, uncaptured authorization (void-ok), inside the caller's transaction. */
  async voidAuthorization(
    tx: Tx,
    t: TransactionRow,
    reason: string | null,
    message: string | null = null,
  ): Promise<TransactionRow> {
    await this.deps.network.release(tx, this.deps.writes.reference(t));
    const voided = await this.deps.writes.setStatus(tx, t, 'void-ok', { reason, message });
    await this.deps.writes.onChange(tx, voided);
    return voided;
  }
}
