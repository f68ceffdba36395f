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
import type { Selectable } from 'kysely';
import { addMonths } from '../../platform/clock/clock.ts';
import type { Tx } from '../../platform/db/database.ts';
import { ownedBy } from '../../platform/db/owner-hash.ts';
import { preparedStatement } from '../../platform/db/prepared.ts';
import type { CryptoOrderStatus, CryptoOrdersTable } from '../../platform/db/schema.ts';
import { StatementBatch, type StatementPart } from '../../platform/db/statement-batch.ts';
import { DomainError, invalidState } from '../../platform/errors/domain-error.ts';
import { uuidv7 } from '../../platform/ids.ts';
import type { Verdict } from '../../platform/risk/risk-engine.ts';
import { isVelocityGuardFailure } from '../../platform/risk/velocity-guard.ts';
import type { Store } from '../../platform/tenants/stores-service.ts';
import { CryptoRisk } from '../risk/crypto-risk.ts';
import { OrderDeposits } from './order-deposits.ts';
import { OrderRecords, type OrdersDeps } from './order-records.ts';
import {
  DEFAULT_ORDER_TTL_SECONDS,
  MAX_ORDER_TTL_SECONDS,
  MIN_ORDER_TTL_SECONDS,
  ORDER_REFERENCE,
  type Order,
  type OrderInput,
  type PaymentOption,
  REFUND_AGE_LIMIT_MONTHS,
} from './order-types.ts';

export { type OrdersDeps, storeBalance } from './order-records.ts';
export * from './order-types.ts';

const INSERT_ORDER = `
  INSERT INTO crypto_orders (id, store_id, reference, status, currency, total, amount_details, line_items, customer,
    return_url, cancel_url, callback_url, expires_at, created_at, updated_at)
  VALUES ($1, $2, $3, 'pending', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)`;

export class OrdersService {
  private readonly records: OrderRecords;
  /** The chain's news of the orders' transfers, and the expiry sweep */
  readonly deposits: OrderDeposits;

  private readonly risk: CryptoRisk;

  constructor(private readonly deps: OrdersDeps) {
    this.records = new OrderRecords(deps);
    this.deposits = new OrderDeposits(deps, this.records);
    this.risk = new CryptoRisk(deps.risk, 'crypto.order');
    // A held order is payable once approved; refused (or undecided when it ends), it is canceled.
    deps.risk.reviews.outcomes.set('crypto.order', (tx, orderId, approved) =>
      this.reviewed(tx, orderId, approved),
    );
  }

  async create(store: Store, input: OrderInput): Promise<Order> {
    await this.deps.onboarding.refuseChargeUnlessApproved(this.deps.db, `store:${store.id}`);
    const now = this.deps.clock.now();
    const expiresAt = input.expiresAt ?? new Date(now.getTime() + DEFAULT_ORDER_TTL_SECONDS * 1000);
    const ttl = (expiresAt.getTime() - now.getTime()) / 1000;
    if (ttl < MIN_ORDER_TTL_SECONDS || ttl > MAX_ORDER_TTL_SECONDS)
      throw new DomainError('validation_failed', 'expires_at must be between 5 minutes and 7 days from now', {
        field: 'data.attributes.order.expires_at',
      });
    const row: Selectable<CryptoOrdersTable> = {
      id: uuidv7(),
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
      in_review: false,
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
    const signal = this.risk.signal({
      storeId: store.id,
      amount: input.total,
      currency: input.currency,
      customer: input.customer,
      at: now,
      attributes: {
        order: { line_items: BigInt(input.lineItems.length), ttl_seconds: BigInt(Math.round(ttl)) },
      },
    });
    // A new order is one row and its signal: one statement, committing by itself, answered from what was
    // written (with an Idempotency-Key, sent with the key's answer). A key's velocity its rules read is
    // checked in that statement (velocity-guard.ts); only the guard can refuse it.
    const oneStatement = async (verdict: Verdict | undefined, guard?: StatementPart) => {
      const batch = new StatementBatch();
      if (guard) batch.add(guard);
      batch.add({ sql: INSERT_ORDER, parameters: insert.parameters });
      this.risk.stage(batch, signal, row.id, verdict);
      await batch.run(this.deps.db, { deferrable: true, refusedBy: isVelocityGuardFailure });
      return this.records.toOrder(row, [], undefined);
    };
    let { verdict, guard } = input.exchangeRateId
      ? { verdict: await this.risk.verdict(this.deps.db, signal), guard: undefined }
      : await this.risk.prejudge(this.deps.db, signal);
    if (guard) {
      try {
        return await oneStatement(verdict, guard);
      } catch (err) {
        // A rule may match: nothing was written; the rules decide with the velocity read
        if (!isVelocityGuardFailure(err)) throw err;
        verdict = await this.risk.verdict(this.deps.db, signal);
      }
    }
    if (verdict?.action === 'block') {
      await this.risk.recordRefusal(this.deps.db, signal, row.id, verdict);
      throw this.risk.refusal('order');
    }
    const inReview = verdict?.action === 'review';
    if (!input.exchangeRateId && !inReview) return oneStatement(verdict);
    const exchangeRateId = input.exchangeRateId;
    return this.deps.transact(async (tx) => {
      await tx.executeQuery(insert);
      await this.risk.record(tx, signal, row.id, verdict, expiresAt);
      let written = { ...row, in_review: inReview };
      if (exchangeRateId) {
        // A store's quote locks the rate of its currency for this order while the quote lasts.
        const quote = await this.deps.quotes.claim(tx, store.id, exchangeRateId, {
          orderId: row.id,
          currency: input.currency,
          field: 'data.attributes.order.exchange_rate_id',
        });
        written = { ...written, pay_asset: quote.from, quote_id: quote.id };
      }
      await tx
        .updateTable('crypto_orders')
        .set({ pay_asset: written.pay_asset, quote_id: written.quote_id, in_review: inReview })
        .where('id', '=', row.id)
        .execute();
      return this.records.toOrder(written, [], undefined);
    });
  }

  async get(store: Store, id: string): Promise<Order> {
    return this.records.load(this.deps.db, id, store.id);
  }

  async list(
    store: Store,
    query: { status?: CryptoOrderStatus; afterSeq?: bigint; limit: number },
  ): Promise<{ orders: Order[]; nextSeq: bigint | null }> {
    let q = this.deps.db
      .selectFrom('crypto_orders')
      .select(['id', 'seq'])
      .where(ownedBy('store_id', store.id))
      .orderBy('seq', 'desc')
      .limit(query.limit + 1);
    if (query.status) q = q.where('status', '=', query.status);
    if (query.afterSeq !== undefined) q = q.where('seq', '<', query.afterSeq.toString());
    const rows = await q.execute();
    const page = rows.slice(0, query.limit);
    const orders = await Promise.all(page.map((r) => this.records.load(this.deps.db, r.id, store.id)));
    const last = page.at(-1);
    return { orders, nextSeq: rows.length > query.limit && last ? BigInt(last.seq) : null };
  }

  /** The hosted page's view: the order id in the URL is the buyer's capability. */
  async forBuyer(id: string): Promise<{ order: Order; store: Store; option: PaymentOption | null }> {
    const order = await this.records.load(this.deps.db, id);
    const store = await this.deps.stores.get(this.deps.db, order.storeId);
    return { order, store, option: await this.records.currentOption(this.deps.db, order) };
  }

  /**
   * The buyer picks a currency and network: a deposit address and a fresh 60-second quote (the store's
   * locked quote is reused while it lasts). Once a transfer was seen the choice cannot change.
   */
  async choose(id: string, input: { asset: string; network: string }): Promise<PaymentOption> {
    return this.deps.transact(async (tx) => {
      const order = await this.records.load(tx, id, undefined, true);
      if (order.status !== 'pending')
        throw invalidState(`the order is ${order.status}`, { status: order.status });
      if (order.inReview)
        throw invalidState('the order is being checked; it can be paid once the store’s checks are done', {
          status: 'in_review',
        });
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
        cryptoDue: this.records.cryptoDue(order, quote),
      };
    });
  }

  /** The buyer gives up on the hosted page before paying: `canceled`, and the page returns to the store. */
  /** The buyer cancels on the pay page; answers the order and the cancel event's id (none when it was already canceled). */
  async cancelByBuyer(id: string): Promise<{ order: Order; eventId: string | undefined }> {
    return this.deps.transact(async (tx) => {
      const order = await this.records.load(tx, id, undefined, true);
      if (order.status === 'canceled') return { order, eventId: undefined };
      if (order.status !== 'pending' || order.paymentLocked)
        throw invalidState(
          order.paymentLocked ? 'a payment was already sent for this order' : `the order is ${order.status}`,
          { status: order.status },
        );
      await this.records.setStatus(tx, order, 'canceled');
      const { eventId } = await this.records.publish(tx, order, 'ORDER.PAYMENT.CANCELLED', {
        status: 'canceled',
      });
      return { order: await this.records.load(tx, id), eventId };
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
    const order = await this.records.load(this.deps.db, id);
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

  /** A held order's review decided: payable, or canceled (the store told as of a buyer's cancel). */
  private async reviewed(tx: Tx, orderId: string, approved: boolean): Promise<void> {
    const order = await this.records.load(tx, orderId, undefined, true);
    await tx
      .updateTable('crypto_orders')
      .set({ in_review: false, updated_at: this.deps.clock.now() })
      .where('id', '=', orderId)
      .execute();
    if (approved || order.status !== 'pending' || order.paymentLocked) return;
    await this.records.setStatus(tx, order, 'canceled');
    await this.records.publish(tx, order, 'ORDER.PAYMENT.CANCELLED', { status: 'canceled' });
  }

  /** What the chain rail reports about transfers to this API's deposit addresses. */
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
}
