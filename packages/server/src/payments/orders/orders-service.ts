// Orders (spec, Orders): purchase, recurring, managed and credit. Creation checks every field, stores the
// order (and the card when saved, or as the mandate of a recurring or managed order) and charges it in
// one transaction. The order's status follows its transactions; every change of either sends an IPN.
// Recurring orders are billed by a sweep on the injected clock, with the order's retry schedule.

import { whenCommitted } from '../../platform/db/connection-scope.ts';
import type { PaymentsCardMode } from '../../platform/db/schema.ts';
import { StatementBatch } from '../../platform/db/statement-batch.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import type { Asset } from '../../platform/money/assets.ts';
import { publishIpn, stageIpn } from '../events/publish-ipn.ts';
import type { Page } from '../http/envelope.ts';
import { boundedTotal, checkWindow } from '../list-window.ts';
import { cardAcceptorOf, type MerchantScope } from '../sites.ts';
import { OrderLifecycle } from './order-lifecycle.ts';
import {
  type CustomerAndIds,
  customerAndIds,
  declined,
  insertOrder,
  newOrderRow,
  OrderRecords,
  orderStatusAfter,
} from './order-records.ts';
import type { OrderRow } from './order-row.ts';
import { checkOrderTerms, isChargedAtOnce } from './order-terms.ts';
import type {
  ChargeResult,
  CreateOrderCommand,
  OrderFilter,
  OrdersDeps,
  OrderTermsCommand,
} from './order-types.ts';
import { type GivenInstrument, resolveInstrument } from './payment-instrument.ts';
import { RecurringBilling } from './recurring-billing.ts';

export type { OrderRow } from './order-row.ts';
export type { ChargeResult, CreateOrderCommand } from './order-types.ts';

export class PaymentOrdersService {
  private readonly records: OrderRecords;
  /** Recurring orders' bills, the merchant's rebills, a deleted customer's subscriptions */
  readonly billing: RecurringBilling;

  constructor(private readonly deps: OrdersDeps) {
    this.records = new OrderRecords(deps.clock);
    this.billing = new RecurringBilling(deps, this.records);
    const lifecycle = new OrderLifecycle(deps, this.records);
    deps.transactions.onChange = (tx, t, change) =>
      lifecycle.onTransactionChange(tx, t, change?.captured ?? false);
  }

  /**
   * The order's terms, checked as a payment would check them, without its customer or card: what the
   * hosted checkout asks before it shows the card page, so a request the payment would refuse is
   * refused before the buyer types a card.
   */
  checkTerms(merchant: MerchantScope, input: OrderTermsCommand) {
    return checkOrderTerms(merchant, input, this.deps.clock.now());
  }

  /** POST /order. A declined payment commits (the order and its failed transaction exist) and then answers 402. */
  async create(merchant: MerchantScope, input: CreateOrderCommand): Promise<ChargeResult> {
    const now = this.deps.clock.now();
    const { siteId, asset, amount, mode, recurring, splits } = checkOrderTerms(merchant, input, now);
    await this.deps.onboarding.refuseChargeUnlessApproved(this.deps.db, `merchant:${merchant.merchantId}`);

    const given = input.instrument.source === 'stored' ? undefined : input.instrument;
    const atOnce =
      given && this.deps.oneStatementWrites && isChargedAtOnce(input, mode)
        ? await this.createAtOnce(merchant, input, given, { siteId, asset, amount, mode, splits, now })
        : undefined;
    if (atOnce) {
      if (atOnce.transaction.status === 'complete-failed') throw declined(atOnce);
      return atOnce;
    }

    const result = await this.deps.transact(async (tx) => {
      const customer = await tx
        .selectFrom('payments_customers')
        .select(['id', 'site_id', 'email', 'created_at'])
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
        this.deps.cards,
        { merchantId: merchant.merchantId, customerId: customer.id },
        input.instrument,
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
        acceptor: merchant.sites.get(siteId) ?? (await cardAcceptorOf(tx, siteId)),
        type: mode === 'credit' ? 'credit' : 'deposit',
        mode,
        amount: recurring?.trialAmount ?? amount,
        instrument,
        cardId,
        initiator: 'customer',
        isSoftDeclineRetry: input.isSoftDecline ?? false,
        buyer: { email: customer.email, createdAt: customer.created_at },
      });
      return {
        order: await this.records.orderRow(tx, order.id),
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
   * statement that commits by itself. Undefined when the order needs more (an unknown customer, a
   * challenge, an on-us card): the general path then runs it, and answers its errors.
   */
  private async createAtOnce(
    merchant: MerchantScope,
    input: CreateOrderCommand,
    instrument: GivenInstrument,
    plan: {
      siteId: number;
      asset: Asset;
      amount: bigint;
      mode: PaymentsCardMode;
      splits: { toSite: number; amount: string }[] | undefined;
      now: Date;
    },
  ): Promise<ChargeResult | undefined> {
    const { db, risk } = this.deps;
    // The merchant's risk rules (cached): the velocity they read is counted in the one read below, and
    // they are evaluated before anything is written; a charge they do not allow goes the general way,
    // which decides it again and records the refusal.
    const rules = await risk.rulesFor(db, merchant.merchantId);
    const at = this.deps.clock.now();
    const order: OrderRow = { ...newOrderRow(merchant.merchantId, plan.siteId, input, plan), id: 0 };
    const charge = {
      order,
      acceptor: merchant.sites.get(plan.siteId) ?? (await cardAcceptorOf(db, plan.siteId)),
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
    const keys = risk.keys(charge);
    const probe = rules && risk.probe(charge, keys, rules, at);
    if (rules && !probe) return undefined;
    const decided = this.deps.transactions.authorizeAtOnce(batch, charge);
    if (!decided) return undefined;
    const read = customerAndIds(
      [input.customerId, merchant.merchantId, plan.siteId],
      rules && probe ? { probe, features: rules.ruleSet.velocity } : undefined,
    );
    const [{ rows }, tenant] = await Promise.all([
      db.executeQuery<CustomerAndIds>(read.query),
      rules && probe ? risk.tenantVelocity(db, probe, rules) : undefined,
    ]);
    const found = rows[0];
    if (!found) return undefined;
    const signal = risk.signal(charge, { email: found.email, createdAt: found.created_at }, at, keys);
    const verdict = rules && risk.evaluate(rules, signal, read.velocityOf(found) ?? {}, tenant);
    if ((verdict && verdict.action !== 'allow') || risk.forced(signal)) return undefined;
    order.id = found.order_id;
    const transaction = await this.deps.transactions.stageCharge(
      batch,
      charge,
      decided,
      found.transaction_id,
    );
    order.status = orderStatusAfter(order, transaction.status) ?? order.status;
    batch.add(insertOrder(order));
    risk.stage(batch, signal, transaction.id, transaction.status === 'complete-failed', verdict);
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
      const order = await this.records.lockOwned(tx, merchant, orderId);
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
      const canceled = await this.records.setOrder(tx, order.id, {
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

  /** PATCH /order-rebill/{id} (recurring-billing.ts) */
  rebill(...args: Parameters<RecurringBilling['rebill']>): Promise<ChargeResult> {
    return this.billing.rebill(...args);
  }
}
