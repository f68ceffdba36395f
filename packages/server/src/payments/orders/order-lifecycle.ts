// An order in step with its transactions: each change of a payment moves the order's status (its own
// payment, or a recurring order's scheduled bill: the next bill, a retry, or the end), sends the IPN and,
// on a capture, the invoice; a card save's proving authorization is voided once approved.

import type { Tx } from '../../platform/db/database.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';
import { HARD_DECLINES } from '../../rails/card-network/port.ts';
import { publishIpn } from '../events/publish-ipn.ts';
import { cardAcceptorOf } from '../sites.ts';
import type { TransactionRow } from '../transactions/transactions-service.ts';
import { addDuration, parseDuration } from './durations.ts';
import { nextBill, type OrderRecords, orderStatusAfter } from './order-records.ts';
import type { OrderRow } from './order-row.ts';
import type { OrdersDeps } from './order-types.ts';

export type OrderLifecycleDeps = Pick<OrdersDeps, 'clock' | 'outbox' | 'transactions' | 'notifier'>;

export class OrderLifecycle {
  constructor(
    private readonly deps: OrderLifecycleDeps,
    private readonly records: OrderRecords,
  ) {}

  /** Keeps the order in step with a transaction that changed, then sends the IPN. */
  async onTransactionChange(tx: Tx, t: TransactionRow, isCapture: boolean): Promise<void> {
    let order = (await tx
      .selectFrom('payments_orders')
      .selectAll()
      .where('id', '=', t.order_id)
      .forUpdate()
      .executeTakeFirstOrThrow()) as OrderRow;
    // A refund, a chargeback and a representment follow a payment; they change no order status.
    if (t.type === 'deposit' || t.type === 'credit') {
      const isScheduledBill =
        order.order_type === 'recurring' && order.anchor_at !== null && t.initiator === 'merchant';
      if (isScheduledBill) order = await this.afterBill(tx, order, t);
      else if (t.initiator === 'customer') order = await this.afterFirstPayment(tx, order, t);
    }
    await publishIpn(this.deps.outbox, tx, { order, transaction: t });
    if (isCapture) await this.sendInvoice(tx, order, t);
    // A card save proves the card with an authorization nobody captures: released in the same step.
    if (order.card_verification && t.type === 'deposit' && t.status === 'in-progress') {
      await this.deps.transactions.voidAuthorization(tx, t, 'card verification');
    }
  }

  /**
   * The invoice of a captured payment, to the order's invoiceEmail: each capture (a recurring order's
   * every bill) has its own, sent by the notifier in the capture's transaction.
   */
  async sendInvoice(tx: Tx, order: OrderRow, t: TransactionRow): Promise<void> {
    if (!order.invoice_email) return;
    const site = (await cardAcceptorOf(tx, order.site_id)).name;
    const reference = order.external_order_id ?? String(order.id);
    const paid = `${formatAmountIn(BigInt(t.captured_amount), t.currency)} ${t.currency}`;
    await this.deps.notifier.send(tx, {
      channel: 'email',
      recipient: order.invoice_email,
      subject: `Invoice for order ${reference} from ${site}`,
      body: [
        `${site} received your payment of ${paid} for order ${reference}${order.description ? ` (${order.description})` : ''}.`,
        `Paid on ${this.deps.clock.now().toISOString().slice(0, 10)} by ${t.card_brand ?? 'card'} ending ${t.card_last4 ?? ''}; transaction ${t.id}, order ${order.id}.`,
      ].join('\n'),
    });
  }

  /** The order's own payment (creation, or after its 3DS challenge or reconciliation). */
  async afterFirstPayment(tx: Tx, order: OrderRow, t: TransactionRow): Promise<OrderRow> {
    if (order.status === 'canceled') return order;
    const status = orderStatusAfter(order, t.status);
    if (status === undefined) return order;
    const patch: Partial<OrderRow> = {};
    if (t.status === 'complete-ok' && order.order_type === 'recurring') {
      const anchor = order.first_bill_date ?? this.deps.clock.now();
      patch.anchor_at = anchor;
      patch.next_bill_at = nextBill(order, anchor, 0);
    }
    if (status === order.status && !patch.anchor_at) return order;
    return this.records.setOrder(tx, order.id, { ...patch, status });
  }

  /** A scheduled recurring bill ended: schedule the next one, a retry, or stop. */
  async afterBill(tx: Tx, order: OrderRow, t: TransactionRow): Promise<OrderRow> {
    if (order.status === 'canceled' || !order.anchor_at) return order;
    if (t.status === 'complete-ok') {
      const billsDone = order.bills_done + 1;
      return this.records.setOrder(tx, order.id, {
        status: 'in-progress',
        bills_done: billsDone,
        retries_done: 0,
        next_bill_at: nextBill(order, order.anchor_at, billsDone),
      });
    }
    if (t.status !== 'complete-failed') return order;
    const retries = (order.retry_payment ?? []).map((d) => parseDuration(d)).filter((d) => d !== undefined);
    const retry = retries[order.retries_done];
    const isHard = HARD_DECLINES.has(t.decline_reason as never);
    if (isHard || !retry) {
      return this.records.setOrder(tx, order.id, { status: 'complete-failed', next_bill_at: null });
    }
    return this.records.setOrder(tx, order.id, {
      status: 'retrying',
      retries_done: order.retries_done + 1,
      next_bill_at: addDuration(this.deps.clock.now(), retry),
    });
  }
}
