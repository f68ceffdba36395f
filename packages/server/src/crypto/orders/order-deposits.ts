// A crypto order's money, transfer by transfer, as the chain rail reports it (seen, confirmed, reverted,
// included again): each valued and held in the ledger, the payment recorded once confirmed value reaches
// the total, and the sweep that ends orders whose time is up as `expired`.
import type { Tx } from '../../platform/db/database.ts';
import { transactEach } from '../../platform/db/transact.ts';
import { uuidv7 } from '../../platform/ids.ts';
import { formatAmount } from '../../platform/money/amount.ts';
import { convert } from '../../platform/money/rates.ts';
import type { ChainNews, ChainTransfer } from '../../rails/chain/port.ts';
import { assetOf } from '../quotes/quotes-service.ts';
import { type OrderRecords, type OrdersDeps, storeBalance } from './order-records.ts';
import { type Deposit, ORDER_REFERENCE, type Order, type Payment } from './order-types.ts';
import { screenPayer } from './payer-screening.ts';

export class OrderDeposits {
  constructor(
    private readonly deps: OrdersDeps,
    private readonly records: OrderRecords,
  ) {}

  async onChain(tx: Tx, news: ChainNews): Promise<void> {
    const orderId = news.transfer.reference.slice(ORDER_REFERENCE.length + 1);
    if (news.kind === 'seen') await this.depositSeen(tx, orderId, news.transfer);
    else if (news.kind === 'confirmed') await this.depositConfirmed(tx, orderId, news.transfer);
    else await this.depositReverted(tx, orderId, news.transfer);
  }

  /** Sweep: orders whose time is up and which wait for no confirmation end as `expired`. */
  async expireDue(): Promise<number> {
    const due = await this.deps.db
      .selectFrom('crypto_orders as o')
      .select('o.id')
      .where('o.status', '=', 'pending')
      .where('o.expires_at', '<=', this.deps.clock.now())
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('crypto_deposits as d')
              .select('d.id')
              .whereRef('d.order_id', '=', 'o.id')
              .where('d.status', '=', 'detected'),
          ),
        ),
      )
      .orderBy('o.expires_at')
      .limit(200)
      .execute();
    return transactEach(this.deps.transact, due, async (tx, row) => {
      const order = await this.records.load(tx, row.id, undefined, true);
      if (order.status !== 'pending' || order.amounts.pending > 0n) return false;
      await this.expire(tx, order);
      return true;
    });
  }

  // --- transfers -------------------------------------------------------------------------------------

  private async depositSeen(tx: Tx, orderId: string, transfer: ChainTransfer): Promise<void> {
    const order = await this.records.load(tx, orderId, undefined, true);
    const known = order.deposits.find((d) => d.transactionHash === transfer.id);
    if (known?.status === 'reverted') return this.depositIncludedAgain(tx, order, known, transfer);
    if (known) return;
    const now = this.deps.clock.now();
    const late = order.status !== 'pending';
    const quote = order.quoteId ? await this.deps.quotes.find(tx, order.quoteId) : undefined;
    const quoted = !late && quote && quote.from === transfer.asset && now <= quote.expiresAt;
    const rateE18 = quoted ? quote.rateE18 : await this.deps.fx.rate(tx, transfer.asset, order.currency);
    const fiatValue = convert(
      transfer.amount,
      assetOf(transfer.asset),
      assetOf(order.currency),
      rateE18,
      'down',
    );
    const [clearing, balance] = await this.ledgerAccounts(tx, order.storeId, transfer);
    const hold = await this.deps.ledger.hold(tx, {
      operationId: `crypto-deposit:${transfer.id}`,
      debitAccountId: clearing,
      creditAccountId: balance,
      amount: transfer.amount,
      metadata: { orderId, transactionHash: transfer.id },
    });
    await tx
      .insertInto('crypto_deposits')
      .values({
        id: transfer.id,
        order_id: orderId,
        store_id: order.storeId,
        asset: transfer.asset,
        network: transfer.network,
        amount: transfer.amount,
        rate_e18: rateE18,
        fiat_value: fiatValue,
        requoted: !quoted,
        late,
        offramp: transfer.offramp,
        sender: transfer.sender,
        status: 'detected',
        confirmations_required: transfer.confirmationsRequired,
        ledger_hold_id: hold.id,
        detected_at: now,
      })
      .execute();
    await screenPayer(this.deps.compliance, tx, order, transfer);
    if (!late) {
      await tx
        .updateTable('crypto_orders')
        .set({ payment_locked: true, updated_at: now })
        .where('id', '=', orderId)
        .execute();
    }
    await this.records.publish(
      tx,
      order,
      'ORDER.PAYMENT.DETECTED',
      this.transferFacts(transfer, fiatValue, order.currency),
    );
  }

  /**
   * A reorg dropped the block that held an unconfirmed transfer: its value is no longer on its way. The
   * hold is released, the order owes it again, and the store hears so. (A confirmed transfer is final.)
   */
  private async depositReverted(tx: Tx, orderId: string, transfer: ChainTransfer): Promise<void> {
    const order = await this.records.load(tx, orderId, undefined, true);
    const deposit = order.deposits.find((d) => d.transactionHash === transfer.id);
    if (deposit?.status !== 'detected') return;
    const row = await tx
      .selectFrom('crypto_deposits')
      .select('ledger_hold_id')
      .where('id', '=', transfer.id)
      .executeTakeFirstOrThrow();
    await this.deps.ledger.voidHold(tx, row.ledger_hold_id);
    await tx
      .updateTable('crypto_deposits')
      .set({ status: 'reverted' })
      .where('id', '=', transfer.id)
      .execute();
    const updated = await this.records.load(tx, orderId);
    await this.records.publish(tx, updated, 'ORDER.PAYMENT.REVERTED', {
      ...this.transferFacts(transfer, deposit.fiatValue, order.currency),
      due_amount: formatAmount(updated.amounts.due, assetOf(updated.currency)),
    });
  }

  /**
   * A reverted transfer is in a block again: held again at the value it had when first seen (the buyer
   * sent it in time; a reorg is not theirs to pay for).
   */
  private async depositIncludedAgain(
    tx: Tx,
    order: Order,
    deposit: Deposit,
    transfer: ChainTransfer,
  ): Promise<void> {
    const [clearing, balance] = await this.ledgerAccounts(tx, order.storeId, transfer);
    const inclusion = deposit.inclusions + 1;
    const hold = await this.deps.ledger.hold(tx, {
      operationId: `crypto-deposit:${transfer.id}:${inclusion}`,
      debitAccountId: clearing,
      creditAccountId: balance,
      amount: transfer.amount,
      metadata: { orderId: order.id, transactionHash: transfer.id },
    });
    await tx
      .updateTable('crypto_deposits')
      .set({ status: 'detected', inclusions: inclusion, ledger_hold_id: hold.id })
      .where('id', '=', transfer.id)
      .execute();
    await this.records.publish(
      tx,
      order,
      'ORDER.PAYMENT.DETECTED',
      this.transferFacts(transfer, deposit.fiatValue, order.currency),
    );
  }

  private async depositConfirmed(tx: Tx, orderId: string, transfer: ChainTransfer): Promise<void> {
    const order = await this.records.load(tx, orderId, undefined, true);
    const deposit = order.deposits.find((d) => d.transactionHash === transfer.id);
    if (!deposit || deposit.status === 'confirmed') return;
    const row = await tx
      .selectFrom('crypto_deposits')
      .select('ledger_hold_id')
      .where('id', '=', transfer.id)
      .executeTakeFirstOrThrow();
    await this.deps.ledger.postHold(tx, {
      operationId: `crypto-deposit-confirm:${transfer.id}`,
      holdId: row.ledger_hold_id,
    });
    const store = await this.deps.stores.get(tx, order.storeId);
    await this.deps.settlement.transferConfirmed(tx, {
      storeId: order.storeId,
      transferId: transfer.id,
      fiatValue: deposit.fiatValue,
      currency: order.currency,
      ownWallet: store.evmAccountKey !== null && this.deps.chain.isRealChain(transfer.network),
    });
    await tx
      .updateTable('crypto_deposits')
      .set({ status: 'confirmed', confirmed_at: this.deps.clock.now() })
      .where('id', '=', transfer.id)
      .execute();
    const facts = this.transferFacts(transfer, deposit.fiatValue, order.currency);
    const updated = await this.records.load(tx, orderId);
    // Statuses never go back: a transfer confirming once the order has left `pending` (sent after it
    // ended, or sent in time but confirming after the order was paid or refunded) is a late payment,
    // recorded in the order's payment, and the order stays where it is.
    if (deposit.late || updated.status !== 'pending') {
      const payment = await this.recordPayment(tx, updated);
      await this.records.publish(tx, updated, 'ORDER.PAYMENT.LATE', { ...facts, payment_id: payment.id });
      return;
    }
    if (updated.amounts.paid >= updated.total) {
      const payment = await this.recordPayment(tx, updated);
      await this.records.setStatus(tx, updated, 'paid');
      await this.records.publish(tx, updated, 'ORDER.PAYMENT.RECEIVED', {
        ...facts,
        payment_id: payment.id,
        status: 'paid',
        paid_amount: formatAmount(updated.amounts.paid, assetOf(updated.currency)),
        over_amount: formatAmount(updated.amounts.over, assetOf(updated.currency)),
      });
      return;
    }
    await this.records.publish(tx, updated, 'ORDER.PAYMENT.PARTIAL', {
      ...facts,
      paid_amount: formatAmount(updated.amounts.paid, assetOf(updated.currency)),
      due_amount: formatAmount(updated.amounts.due, assetOf(updated.currency)),
    });
    // The time ran out while this transfer confirmed: the order ends with what arrived.
    if (this.deps.clock.now() >= updated.expiresAt && updated.amounts.pending === 0n)
      await this.expire(tx, updated);
  }

  /**
   * The order's time is up. Money that arrived is not cancelled: it stays with the store as the order's
   * payment (refundable), and the event says so (`funds: kept_for_refund`, the amount and payment id).
   */
  private async expire(tx: Tx, order: Order): Promise<void> {
    const payment = order.amounts.paid > 0n ? await this.recordPayment(tx, order) : null;
    await this.records.setStatus(tx, order, 'expired');
    await this.records.publish(tx, order, 'ORDER.PAYMENT.CANCELLED', {
      status: 'expired',
      ...(payment
        ? {
            funds: 'kept_for_refund',
            payment_id: payment.id,
            paid_amount: formatAmount(order.amounts.paid, assetOf(order.currency)),
            due_amount: formatAmount(order.amounts.due, assetOf(order.currency)),
          }
        : { funds: 'none_received' }),
    });
  }

  /** Creates or updates the order's one payment from its confirmed transfers. */
  private async recordPayment(tx: Tx, order: Order): Promise<Payment> {
    const confirmed = order.deposits.filter((d) => d.status === 'confirmed');
    const first = confirmed[0];
    if (!first) throw new Error('a payment needs a confirmed transfer');
    const same = confirmed.filter((d) => d.asset === first.asset);
    const now = this.deps.clock.now();
    const values = {
      total: confirmed.reduce((sum, d) => sum + d.fiatValue, 0n),
      crypto_amount: same.reduce((sum, d) => sum + d.amount, 0n),
      offramp: confirmed.some((d) => d.offramp),
      updated_at: now,
    };
    if (order.payment) {
      await tx.updateTable('crypto_payments').set(values).where('id', '=', order.payment.id).execute();
      return {
        ...order.payment,
        total: values.total,
        cryptoAmount: values.crypto_amount,
        offramp: values.offramp,
      };
    }
    const id = uuidv7();
    await tx
      .insertInto('crypto_payments')
      .values({
        id,
        order_id: order.id,
        store_id: order.storeId,
        currency: order.currency,
        asset: first.asset,
        network: first.network,
        rate_e18: first.rateE18,
        created_at: now,
        ...values,
      })
      .execute();
    await tx.updateTable('crypto_orders').set({ payment_id: id }).where('id', '=', order.id).execute();
    return {
      id,
      currency: order.currency,
      total: values.total,
      asset: first.asset,
      network: first.network,
      cryptoAmount: values.crypto_amount,
      rateE18: first.rateE18,
      offramp: values.offramp,
      createdAt: now,
    };
  }

  private async ledgerAccounts(tx: Tx, storeId: string, transfer: ChainTransfer): Promise<[string, string]> {
    const clearing = await this.deps.ledger.openAccount(tx, {
      ownerType: 'crypto_chain',
      ownerId: transfer.network,
      asset: transfer.asset,
      purpose: 'clearing',
      isBounded: false,
    });
    const balance = await storeBalance(this.deps.ledger, tx, storeId, transfer.asset);
    return [clearing.id, balance];
  }

  private transferFacts(
    transfer: ChainTransfer,
    fiatValue: bigint,
    currency: string,
  ): Record<string, string> {
    return {
      transaction_hash: transfer.id,
      crypto_currency: transfer.asset,
      network: transfer.network,
      crypto_amount: formatAmount(transfer.amount, assetOf(transfer.asset)),
      transfer_value: formatAmount(fiatValue, assetOf(currency)),
    };
  }
}
