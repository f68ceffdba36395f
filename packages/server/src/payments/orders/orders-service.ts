// Orders (spec, Orders): purchase, recurring, managed and credit. Creation checks every field, stores the
// order (and the card when saved, or as the mandate of a recurring or managed order) and charges it in
// one transaction. The order's status follows its transactions; every change of either sends an IPN.
// Recurring orders are billed by a sweep on the injected clock, with the order's retry schedule.

import type { Clock } from '../../platform/clock/clock.ts';
import { whenCommitted } from '../../platform/db/connection-scope.ts';
import type { Db, Executor, Tx } from '../../platform/db/database.ts';
import { preparedStatement } from '../../platform/db/prepared.ts';
import type {
  PaymentsCardMode,
  PaymentsOrderStatus,
  PaymentsOrderType,
  PaymentsTransactionStatus,
} from '../../platform/db/schema.ts';
import { rowInsert, StatementBatch } from '../../platform/db/statement-batch.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, notFound, validationFailed } from '../../platform/errors/domain-error.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import { parseClientJson } from '../../platform/http/client-json.ts';
import { formatAmountIn, parseAmountField } from '../../platform/money/amount.ts';
import { type Asset, findAsset } from '../../platform/money/assets.ts';
import type { ChallengeRedirect } from '../../rails/card-network/port.ts';
import { HARD_DECLINES } from '../../rails/card-network/port.ts';
import type { Notifier } from '../../rails/notifier/port.ts';
import type { WalletPaymentTokens } from '../../rails/wallet-tokenization/payment-tokens.ts';
import type { StoredCardsService } from '../cards/stored-cards-service.ts';
import { publishIpn, stageIpn } from '../events/publish-ipn.ts';
import type { Page } from '../http/envelope.ts';
import type { PaymentLinksService } from '../links/payment-links-service.ts';
import { boundedTotal, checkWindow } from '../list-window.ts';
import { boundedAmount } from '../order-amounts.ts';
import type { MerchantScope } from '../sites.ts';
import { siteOf } from '../sites.ts';
import { FAILURES, type FailureReason } from '../transactions/decline-codes.ts';
import type { PaymentTransactionsService, TransactionRow } from '../transactions/transactions-service.ts';
import { addDuration, parseDuration } from './durations.ts';
import type { OrderRow } from './order-row.ts';
import { type Instrument, type InstrumentInput, resolveInstrument } from './payment-instrument.ts';
import { billTime } from './schedule.ts';

const MAX_RETRIES = 10;

export type { OrderRow } from './order-row.ts';

export interface CreateOrderInput extends InstrumentInput {
  amount: string;
  currency: string;
  orderType: PaymentsOrderType;
  customerId: number;
  siteId?: number | undefined;
  description?: string | undefined;
  externalOrderId?: string | undefined;
  intervalType?: 'day' | 'month' | undefined;
  intervalValue?: number | undefined;
  retryPayment?: string | undefined;
  trialAmount?: string | undefined;
  firstBillDate?: string | undefined;
  backUrl?: string | undefined;
  transactionMethod?: 'card' | 'wallet' | undefined;
  cardTransactionMode?: PaymentsCardMode | undefined;
  saveCard?: boolean | undefined;
  invoiceEmail?: string | undefined;
  ip?: string | undefined;
  externalCustomData?: string | undefined;
  level3Data?: string | undefined;
  isSoftDecline?: boolean | undefined;
  splitSchema?: { toSite: number; amount: string; description?: string | undefined }[] | undefined;
  /** Set by the hosted checkout: the payment link the order came from */
  paymentLinkHash?: string | undefined;
  /** Set by the hosted checkout form (or its embedded form) the order came from */
  checkout?: 'hosted' | 'embedded' | undefined;
  /** A card-save checkout: the authorization only proves the card and is voided once approved */
  cardVerification?: boolean | undefined;
  /** The hosted checkout page's one-time attempt id (unique per site) */
  checkoutAttempt?: string | undefined;
}

export interface ChargeResult {
  order: OrderRow;
  transaction: TransactionRow;
  cardId: number | null;
  redirect?: ChallengeRedirect;
}

export interface OrderFilter {
  externalOrderId?: string;
  customerId?: number;
  orderType?: PaymentsOrderType;
  orderStatus?: PaymentsOrderStatus;
  createdAtFrom?: Date;
  createdAtTo?: Date;
}

export interface OrdersDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  outbox: Outbox;
  cards: StoredCardsService;
  transactions: PaymentTransactionsService;
  walletTokens: WalletPaymentTokens;
  links: PaymentLinksService;
  /** Where the invoice of an order with an invoiceEmail goes */
  notifier: Notifier;
  /** Common orders are written in one statement (createAtOnce); false runs every order the general way */
  oneStatementWrites: boolean;
}

export class PaymentOrdersService {
  constructor(private readonly deps: OrdersDeps) {
    deps.transactions.onChange = (tx, t, change) =>
      this.onTransactionChange(tx, t, change?.captured ?? false);
  }

  /**
   * The order's terms, checked as a payment would check them, without its customer or card: what the
   * hosted checkout asks before it shows the card page, so a request the payment would refuse is
   * refused before the buyer types a card.
   */
  checkTerms(
    merchant: MerchantScope,
    input: Omit<CreateOrderInput, 'customerId'>,
    now = this.deps.clock.now(),
  ) {
    const siteId = siteOf(merchant, input.siteId);
    const asset = fiatAsset(input.currency);
    const amount = boundedAmount(input.amount, asset, 'amount');
    const mode = input.cardTransactionMode ?? (input.orderType === 'credit' ? 'credit' : 'authAndCapture');
    if ((mode === 'credit') !== (input.orderType === 'credit')) {
      throw validationFailed(
        'cardTransactionMode',
        'credit orders use cardTransactionMode=credit, and only they do',
      );
    }
    if (input.transactionMethod === 'wallet') {
      throw validationFailed(
        'transactionMethod',
        'Tessera has no stored-value wallet: pay by card (wallet payloads included)',
      );
    }
    const recurring = input.orderType === 'recurring' ? this.recurringTerms(input, asset, now) : undefined;
    if (recurring && mode !== 'authAndCapture') {
      throw validationFailed('cardTransactionMode', 'recurring orders capture each bill: use authAndCapture');
    }
    const splits = input.splitSchema ? checkSplits(merchant, input.splitSchema, asset, amount) : undefined;
    if (input.level3Data !== undefined) parseJson(input.level3Data, 'level3Data');
    return { siteId, asset, amount, mode, recurring, splits };
  }

  /** POST /order. A declined payment commits (the order and its failed transaction exist) and then answers 402. */
  async create(merchant: MerchantScope, input: CreateOrderInput): Promise<ChargeResult> {
    const now = this.deps.clock.now();
    const { siteId, asset, amount, mode, recurring, splits } = this.checkTerms(merchant, input, now);

    const atOnce =
      this.deps.oneStatementWrites && isChargedAtOnce(input, mode)
        ? await this.createAtOnce(merchant, input, { siteId, asset, amount, mode, splits, now })
        : undefined;
    if (atOnce) {
      if (atOnce.transaction.status === 'complete-failed') throw declined(atOnce);
      return atOnce;
    }

    const result = await this.deps.transact(async (tx) => {
      const customer = await tx
        .selectFrom('payments_customers')
        .select(['id', 'site_id'])
        .where('id', '=', input.customerId)
        .where('merchant_id', '=', merchant.merchantId)
        .where('site_id', 'in', merchant.siteIds)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      // A customer belongs to one site: another site's customer (of the same merchant) is not this order's.
      if (!customer || customer.site_id !== siteId) {
        throw new DomainError('not_found', 'customer not found on this site', { field: 'customerId' });
      }
      if (input.paymentLinkHash) await this.deps.links.claimUse(tx, input.paymentLinkHash);
      const instrument = await resolveInstrument(
        tx,
        { cards: this.deps.cards, walletTokens: this.deps.walletTokens, now },
        { merchantId: merchant.merchantId, customerId: customer.id },
        input,
      );
      const inserted = await tx
        .insertInto('payments_orders')
        .values(
          newOrderRow(merchant.merchantId, siteId, input, { asset, amount, mode, splits, now }, recurring),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
      let order = inserted as OrderRow;
      // Recurring and managed orders keep the card as their mandate; others when asked to.
      const mustKeep = input.orderType === 'recurring' || input.orderType === 'managed';
      let cardId = instrument.storedCardId ?? null;
      if (cardId === null && (input.saveCard || mustKeep)) {
        cardId = await this.deps.cards.save(tx, {
          merchantId: merchant.merchantId,
          customerId: customer.id,
          orderId: order.id,
          kind: instrument.kind,
          brand: instrument.brand,
          card: instrument.card,
          nameOnCard: instrument.holderName,
          holderCountry: instrument.holderCountry,
          holderState: instrument.holderState,
        });
      }
      if (cardId !== null) {
        await tx.updateTable('payments_orders').set({ card_id: cardId }).where('id', '=', order.id).execute();
        order = { ...order, card_id: cardId };
      }
      const charged = await this.deps.transactions.charge(tx, {
        order,
        merchantName: merchant.siteNames.get(siteId) ?? (await this.siteName(tx, siteId)),
        type: mode === 'credit' ? 'credit' : 'deposit',
        mode,
        amount: recurring?.trialAmount ?? amount,
        instrument,
        cardId,
        initiator: 'customer',
        isSoftDeclineRetry: input.isSoftDecline ?? false,
      });
      return {
        order: await this.orderRow(tx, order.id),
        transaction: charged.transaction,
        cardId: input.saveCard || mustKeep || instrument.storedCardId !== undefined ? cardId : null,
        ...(charged.redirect ? { redirect: charged.redirect } : {}),
      };
    });
    if (result.transaction.status === 'complete-failed') throw declined(result);
    return result;
  }

  /**
   * The common order, a purchase paid by a card given in the request that the card network answers at
   * once, in two round trips: one read (the customer, the two new ids), then the order and its
   * transaction with their final statuses, the network's record, the ledger posting and the IPN as one
   * statement that commits by itself. Undefined when the order needs more (an invalid field, an unknown
   * customer, a challenge, an on-us card): the general path then runs it, and answers its errors.
   */
  private async createAtOnce(
    merchant: MerchantScope,
    input: CreateOrderInput,
    plan: {
      siteId: number;
      asset: Asset;
      amount: bigint;
      mode: PaymentsCardMode;
      splits: { toSite: number; amount: string }[] | undefined;
      now: Date;
    },
  ): Promise<ChargeResult | undefined> {
    const { db } = this.deps;
    let instrument: Instrument;
    try {
      instrument = await resolveInstrument(
        db,
        { cards: this.deps.cards, walletTokens: this.deps.walletTokens, now: plan.now },
        { merchantId: merchant.merchantId, customerId: input.customerId },
        input,
      );
    } catch {
      return undefined;
    }
    const order: OrderRow = { ...newOrderRow(merchant.merchantId, plan.siteId, input, plan), id: 0 };
    const charge = {
      order,
      merchantName: merchant.siteNames.get(plan.siteId) ?? (await this.siteName(db, plan.siteId)),
      type: 'deposit' as const,
      mode: plan.mode,
      amount: plan.amount,
      instrument,
      cardId: null,
      initiator: 'customer' as const,
      isSoftDeclineRetry: input.isSoftDecline ?? false,
    };
    // Decided before any id is taken: an order left to the general path has cost nothing.
    const batch = new StatementBatch();
    const decided = this.deps.transactions.authorizeAtOnce(batch, charge);
    if (!decided) return undefined;
    const { rows } = await db.executeQuery<{ identifier: string; order_id: number; transaction_id: number }>(
      preparedStatement('payments_order_customer_and_ids', SELECT_CUSTOMER_AND_IDS, [
        input.customerId,
        merchant.merchantId,
        plan.siteId,
      ]),
    );
    const found = rows[0];
    if (!found) return undefined;
    order.id = found.order_id;
    const transaction = await this.deps.transactions.stageCharge(
      batch,
      charge,
      decided,
      found.transaction_id,
    );
    order.status = orderStatusAfter(order, transaction.status) ?? order.status;
    batch.add(insertOrder(order));
    const ipn = await stageIpn(this.deps.outbox, batch, db, {
      order,
      transaction,
      identifier: found.identifier,
    });
    // Nothing of it is read back and nothing in it can refuse: with an Idempotency-Key it may wait to be
    // sent with the key's answer (StatementBatch.run), and the IPN's first attempt is queued once it is in.
    await batch.run(db, { deferrable: true });
    await whenCommitted(() => ipn.queued());
    return { order, transaction, cardId: null };
  }

  /** PATCH /order-rebill/{id}: the merchant charges a managed order's stored card again. */
  async rebill(
    merchant: MerchantScope,
    orderId: number,
    input: { customerId: number; amount: string; isSoftDecline?: boolean | undefined },
  ): Promise<ChargeResult> {
    const result = await this.deps.transact(async (tx) => {
      const order = await this.lockOwned(tx, merchant, orderId);
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
      const amount = boundedAmount(input.amount, fiatAsset(order.currency), 'amount');
      const stored = await this.storedCard(tx, order);
      if (!stored) {
        throw new DomainError('invalid_state', 'the order’s stored card was deleted', {
          details: { systemCode: FAILURES.card_deleted.code },
        });
      }
      const charged = await this.chargeStoredCard(tx, order, stored, amount, input.isSoftDecline ?? false);
      return { order: await this.orderRow(tx, order.id), ...charged };
    });
    if (result.transaction.status === 'complete-failed') throw declined(result);
    return result;
  }

  /**
   * DELETE /order/{id}: an order without payments is canceled; a recurring order with payments stops
   * billing when asked with terminateOrder=yes; anything else is a 409 naming what to do.
   */
  async cancel(
    merchant: MerchantScope,
    orderId: number,
    input: {
      reason?: string | undefined;
      message?: string | undefined;
      terminateOrder?: boolean | undefined;
    },
  ): Promise<OrderRow> {
    return this.deps.transact(async (tx) => {
      const order = await this.lockOwned(tx, merchant, orderId);
      if (order.status === 'canceled')
        throw new DomainError('invalid_state', 'the order is already canceled');
      const paid = await tx
        .selectFrom('payments_transactions')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('order_id', '=', order.id)
        .where('status', 'not in', ['complete-failed', 'void-ok', 'cancel-ok'])
        .executeTakeFirstOrThrow();
      const hasPayments = Number(paid.n) > 0;
      const isSubscription = order.order_type === 'recurring' || order.order_type === 'managed';
      if (hasPayments && !(isSubscription && input.terminateOrder)) {
        throw new DomainError(
          'invalid_state',
          isSubscription
            ? 'the order has payments: send terminateOrder=yes to stop it, or refund its transactions'
            : 'the order has payments: refund its transactions instead',
          { details: { orderStatus: order.status } },
        );
      }
      const canceled = await this.setOrder(tx, order.id, {
        status: 'canceled',
        next_bill_at: null,
        cancel_reason: input.reason ?? input.message ?? null,
      });
      await publishIpn(this.deps.outbox, tx, { order: canceled });
      return canceled;
    });
  }

  async get(merchant: MerchantScope, orderId: number): Promise<OrderRow> {
    const order = await this.deps.db
      .selectFrom('payments_orders')
      .selectAll()
      .where('id', '=', orderId)
      .where('merchant_id', '=', merchant.merchantId)
      .where('site_id', 'in', merchant.siteIds)
      .executeTakeFirst();
    if (!order) throw notFound('order');
    return order as OrderRow;
  }

  async list(merchant: MerchantScope, f: OrderFilter, page: Page) {
    let query = this.deps.db
      .selectFrom('payments_orders')
      .where('merchant_id', '=', merchant.merchantId)
      .where('site_id', 'in', merchant.siteIds);
    if (f.externalOrderId !== undefined) query = query.where('external_order_id', '=', f.externalOrderId);
    if (f.customerId !== undefined) query = query.where('customer_id', '=', f.customerId);
    if (f.orderType !== undefined) query = query.where('order_type', '=', f.orderType);
    if (f.orderStatus !== undefined) query = query.where('status', '=', f.orderStatus);
    if (f.createdAtFrom) query = query.where('created_at', '>=', f.createdAtFrom);
    if (f.createdAtTo) query = query.where('created_at', '<=', f.createdAtTo);
    checkWindow(page);
    const total = await boundedTotal(this.deps.db, query);
    const rows = await query
      .selectAll()
      .orderBy('id', page.newestFirst ? 'desc' : 'asc')
      .limit(page.perPage)
      .offset((page.page - 1) * page.perPage)
      .execute();
    return { items: rows as OrderRow[], total };
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
      const canceled = await this.setOrder(tx, order.id, {
        status: 'canceled',
        next_bill_at: null,
        cancel_reason: 'customer-deleted',
      });
      await publishIpn(this.deps.outbox, tx, { order: canceled });
    }
    await this.deps.cards.deleteForCustomer(tx, customerId);
  }

  /** Sweep: bills every recurring order that is due, with its stored card (merchant-initiated). */
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
      await this.setOrder(tx, order.id, { next_bill_at: null });
      const stored = await this.storedCard(tx, order);
      if (!stored) {
        // The mandate is gone (card deleted): nothing can be charged again.
        const failed = await this.setOrder(tx, order.id, { status: 'complete-failed' });
        await publishIpn(this.deps.outbox, tx, { order: failed });
        return true;
      }
      await this.chargeStoredCard(tx, order, stored, BigInt(order.amount), false);
      return true;
    });
  }

  // Internals ------------------------------------------------------------------------------------------

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
      merchantName: await this.siteName(tx, order.site_id),
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

  /** Keeps the order in step with a transaction that changed, then sends the IPN. */
  private async onTransactionChange(tx: Tx, t: TransactionRow, isCapture: boolean): Promise<void> {
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
  private async sendInvoice(tx: Tx, order: OrderRow, t: TransactionRow): Promise<void> {
    if (!order.invoice_email) return;
    const site = await this.siteName(tx, order.site_id);
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
  private async afterFirstPayment(tx: Tx, order: OrderRow, t: TransactionRow): Promise<OrderRow> {
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
    return this.setOrder(tx, order.id, { ...patch, status });
  }

  /** A scheduled recurring bill ended: schedule the next one, a retry, or stop. */
  private async afterBill(tx: Tx, order: OrderRow, t: TransactionRow): Promise<OrderRow> {
    if (order.status === 'canceled' || !order.anchor_at) return order;
    if (t.status === 'complete-ok') {
      const billsDone = order.bills_done + 1;
      return this.setOrder(tx, order.id, {
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
      return this.setOrder(tx, order.id, { status: 'complete-failed', next_bill_at: null });
    }
    return this.setOrder(tx, order.id, {
      status: 'retrying',
      retries_done: order.retries_done + 1,
      next_bill_at: addDuration(this.deps.clock.now(), retry),
    });
  }

  private recurringTerms(
    input: Omit<CreateOrderInput, 'customerId'>,
    asset: Asset,
    now: Date,
  ): RecurringTerms {
    if (!input.intervalType)
      throw validationFailed('intervalType', 'intervalType is required for recurring orders');
    if (!input.intervalValue)
      throw validationFailed('intervalValue', 'intervalValue is required for recurring orders');
    if (input.intervalValue > (input.intervalType === 'day' ? 366 : 24)) {
      throw validationFailed('intervalValue', 'intervalValue is at most 366 days or 24 months');
    }
    const trialAmount =
      input.trialAmount === undefined ? undefined : boundedAmount(input.trialAmount, asset, 'trialAmount');
    let firstBillDate: Date | undefined;
    if (input.firstBillDate !== undefined) {
      if (trialAmount === undefined) {
        throw validationFailed('trialAmount', 'firstBillDate requires a trialAmount greater than 0');
      }
      firstBillDate = new Date(input.firstBillDate);
      if (firstBillDate <= now)
        throw validationFailed('firstBillDate', 'firstBillDate must be in the future');
    }
    const retries = (input.retryPayment ?? '')
      .split(',')
      .map((d) => d.trim())
      .filter((d) => d !== '');
    if (retries.length > MAX_RETRIES)
      throw validationFailed('retryPayment', `at most ${MAX_RETRIES} retries`);
    for (const retry of retries) {
      if (!parseDuration(retry)) {
        throw validationFailed(
          'retryPayment',
          `"${retry.slice(0, 20)}" is not an ISO 8601 duration such as P1D`,
        );
      }
    }
    return {
      intervalType: input.intervalType,
      intervalValue: input.intervalValue,
      trialAmount,
      firstBillDate,
      retries,
    };
  }

  private async siteName(tx: Executor, siteId: number): Promise<string> {
    const site = await tx
      .selectFrom('sites')
      .select('name')
      .where('id', '=', siteId)
      .executeTakeFirstOrThrow();
    return site.name;
  }

  private async orderRow(tx: Tx, id: number): Promise<OrderRow> {
    return (await tx
      .selectFrom('payments_orders')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow()) as OrderRow;
  }

  private async lockOwned(tx: Tx, merchant: MerchantScope, id: number): Promise<OrderRow> {
    const order = await tx
      .selectFrom('payments_orders')
      .selectAll()
      .where('id', '=', id)
      .where('merchant_id', '=', merchant.merchantId)
      .where('site_id', 'in', merchant.siteIds)
      .forUpdate()
      .executeTakeFirst();
    if (!order) throw notFound('order');
    return order as OrderRow;
  }

  private async setOrder(tx: Tx, id: number, patch: Partial<OrderRow>): Promise<OrderRow> {
    return tx
      .updateTable('payments_orders')
      .set({ ...patch, updated_at: this.deps.clock.now() } as never)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }
}

/** The status an order takes after its own payment's transaction took `status` (undefined: unchanged). */
function orderStatusAfter(
  order: OrderRow,
  status: PaymentsTransactionStatus,
): PaymentsOrderStatus | undefined {
  switch (status) {
    case 'complete-ok':
      // A recurring order is billed on; a managed one waits for the merchant's rebills.
      return order.order_type === 'recurring' || order.order_type === 'managed'
        ? 'in-progress'
        : 'complete-ok';
    case 'in-progress':
    case '3d-pending':
    case 'start':
      return 'in-progress';
    case 'complete-failed':
      return 'complete-failed';
    case 'void-ok':
      // A card verification ends with its authorization voided: that is its success.
      return order.card_verification ? 'complete-ok' : 'complete-failed';
    default:
      return undefined;
  }
}

/** Whether an order can be charged at once (createAtOnce): a plain purchase with a card given in the request. */
function isChargedAtOnce(input: CreateOrderInput, mode: PaymentsCardMode): boolean {
  return (
    input.orderType === 'purchase' &&
    (mode === 'authAndCapture' || mode === 'auth') &&
    input.cardId === undefined &&
    !input.saveCard &&
    input.paymentLinkHash === undefined &&
    input.checkout === undefined &&
    input.checkoutAttempt === undefined &&
    // An invoice is mail written in the capture's transaction: the general path sends it.
    input.invoiceEmail === undefined &&
    !input.cardVerification
  );
}

type RecurringTerms = {
  intervalType: CreateOrderInput['intervalType'];
  intervalValue: CreateOrderInput['intervalValue'];
  trialAmount: bigint | undefined;
  firstBillDate: Date | undefined;
  retries: string[];
};

/** A new order as it is inserted, before its payment decides its status (both paths write this). */
function newOrderRow(
  merchantId: number,
  siteId: number,
  input: CreateOrderInput,
  plan: { asset: Asset; amount: bigint; mode: PaymentsCardMode; splits: unknown[] | undefined; now: Date },
  recurring?: RecurringTerms,
): Omit<OrderRow, 'id'> {
  return {
    merchant_id: merchantId,
    site_id: siteId,
    customer_id: input.customerId,
    order_type: input.orderType,
    status: 'start',
    amount: plan.amount.toString(),
    currency: plan.asset.code,
    description: input.description ?? null,
    external_order_id: input.externalOrderId ?? null,
    external_custom_data: input.externalCustomData ?? null,
    card_transaction_mode: plan.mode,
    transaction_method: 'card',
    card_id: null,
    back_url: input.backUrl ?? null,
    invoice_email: input.invoiceEmail ?? null,
    ip: input.ip ?? null,
    level3_data: input.level3Data ?? null,
    split_schema: plan.splits ? JSON.stringify(plan.splits) : null,
    interval_type: recurring?.intervalType ?? null,
    interval_value: recurring?.intervalValue ?? null,
    trial_amount: recurring?.trialAmount?.toString() ?? null,
    first_bill_date: recurring?.firstBillDate ?? null,
    retry_payment: recurring?.retries ?? null,
    anchor_at: null,
    bills_done: 0,
    retries_done: 0,
    next_bill_at: null,
    payment_link_hash: input.paymentLinkHash ?? null,
    checkout: input.checkout ?? null,
    card_verification: input.cardVerification ?? false,
    checkout_attempt: input.checkoutAttempt ?? null,
    cancel_reason: null,
    created_at: plan.now,
    updated_at: plan.now,
  };
}

/** The order as createAtOnce writes it (the columns not named keep their defaults). */
const insertOrder = rowInsert<OrderRow, keyof OrderRow>('payments_orders', [
  'id',
  'merchant_id',
  'site_id',
  'customer_id',
  'order_type',
  'status',
  'amount',
  'currency',
  'description',
  'external_order_id',
  'external_custom_data',
  'card_transaction_mode',
  'transaction_method',
  'back_url',
  'invoice_email',
  'ip',
  'level3_data',
  'split_schema',
  'created_at',
  'updated_at',
]);

/** The order's customer (on the order's site, not deleted) and the ids of the order and its transaction. */
const SELECT_CUSTOMER_AND_IDS = `
  SELECT c.identifier, nextval('payments_orders_id_seq')::int AS order_id,
    nextval('payments_transactions_id_seq')::int AS transaction_id
  FROM payments_customers c
  WHERE c.id = $1 AND c.merchant_id = $2 AND c.site_id = $3 AND c.deleted_at IS NULL`;

/** The k-th scheduled bill: at firstBillDate and every interval after, else one interval after the first payment. */
function nextBill(order: OrderRow, anchor: Date, billsDone: number): Date {
  const offset = order.first_bill_date ? 0 : 1;
  return billTime(anchor, order.interval_type ?? 'month', order.interval_value ?? 1, billsDone + offset);
}

function fiatAsset(code: string): Asset {
  const asset = findAsset(code);
  if (asset?.kind !== 'fiat') throw validationFailed('currency', 'currency must be an ISO 4217 code');
  return asset;
}

function checkSplits(
  merchant: MerchantScope,
  schema: NonNullable<CreateOrderInput['splitSchema']>,
  asset: Asset,
  amount: bigint,
) {
  const field = 'transactionOption.splitPayment.splitSchema';
  if (schema.length === 0) throw validationFailed(field, 'splitSchema needs at least one entry');
  const splits = schema.map((entry, i) => {
    if (!merchant.siteIds.includes(entry.toSite)) {
      throw validationFailed(`${field}.${i}.toSite`, 'toSite is not one of your sites');
    }
    return {
      toSite: entry.toSite,
      amount: parseAmountField(entry.amount, asset, `${field}.${i}.amount`).toString(),
      ...(entry.description ? { description: entry.description } : {}),
    };
  });
  const total = splits.reduce((sum, s) => sum + BigInt(s.amount), 0n);
  if (total !== amount) throw validationFailed(field, 'the split amounts must add up to the order amount');
  return splits;
}

function parseJson(text: string, field: string): unknown {
  try {
    return parseClientJson(text, field);
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw validationFailed(field, `${field} must be a JSON string`);
  }
}

function declined(result: ChargeResult): DomainError {
  const t = result.transaction;
  const failure = FAILURES[(t.decline_reason ?? 'generic') as FailureReason] ?? FAILURES.generic;
  return new DomainError('payment_declined', failure.message, {
    details: {
      systemCode: failure.code,
      data: { orderId: result.order.id, transactionId: t.id, transactionStatus: t.status },
    },
  });
}
