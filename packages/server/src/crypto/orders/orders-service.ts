// Crypto orders (docs/crypto.md; shapes and statuses from docs/wire-compatibility.md). The store creates an
// order and sends the buyer to the hosted page; the buyer picks a currency and network and gets a
// 60-second quote and a deposit address; the chain rail reports transfers seen and confirmed.
//
// Money is followed transfer by transfer (crypto_deposits): each is valued in the order's currency
// when seen, at the buyer's quote while it is valid or at a fresh rate otherwise (`requoted`), and held
// in the ledger from the chain's clearing account to the store's balance until confirmed. Confirmed
// value reaching the total makes the order `paid`; less leaves it `pending` (partial) until it expires;
// anything arriving after the order ended is `late`. Nothing received is ever dropped: every confirmed
// transfer belongs to the order's payment, which the store can refund.
import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import { addMonths, type Clock } from '../../platform/clock/clock.ts';
import type { Db, Executor, Tx } from '../../platform/db/database.ts';
import { preparedStatement } from '../../platform/db/prepared.ts';
import type {
  CryptoDepositsTable,
  CryptoLineItem,
  CryptoOrderCustomer,
  CryptoOrderStatus,
  CryptoOrdersTable,
  CryptoPaymentsTable,
} from '../../platform/db/schema.ts';
import { StatementBatch } from '../../platform/db/statement-batch.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, invalidState, notFound } from '../../platform/errors/domain-error.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import { formatAmount } from '../../platform/money/amount.ts';
import { convert, convertBack } from '../../platform/money/rates.ts';
import type { Store, StoresService } from '../../platform/tenants/stores-service.ts';
import type { ChainNews, ChainRail, ChainTransfer } from '../../rails/chain/port.ts';
import type { FxRates } from '../../rails/fx/port.ts';
import { type CryptoEventType, publishCryptoEvent } from '../events/publish-crypto-event.ts';
import { assetOf, type Quote, type QuotesService } from '../quotes/quotes-service.ts';
import { moveOrder } from './order-status.ts';
import type { StoreSettlement } from './store-settlement.ts';

const INSERT_ORDER = `
  INSERT INTO crypto_orders (id, store_id, reference, status, currency, total, amount_details, line_items, customer,
    return_url, cancel_url, callback_url, expires_at, created_at, updated_at)
  VALUES ($1, $2, $3, 'pending', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)`;

/** How long a buyer has to pay when the store does not say (BTCPay Server's default is 15 minutes) */
export const DEFAULT_ORDER_TTL_SECONDS = 15 * 60;
export const MIN_ORDER_TTL_SECONDS = 5 * 60;
export const MAX_ORDER_TTL_SECONDS = 7 * 24 * 3600;
export const ORDER_REFERENCE = 'crypto-order';
/** Spec refund rule 4: payments older than this are not refundable */
export const REFUND_AGE_LIMIT_MONTHS = 3;

export interface OrderInput {
  reference: string;
  currency: string;
  total: bigint;
  details: Record<string, string> | null;
  returnUrl: string;
  cancelUrl: string | null;
  callbackUrl: string | null;
  lineItems: CryptoLineItem[];
  customer: CryptoOrderCustomer;
  expiresAt: Date | null;
  exchangeRateId: string | null;
}

export interface Deposit {
  transactionHash: string;
  asset: string;
  network: string;
  amount: bigint;
  rateE18: bigint;
  fiatValue: bigint;
  requoted: boolean;
  late: boolean;
  offramp: boolean;
  /** `reverted`: the block that held it was replaced (a reorg) and no block holds it now */
  status: 'detected' | 'confirmed' | 'reverted';
  /** How many times a block included it (more than one after a reorg) */
  inclusions: number;
  confirmations: number;
  confirmationsRequired: number;
  detectedAt: Date;
  confirmedAt: Date | null;
}

export interface Payment {
  id: string;
  currency: string;
  total: bigint;
  asset: string;
  network: string;
  cryptoAmount: bigint;
  rateE18: bigint;
  offramp: boolean;
  createdAt: Date;
}

export interface PaymentOption {
  asset: string;
  network: string;
  address: string;
  quote: Quote;
  /** What the buyer still has to send, at the quote */
  cryptoDue: bigint;
}

export interface Order {
  id: string;
  storeId: string;
  reference: string;
  status: CryptoOrderStatus;
  currency: string;
  total: bigint;
  details: Record<string, string> | null;
  lineItems: CryptoLineItem[];
  customer: CryptoOrderCustomer;
  returnUrl: string;
  cancelUrl: string | null;
  callbackUrl: string | null;
  paymentLocked: boolean;
  payAsset: string | null;
  payNetwork: string | null;
  depositAddress: string | null;
  quoteId: string | null;
  expiresAt: Date;
  createdAt: Date;
  updatedAt: Date;
  redirectUrl: string;
  /** Confirmed value, detected-but-unconfirmed value, still due, paid beyond the total */
  amounts: { paid: bigint; pending: bigint; due: bigint; over: bigint };
  deposits: Deposit[];
  payment: Payment | null;
}

export interface OrdersDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  outbox: Outbox;
  ledger: Ledger;
  chain: ChainRail;
  fx: FxRates;
  quotes: QuotesService;
  stores: StoresService;
  settlement: StoreSettlement;
  publicUrl: string;
}

export class OrdersService {
  constructor(private readonly deps: OrdersDeps) {}

  async create(store: Store, input: OrderInput): Promise<Order> {
    const now = this.deps.clock.now();
    const expiresAt = input.expiresAt ?? new Date(now.getTime() + DEFAULT_ORDER_TTL_SECONDS * 1000);
    const ttl = (expiresAt.getTime() - now.getTime()) / 1000;
    if (ttl < MIN_ORDER_TTL_SECONDS || ttl > MAX_ORDER_TTL_SECONDS)
      throw new DomainError('validation_failed', 'expires_at must be between 5 minutes and 7 days from now', {
        field: 'data.attributes.order.expires_at',
      });
    const row: Selectable<CryptoOrdersTable> = {
      id: randomUUID(),
      seq: '0',
      store_id: store.id,
      reference: input.reference,
      status: 'pending',
      currency: input.currency,
      total: input.total.toString(),
      amount_details: input.details,
      line_items: input.lineItems,
      customer: input.customer,
      return_url: input.returnUrl,
      cancel_url: input.cancelUrl,
      callback_url: input.callbackUrl,
      pay_asset: null,
      pay_network: null,
      deposit_address: null,
      quote_id: null,
      payment_locked: false,
      payment_id: null,
      expires_at: expiresAt,
      created_at: now,
      updated_at: now,
    };
    const insert = preparedStatement('crypto_order_insert', INSERT_ORDER, [
      row.id,
      row.store_id,
      row.reference,
      row.currency,
      row.total,
      JSON.stringify(row.amount_details),
      JSON.stringify(row.line_items),
      JSON.stringify(row.customer),
      row.return_url,
      row.cancel_url,
      row.callback_url,
      expiresAt,
      now,
    ]);
    // A new order is one row: one statement, committing by itself, answered from what was written (with
    // an Idempotency-Key, sent with the key's answer: nothing in it can refuse).
    if (!input.exchangeRateId) {
      const batch = new StatementBatch();
      batch.add({ sql: INSERT_ORDER, parameters: insert.parameters });
      await batch.run(this.deps.db, { deferrable: true });
      return this.toOrder(row, [], undefined);
    }
    const exchangeRateId = input.exchangeRateId;
    return this.deps.transact(async (tx) => {
      await tx.executeQuery(insert);
      // A store's quote locks the rate of its currency for this order while the quote lasts.
      const quote = await this.deps.quotes.claim(tx, store.id, exchangeRateId, {
        orderId: row.id,
        currency: input.currency,
        field: 'data.attributes.order.exchange_rate_id',
      });
      await tx
        .updateTable('crypto_orders')
        .set({ pay_asset: quote.from, quote_id: quote.id })
        .where('id', '=', row.id)
        .execute();
      return this.toOrder({ ...row, pay_asset: quote.from, quote_id: quote.id }, [], undefined);
    });
  }

  async get(store: Store, id: string): Promise<Order> {
    return this.load(this.deps.db, id, store.id);
  }

  async list(
    store: Store,
    query: { status?: CryptoOrderStatus; afterSeq?: bigint; limit: number },
  ): Promise<{ orders: Order[]; nextSeq: bigint | null }> {
    let q = this.deps.db
      .selectFrom('crypto_orders')
      .select(['id', 'seq'])
      .where('store_id', '=', store.id)
      .orderBy('seq', 'desc')
      .limit(query.limit + 1);
    if (query.status) q = q.where('status', '=', query.status);
    if (query.afterSeq !== undefined) q = q.where('seq', '<', query.afterSeq.toString());
    const rows = await q.execute();
    const page = rows.slice(0, query.limit);
    const orders = await Promise.all(page.map((r) => this.load(this.deps.db, r.id, store.id)));
    const last = page.at(-1);
    return { orders, nextSeq: rows.length > query.limit && last ? BigInt(last.seq) : null };
  }

  /** The hosted page's view: the order id in the URL is the buyer's capability. */
  async forBuyer(id: string): Promise<{ order: Order; store: Store; option: PaymentOption | null }> {
    const order = await this.load(this.deps.db, id);
    const store = await this.deps.stores.get(this.deps.db, order.storeId);
    return { order, store, option: await this.currentOption(this.deps.db, order) };
  }

  /**
   * The buyer picks a currency and network: a deposit address and a fresh 60-second quote (the store's
   * locked quote is reused while it lasts). Once a transfer was seen the choice cannot change.
   */
  async choose(id: string, input: { asset: string; network: string }): Promise<PaymentOption> {
    return this.deps.transact(async (tx) => {
      const order = await this.load(tx, id, undefined, true);
      if (order.status !== 'pending')
        throw invalidState(`the order is ${order.status}`, { status: order.status });
      if (this.deps.clock.now() >= order.expiresAt)
        throw invalidState('the order has expired', { status: 'expired' });
      const store = await this.deps.stores.get(tx, order.storeId);
      if (!store.currencies.some((c) => c.currency === input.asset && c.network === input.network))
        throw new DomainError(
          'validation_failed',
          `${input.asset} on ${input.network} is not accepted by this store`,
          {
            field: 'currency',
          },
        );
      if (order.paymentLocked && (order.payAsset !== input.asset || order.payNetwork !== input.network))
        throw invalidState(
          `a payment in ${order.payAsset} on ${order.payNetwork} was already seen; the currency cannot change`,
        );
      const current = order.quoteId ? await this.deps.quotes.find(tx, order.quoteId) : undefined;
      const quote =
        current && current.from === input.asset && this.deps.quotes.isValid(current)
          ? current
          : await this.deps.quotes.issue(tx, order.storeId, {
              kind: 'crypto',
              from: input.asset,
              to: order.currency,
              orderId: order.id,
            });
      const address = await this.deps.chain.depositAddress(tx, {
        network: input.network,
        asset: input.asset,
        reference: `${ORDER_REFERENCE}:${order.id}`,
        accountKey: store.evmAccountKey,
      });
      await tx
        .updateTable('crypto_orders')
        .set({
          pay_asset: input.asset,
          pay_network: input.network,
          deposit_address: address,
          quote_id: quote.id,
          updated_at: this.deps.clock.now(),
        })
        .where('id', '=', order.id)
        .execute();
      return {
        asset: input.asset,
        network: input.network,
        address,
        quote,
        cryptoDue: this.cryptoDue(order, quote),
      };
    });
  }

  /** The buyer gives up on the hosted page before paying: `canceled`, and the page returns to the store. */
  /** The buyer cancels on the pay page; answers the order and the cancel event's id (none when it was already canceled). */
  async cancelByBuyer(id: string): Promise<{ order: Order; eventId: string | undefined }> {
    return this.deps.transact(async (tx) => {
      const order = await this.load(tx, id, undefined, true);
      if (order.status === 'canceled') return { order, eventId: undefined };
      if (order.status !== 'pending' || order.paymentLocked)
        throw invalidState(
          order.paymentLocked ? 'a payment was already sent for this order' : `the order is ${order.status}`,
          { status: order.status },
        );
      await this.setStatus(tx, order, 'canceled');
      const { eventId } = await this.publish(tx, order, 'ORDER.PAYMENT.CANCELLED', { status: 'canceled' });
      return { order: await this.load(tx, id), eventId };
    });
  }

  /**
   * Where a buyer paying in this currency and network sends money now, and how much is due: for a
   * pending order the option is picked (or its quote refreshed) as the hosted page would; for an ended
   * order only the address already shown is known (a transfer to it is late).
   */
  async paymentTarget(
    id: string,
    input: { asset: string; network: string },
  ): Promise<{ address: string; cryptoDue: bigint }> {
    const order = await this.load(this.deps.db, id);
    if (order.status === 'pending') {
      const option = await this.choose(id, input);
      return { address: option.address, cryptoDue: option.cryptoDue };
    }
    if (order.payAsset !== input.asset || order.payNetwork !== input.network || !order.depositAddress)
      throw invalidState(
        `the order is ${order.status} and no ${input.asset} on ${input.network} address was shown for it`,
      );
    return { address: order.depositAddress, cryptoDue: 0n };
  }

  /** What the chain rail reports about transfers to this API's deposit addresses. */
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
      const order = await this.load(tx, row.id, undefined, true);
      if (order.status !== 'pending' || order.amounts.pending > 0n) return false;
      await this.expire(tx, order);
      return true;
    });
  }

  // --- transfers -------------------------------------------------------------------------------------

  private async depositSeen(tx: Tx, orderId: string, transfer: ChainTransfer): Promise<void> {
    const order = await this.load(tx, orderId, undefined, true);
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
        status: 'detected',
        confirmations_required: transfer.confirmationsRequired,
        ledger_hold_id: hold.id,
        detected_at: now,
      })
      .execute();
    if (!late) {
      await tx
        .updateTable('crypto_orders')
        .set({ payment_locked: true, updated_at: now })
        .where('id', '=', orderId)
        .execute();
    }
    await this.publish(
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
    const order = await this.load(tx, orderId, undefined, true);
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
    const updated = await this.load(tx, orderId);
    await this.publish(tx, updated, 'ORDER.PAYMENT.REVERTED', {
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
    await this.publish(
      tx,
      order,
      'ORDER.PAYMENT.DETECTED',
      this.transferFacts(transfer, deposit.fiatValue, order.currency),
    );
  }

  private async depositConfirmed(tx: Tx, orderId: string, transfer: ChainTransfer): Promise<void> {
    const order = await this.load(tx, orderId, undefined, true);
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
    const updated = await this.load(tx, orderId);
    // Statuses never go back: a transfer confirming once the order has left `pending` (sent after it
    // ended, or sent in time but confirming after the order was paid or refunded) is a late payment,
    // recorded in the order's payment, and the order stays where it is.
    if (deposit.late || updated.status !== 'pending') {
      const payment = await this.recordPayment(tx, updated);
      await this.publish(tx, updated, 'ORDER.PAYMENT.LATE', { ...facts, payment_id: payment.id });
      return;
    }
    if (updated.amounts.paid >= updated.total) {
      const payment = await this.recordPayment(tx, updated);
      await this.setStatus(tx, updated, 'paid');
      await this.publish(tx, updated, 'ORDER.PAYMENT.RECEIVED', {
        ...facts,
        payment_id: payment.id,
        status: 'paid',
        paid_amount: formatAmount(updated.amounts.paid, assetOf(updated.currency)),
        over_amount: formatAmount(updated.amounts.over, assetOf(updated.currency)),
      });
      return;
    }
    await this.publish(tx, updated, 'ORDER.PAYMENT.PARTIAL', {
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
    await this.setStatus(tx, order, 'expired');
    await this.publish(tx, order, 'ORDER.PAYMENT.CANCELLED', {
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
    const id = randomUUID();
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

  private setStatus(tx: Tx, order: Order, status: CryptoOrderStatus): Promise<void> {
    return moveOrder(tx, order.id, status, this.deps.clock.now());
  }

  private async publish(
    tx: Tx,
    order: Order,
    eventType: CryptoEventType,
    facts: Record<string, string>,
  ): Promise<{ eventId: string }> {
    return publishCryptoEvent(this.deps.outbox, tx, {
      storeId: order.storeId,
      callbackUrl: order.callbackUrl,
      eventType,
      resource: {
        amount: formatAmount(order.total, assetOf(order.currency)),
        currency: order.currency,
        reference: order.reference,
        order_id: order.id,
        status: order.status,
        ...facts,
      },
    });
  }

  /**
   * Whether the store could propose a refund now (refund rules 1, 4 and 5; rule 2 shows in the status:
   * an order with an active refund is refund_proposed, refund_processing or refund_completed).
   */
  isRefundable(order: Order, store: Store): boolean {
    const payment = order.payment;
    return (
      payment !== null &&
      store.refundsEnabled &&
      !payment.offramp &&
      ['paid', 'expired', 'canceled'].includes(order.status) &&
      addMonths(payment.createdAt, REFUND_AGE_LIMIT_MONTHS) >= this.deps.clock.now()
    );
  }

  // --- reading ---------------------------------------------------------------------------------------

  private cryptoDue(order: Order, quote: Quote): bigint {
    const due = order.amounts.due > 0n ? order.amounts.due : 0n;
    return convertBack(due, assetOf(order.currency), assetOf(quote.from), quote.rateE18, 'up');
  }

  /**
   * The option the buyer picked, with its quote (which may have expired: the page then asks again).
   * After a transfer was sent the choice is fixed, and what is still due is priced as the next transfer
   * will be valued: at the quote while it lasts, then at the rate of the moment.
   */
  async currentOption(db: Executor, order: Order): Promise<PaymentOption | null> {
    if (!order.payAsset || !order.payNetwork || !order.depositAddress || !order.quoteId) return null;
    const quote = await this.deps.quotes.find(db, order.quoteId);
    if (!quote) return null;
    const isQuoteLive = this.deps.clock.now() <= quote.expiresAt;
    const rateE18 =
      order.paymentLocked && !isQuoteLive
        ? await this.deps.fx.rate(db, quote.from, order.currency)
        : quote.rateE18;
    return {
      asset: order.payAsset,
      network: order.payNetwork,
      address: order.depositAddress,
      quote,
      cryptoDue: this.cryptoDue(order, { ...quote, rateE18 }),
    };
  }

  async load(db: Executor, id: string, storeId?: string, forUpdate = false): Promise<Order> {
    let q = db.selectFrom('crypto_orders').selectAll().where('id', '=', id);
    if (storeId !== undefined) q = q.where('store_id', '=', storeId);
    const row = await (forUpdate ? q.forUpdate() : q).executeTakeFirst();
    if (!row) throw notFound('order');
    const deposits = await db
      .selectFrom('crypto_deposits')
      .selectAll()
      .where('order_id', '=', id)
      .orderBy('seq')
      .execute();
    const payment = row.payment_id
      ? await db.selectFrom('crypto_payments').selectAll().where('id', '=', row.payment_id).executeTakeFirst()
      : undefined;
    // How far each transfer under way has confirmed is the chain's to say.
    const confirming = deposits.filter((d) => d.status === 'detected');
    const counts = await this.deps.chain.confirmations(
      db,
      confirming.map((d) => ({
        id: d.id,
        network: d.network,
        asset: d.asset,
        broadcastAt: d.detected_at,
        confirmationsRequired: d.confirmations_required,
      })),
      this.deps.clock.now(),
    );
    const confirmations = new Map(confirming.map((d, i) => [d.id, counts[i] ?? 0]));
    return this.toOrder(row, deposits, payment, confirmations);
  }

  private toOrder(
    row: Selectable<CryptoOrdersTable>,
    depositRows: Selectable<CryptoDepositsTable>[],
    paymentRow: Selectable<CryptoPaymentsTable> | undefined,
    confirmations: ReadonlyMap<string, number> = new Map(),
  ): Order {
    const deposits = depositRows.map((d): Deposit => {
      const confirmationsRequired = d.confirmations_required;
      return {
        transactionHash: d.id,
        asset: d.asset,
        network: d.network,
        amount: BigInt(d.amount),
        rateE18: BigInt(d.rate_e18),
        fiatValue: BigInt(d.fiat_value),
        requoted: d.requoted,
        late: d.late,
        offramp: d.offramp,
        status: d.status,
        inclusions: d.inclusions,
        confirmationsRequired,
        confirmations: d.status === 'confirmed' ? confirmationsRequired : (confirmations.get(d.id) ?? 0),
        detectedAt: d.detected_at,
        confirmedAt: d.confirmed_at,
      };
    });
    const total = BigInt(row.total);
    const sum = (status: Deposit['status']) =>
      deposits.filter((d) => d.status === status).reduce((s, d) => s + d.fiatValue, 0n);
    const paid = sum('confirmed');
    const pending = sum('detected');
    const due = total - paid - pending;
    return {
      id: row.id,
      storeId: row.store_id,
      reference: row.reference,
      status: row.status,
      currency: row.currency,
      total,
      details: row.amount_details,
      lineItems: row.line_items,
      customer: row.customer,
      returnUrl: row.return_url,
      cancelUrl: row.cancel_url,
      callbackUrl: row.callback_url,
      paymentLocked: row.payment_locked,
      payAsset: row.pay_asset,
      payNetwork: row.pay_network,
      depositAddress: row.deposit_address,
      quoteId: row.quote_id,
      expiresAt: row.expires_at,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      // Utrust's WooCommerce plugin reads the order's uuid from the redirect URL's query (docs/crypto.md).
      redirectUrl: `${this.deps.publicUrl}/crypto/pay/${row.id}?uuid=${row.id}`,
      amounts: { paid, pending, due: due > 0n ? due : 0n, over: paid > total ? paid - total : 0n },
      deposits,
      payment: paymentRow
        ? {
            id: paymentRow.id,
            currency: paymentRow.currency,
            total: BigInt(paymentRow.total),
            asset: paymentRow.asset,
            network: paymentRow.network,
            cryptoAmount: BigInt(paymentRow.crypto_amount),
            rateE18: BigInt(paymentRow.rate_e18),
            offramp: paymentRow.offramp,
            createdAt: paymentRow.created_at,
          }
        : null,
    };
  }
}

/** The store's balance in an asset: bounded, so payouts can never spend what was not received. */
export async function storeBalance(
  ledger: Ledger,
  tx: Executor,
  storeId: string,
  asset: string,
): Promise<string> {
  const account = await ledger.openAccount(tx, {
    ownerType: 'crypto_store',
    ownerId: storeId,
    asset,
    purpose: 'balance',
    isBounded: true,
  });
  return account.id;
}
