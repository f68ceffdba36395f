// Billing a card on file: the sweep that bills every recurring order that is due (and its retries), the
// merchant's rebill of a managed order, and the end of a deleted customer's subscriptions. Each bill is a
// merchant-initiated charge of the order's stored card; its outcome moves the order (order-lifecycle.ts).

import type { Tx } from '../../platform/db/database.ts';
import { transactEach } from '../../platform/db/transact.ts';
import { DomainError, validationFailed } from '../../platform/errors/domain-error.ts';
import type { ClientAmount } from '../../platform/money/amount.ts';
import type { StoredCardsService } from '../cards/stored-cards-service.ts';
import { publishIpn } from '../events/publish-ipn.ts';
import { boundedAmount } from '../order-amounts.ts';
import { cardAcceptorOf, type MerchantScope } from '../sites.ts';
import { FAILURES } from '../transactions/decline-codes.ts';
import { declined, fiatAsset, type OrderRecords } from './order-records.ts';
import type { OrderRow } from './order-row.ts';
import type { ChargeResult, OrdersDeps } from './order-types.ts';

export type RecurringBillingDeps = Pick<
  OrdersDeps,
  'db' | 'transact' | 'clock' | 'outbox' | 'cards' | 'transactions'
>;

export class RecurringBilling {
  constructor(
    private readonly deps: RecurringBillingDeps,
    private readonly records: OrderRecords,
  ) {}

  /** PATCH /order-rebill/{id}: the merchant charges a managed order's stored card again. */
  async rebill(
    merchant: MerchantScope,
    orderId: number,
    input: { customerId: number; amount: ClientAmount; isSoftDecline?: boolean | undefined },
  ): Promise<ChargeResult> {
    const result = await this.deps.transact(async (tx) => {
      const order = await this.records.lockOwned(tx, merchant, orderId);
      if (order.order_type !== 'managed') {
        throw new DomainError('invalid_state', 'only managed orders are rebilled by the merchant', {
          details: { orderType: order.order_type },
        });
      }
      if (order.customer_id !== input.customerId) {
        throw validationFailed('customerId', 'customerId is not the order’s customer');
      }
      if (order.status !== 'in-progress' && order.status !== 'complete-ok') {
        throw new DomainError('invalid_state', `the order is ${order.status}`, {
          details: { orderStatus: order.status },
        });
      }
      const amount = boundedAmount(input.amount, fiatAsset(order.currency));
      const stored = await this.storedCard(tx, order);
      if (!stored) {
        throw new DomainError('invalid_state', 'the order’s stored card was deleted', {
          details: { systemCode: FAILURES.card_deleted.code },
        });
      }
      const charged = await this.chargeStoredCard(tx, order, stored, amount, input.isSoftDecline ?? false);
      return { order: await this.records.orderRow(tx, order.id), ...charged };
    });
    if (result.transaction.status === 'complete-failed') throw declined(result);
    return result;
  }

  /** A deleted customer's subscriptions end and its mandates go (CustomersService.onDelete). */
  async endForDeletedCustomer(tx: Tx, customerId: number): Promise<void> {
    const open = await tx
      .selectFrom('payments_orders')
      .select('id')
      .where('customer_id', '=', customerId)
      .where('order_type', 'in', ['recurring', 'managed'])
      .where('status', 'not in', ['canceled', 'complete-failed'])
      .forUpdate()
      .execute();
    for (const order of open) {
      const canceled = await this.records.setOrder(tx, order.id, {
        status: 'canceled',
        next_bill_at: null,
        cancel_reason: 'customer-deleted',
      });
      await publishIpn(this.deps.outbox, tx, { order: canceled });
    }
    await this.deps.cards.deleteForCustomer(tx, customerId);
  }

  /** When the next bill (or retry) of any recurring order falls due. */
  async nextBillDue(): Promise<Date | undefined> {
    const row = await this.deps.db
      .selectFrom('payments_orders')
      .select((eb) => eb.fn.min('next_bill_at').as('due'))
      .where('status', 'in', ['in-progress', 'retrying'])
      .executeTakeFirst();
    return row?.due ?? undefined;
  }

  async billDue(): Promise<number> {
    const due = await this.deps.db
      .selectFrom('payments_orders')
      .select('id')
      .where('status', 'in', ['in-progress', 'retrying'])
      .where('next_bill_at', '<=', this.deps.clock.now())
      .orderBy('next_bill_at')
      .limit(200)
      .execute();
    return transactEach(this.deps.transact, due, async (tx, row) => {
      const order = (await tx
        .selectFrom('payments_orders')
        .selectAll()
        .where('id', '=', row.id)
        .where('status', 'in', ['in-progress', 'retrying'])
        .where('next_bill_at', '<=', this.deps.clock.now())
        .forUpdate()
        .skipLocked()
        .executeTakeFirst()) as OrderRow | undefined;
      if (!order) return false;
      // Claimed: the outcome (now, or at reconciliation) sets the next due time.
      await this.records.setOrder(tx, order.id, { next_bill_at: null });
      const stored = await this.storedCard(tx, order);
      if (!stored) {
        // The mandate is gone (card deleted): nothing can be charged again.
        const failed = await this.records.setOrder(tx, order.id, { status: 'complete-failed' });
        await publishIpn(this.deps.outbox, tx, { order: failed });
        return true;
      }
      await this.chargeStoredCard(tx, order, stored, BigInt(order.amount), false);
      return true;
    });
  }

  /** The order's live stored card, or undefined when its mandate was deleted. */
  private storedCard(tx: Tx, order: OrderRow) {
    return order.card_id
      ? this.deps.cards.forCharge(tx, order.merchant_id, order.customer_id, order.card_id)
      : Promise.resolve(undefined);
  }

  private async chargeStoredCard(
    tx: Tx,
    order: OrderRow,
    stored: NonNullable<Awaited<ReturnType<StoredCardsService['forCharge']>>>,
    amount: bigint,
    isSoftDeclineRetry: boolean,
  ) {
    const charged = await this.deps.transactions.charge(tx, {
      order,
      acceptor: await cardAcceptorOf(tx, order.site_id),
      type: 'deposit',
      mode: 'authAndCapture',
      amount,
      instrument: {
        card: stored.card,
        brand: stored.stored.brand,
        kind: stored.stored.kind,
        source: 'stored',
        storedCardId: stored.stored.id,
        holderName: stored.stored.nameOnCard,
        holderCountry: stored.stored.cardHolderCountry,
        holderState: stored.stored.cardHolderState,
        isAuthenticated: false,
      },
      cardId: stored.stored.id,
      initiator: 'merchant',
      isSoftDeclineRetry,
    });
    return { transaction: charged.transaction, cardId: stored.stored.id };
  }
}
