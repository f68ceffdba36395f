// Card transactions of the payments API (spec, Transactions): a charge asks the card network, and its
// answer decides the record: approved (captured at once for authAndCapture), declined, waiting on a 3D
// Secure challenge, or unknown until reconciliation. Captures credit the site's ledger balance (split
// across sites when the order says so); refunds and credits debit it. Each step is one database
// transaction with its ledger postings, and the order module hears of every change (status, IPN).

import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import type { CapabilityTokens } from '../../platform/crypto/capability-tokens.ts';
import type { Db, Tx } from '../../platform/db/database.ts';
import type {
  PaymentsCardMode,
  PaymentsTransactionStatus,
  PaymentsTransactionsTable,
} from '../../platform/db/schema.ts';
import { rowInsert, type StatementBatch } from '../../platform/db/statement-batch.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import { formatAmountIn, parseAmountField } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import {
  insertBalanceTransactions,
  stageBalanceTransactions,
} from '../../platform/payouts/balance-transactions.ts';
import type { TermsStore } from '../../platform/payouts/terms.ts';
import type {
  AuthorizationAnswer,
  AuthorizationRequest,
  CardNetwork,
  ChallengeRedirect,
  NetworkNews,
} from '../../rails/card-network/port.ts';
import type { Page } from '../http/envelope.ts';
import { boundedTotal, checkWindow } from '../list-window.ts';
import type { Instrument } from '../orders/payment-instrument.ts';
import type { MerchantScope } from '../sites.ts';
import { FAILURES, type FailureReason } from './decline-codes.ts';
import { SiteMoney } from './site-money.ts';

export const NETWORK_OWNER = 'payments';

export type TransactionRow = Selectable<PaymentsTransactionsTable>;
/** A transaction with what the API answers of its order and customer (xMoney's transaction view) */
export type TransactionDetail = TransactionRow & {
  external_order_id: string | null;
  description: string | null;
  back_url: string | null;
  email: string | null;
};

export interface SplitEntry {
  toSite: number;
  amount: bigint;
  description?: string | undefined;
}

export interface ChargeRequest {
  order: {
    id: number;
    merchant_id: number;
    site_id: number;
    customer_id: number;
    currency: string;
    split_schema: string | null;
  };
  merchantName: string;
  type: 'deposit' | 'credit';
  mode: PaymentsCardMode;
  amount: bigint;
  instrument: Instrument;
  cardId: number | null;
  initiator: 'customer' | 'merchant';
  isSoftDeclineRetry: boolean;
}

/** A charge the network answered at once (authorizeAtOnce), to be staged with stageCharge. */
export interface ChargeDecided {
  answer: Extract<AuthorizationAnswer, { outcome: 'approved' | 'declined' }>;
  reference: string;
}

export interface TransactionFilter {
  orderId?: number;
  customerId?: number;
  email?: string;
  transactionMethod?: 'card' | 'wallet';
  currency?: string;
  amountFrom?: bigint;
  amountTo?: bigint;
  transactionType?: 'deposit' | 'refund' | 'credit';
  transactionStatus?: PaymentsTransactionStatus[];
  createdAtFrom?: Date;
  createdAtTo?: Date;
}

export interface TransactionsDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  ledger: Ledger;
  network: CardNetwork;
  publicUrl: string;
  /** How long an authorization may wait for its capture before it is released */
  authorizationSeconds: number;
  capabilities: CapabilityTokens;
  terms: TermsStore;
}

export class PaymentTransactionsService {
  /**
   * Set by the orders module: runs after every change of a transaction, in its database transaction;
   * `captured` marks the one change that captures a deposit (its order's invoice goes out then).
   */
  onChange: (tx: Tx, transaction: TransactionRow, change?: { captured: boolean }) => Promise<void> =
    async () => {};

  private readonly money: SiteMoney;

  constructor(private readonly deps: TransactionsDeps) {
    this.money = new SiteMoney({ ledger: deps.ledger, terms: deps.terms, clock: deps.clock, parseSplits });
  }

  /** Asks the network and records its answer; a 3D Secure challenge comes back as the redirect. */
  async charge(
    tx: Tx,
    r: ChargeRequest,
  ): Promise<{ transaction: TransactionRow; redirect?: ChallengeRedirect }> {
    const now = this.deps.clock.now();
    const inserted = await tx
      .insertInto('payments_transactions')
      // The card network's reference for this payment, unique and known before the insert.
      .values(startedTransaction(r, `${NETWORK_OWNER}:${randomUUID()}`, now))
      .returningAll()
      .executeTakeFirstOrThrow();
    const t = inserted;

    if (r.type === 'credit') {
      // The site pays for the credit: its balance must cover it before the network is asked.
      const paid = await this.money.credit(tx, t, r.amount);
      if (!paid) return { transaction: await this.fail(tx, t, 'merchant_balance_insufficient') };
    }
    const answer = await this.deps.network.authorize(tx, {
      ...this.authorizationRequest(r, this.reference(t)),
      returnUrl: `${this.deps.publicUrl}/checkout/3ds/return/${this.deps.capabilities.issue('3ds-return', String(t.id))}`,
    });
    const transaction = await this.apply(tx, t, answer, r.order.split_schema);
    return answer.outcome === 'challenge' ? { transaction, redirect: answer.redirect } : { transaction };
  }

  /**
   * Asks the network for an answer it can give at once (approved or declined, see
   * CardNetwork.authorizeAtOnce), its record added to the order's batch. Undefined when the answer needs
   * the network's state (a challenge, a lost answer, an on-us card): nothing was added, charge() instead.
   */
  authorizeAtOnce(batch: StatementBatch, r: ChargeRequest): ChargeDecided | undefined {
    if (r.type !== 'deposit' || !this.deps.network.authorizeAtOnce) return undefined;
    const reference = `${NETWORK_OWNER}:${randomUUID()}`;
    const answer = this.deps.network.authorizeAtOnce(batch, this.authorizationRequest(r, reference));
    if (answer?.outcome !== 'approved' && answer?.outcome !== 'declined') return undefined;
    // A sale is captured with its approval (one network message); anything else needs the network's state.
    if (answer.outcome === 'approved' && answer.captured !== (r.mode === 'authAndCapture')) {
      throw new Error('the network answered a charge at once without capturing it as asked');
    }
    return { answer, reference };
  }

  /**
   * The charge the network answered at once, added to its order's batch: the transaction with its final
   * status and, for a capture, the ledger posting. Answers the row as it will be written.
   */
  async stageCharge(
    batch: StatementBatch,
    r: ChargeRequest,
    decided: ChargeDecided,
    transactionId: number,
  ): Promise<TransactionRow> {
    const { answer, reference } = decided;
    const now = this.deps.clock.now();
    const isApproved = answer.outcome === 'approved';
    const isCapture = isApproved && r.mode === 'authAndCapture';
    const failure = answer.outcome === 'declined' ? FAILURES[answer.reason] : undefined;
    const t: TransactionRow = {
      ...startedTransaction(r, reference, now),
      id: transactionId,
      status: !isApproved ? 'complete-failed' : isCapture ? 'complete-ok' : 'in-progress',
      captured_amount: (isCapture ? r.amount : 0n).toString(),
      refunded_amount: '0',
      is_3d: answer.outcome === 'approved' && answer.threeDS === 'frictionless',
      error_code: failure?.code ?? null,
      error_message: failure?.message ?? null,
      decline_reason: answer.outcome === 'declined' ? answer.reason : null,
      auth_expires_at: isApproved && !isCapture ? addSeconds(now, this.deps.authorizationSeconds) : null,
    };
    batch.add(insertTransaction(t));
    if (isCapture) {
      const { legs, rows } = await this.money.capture(this.deps.db, t, r.amount, r.order.split_schema);
      this.deps.ledger.stageTransfer(batch, {
        operationId: `payments-capture:${t.id}`,
        legs,
        metadata: { transactionId: t.id },
      });
      stageBalanceTransactions(batch, rows);
    }
    return t;
  }

  private authorizationRequest(r: ChargeRequest, reference: string): Omit<AuthorizationRequest, 'returnUrl'> {
    return {
      owner: NETWORK_OWNER,
      reference,
      capture: r.mode === 'authAndCapture',
      card: r.instrument.card,
      amount: r.amount,
      currency: r.order.currency,
      merchant: r.merchantName,
      kind: r.type === 'credit' ? 'credit' : 'purchase',
      initiator: r.initiator,
      isAuthenticated: r.instrument.isAuthenticated,
      isSoftDeclineRetry: r.isSoftDeclineRetry,
    };
  }

  /** News from the network: a challenge was decided, or a lost answer reconciled. */
  async onNetwork(tx: Tx, news: NetworkNews): Promise<void> {
    const t = await tx
      .selectFrom('payments_transactions')
      .selectAll()
      .where('network_reference', '=', news.reference)
      .forUpdate()
      .executeTakeFirst();
    if (!t) return;
    if (t.status !== '3d-pending' && t.status !== 'start') return;
    if (news.outcome === 'approved') await this.approve(tx, t, news.captured ?? false);
    else await this.fail(tx, t, news.reason ?? 'generic');
  }

  /** PUT /transaction/{id}: captures all or part of an authorization; the rest is released. */
  async capture(merchant: MerchantScope, id: number, amountText: string): Promise<TransactionRow> {
    return this.deps.transact(async (tx) => {
      const t = await this.lockOwned(tx, merchant, id);
      if (t.type !== 'deposit' || t.status !== 'in-progress') {
        throw new DomainError(
          'invalid_state',
          `only an authorized, uncaptured transaction can be captured (it is ${t.status})`,
          {
            details: { transactionStatus: t.status },
          },
        );
      }
      const amount = parseAmountField(amountText, assetOf(t.currency));
      if (amount > BigInt(t.amount)) {
        throw new DomainError('validation_failed', 'the capture cannot exceed the authorized amount', {
          field: 'amount',
        });
      }
      await this.deps.network.capture(tx, this.reference(t), amount);
      return this.captureIn(tx, t, amount);
    });
  }

  /**
   * DELETE /transaction/{id}: an authorization not yet captured is voided; a captured one is refunded,
   * in full or in part up to what is left. A refund is its own transaction (type refund).
   */
  async refund(
    merchant: MerchantScope,
    id: number,
    input: { amount?: string; reason?: string; message?: string },
  ): Promise<TransactionRow> {
    return this.deps.transact(async (tx) => {
      const t = await this.lockOwned(tx, merchant, id);
      const now = this.deps.clock.now();
      if (t.type === 'deposit' && t.status === 'in-progress') {
        if (
          input.amount !== undefined &&
          parseAmountField(input.amount, assetOf(t.currency)) !== BigInt(t.amount)
        ) {
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
      const left = BigInt(t.captured_amount) - BigInt(t.refunded_amount);
      if (left === 0n) {
        throw new DomainError('invalid_state', 'the transaction is already fully refunded', {
          details: { transactionStatus: t.status },
        });
      }
      const amount = input.amount === undefined ? left : parseAmountField(input.amount, assetOf(t.currency));
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
      const refund = await tx
        .insertInto('payments_transactions')
        .values({
          merchant_id: t.merchant_id,
          site_id: t.site_id,
          order_id: t.order_id,
          customer_id: t.customer_id,
          card_id: t.card_id,
          parent_id: t.id,
          type: 'refund',
          status: 'refund-ok',
          method: t.method,
          mode: t.mode,
          initiator: 'merchant',
          amount,
          currency: t.currency,
          card_brand: t.card_brand,
          card_bin: t.card_bin,
          card_last4: t.card_last4,
          card_holder_name: t.card_holder_name,
          card_expiry: t.card_expiry,
          network_reference: null,
          error_code: null,
          error_message: null,
          decline_reason: null,
          reason: input.reason ?? null,
          message: input.message ?? null,
          auth_expires_at: null,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const moved = await this.money.refund(tx, t, refund, amount);
      if (!moved) {
        throw new DomainError('invalid_state', 'the site’s balance does not cover this refund', {
          details: { systemCode: FAILURES.merchant_balance_insufficient.code },
        });
      }
      await this.deps.network.refund(tx, this.reference(t), `${NETWORK_OWNER}:${randomUUID()}`, amount);
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
      await this.onChange(tx, deposit);
      await this.onChange(tx, refund);
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
    await this.deps.network.release(tx, this.reference(t));
    const voided = await this.setStatus(tx, t.id, 'void-ok', { reason, message });
    await this.onChange(tx, voided);
    return voided;
  }

  /** A transaction as the API shows it: with its order's and customer's facts (TransactionDetail). */
  async get(merchant: MerchantScope, id: number): Promise<TransactionDetail> {
    const row = await this.detailed()
      .where('t.id', '=', id)
      .where('t.merchant_id', '=', merchant.merchantId)
      .where('t.site_id', 'in', merchant.siteIds)
      .executeTakeFirst();
    if (!row) throw notFound('transaction');
    return row;
  }

  private detailed() {
    return this.deps.db
      .selectFrom('payments_transactions as t')
      .innerJoin('payments_orders as o', 'o.id', 't.order_id')
      .innerJoin('payments_customers as c', 'c.id', 't.customer_id')
      .selectAll('t')
      .select(['o.external_order_id', 'o.description', 'o.back_url', 'c.email']);
  }

  async list(merchant: MerchantScope, f: TransactionFilter, page: Page) {
    let query = this.deps.db
      .selectFrom('payments_transactions as t')
      .innerJoin('payments_customers as c', 'c.id', 't.customer_id')
      .where('t.merchant_id', '=', merchant.merchantId);
    if (f.orderId !== undefined) query = query.where('t.order_id', '=', f.orderId);
    if (f.customerId !== undefined) query = query.where('t.customer_id', '=', f.customerId);
    if (f.email !== undefined) query = query.where('c.email', '=', f.email);
    if (f.transactionMethod !== undefined) query = query.where('t.method', '=', f.transactionMethod);
    if (f.currency !== undefined) query = query.where('t.currency', '=', f.currency);
    if (f.amountFrom !== undefined) query = query.where('t.amount', '>=', f.amountFrom.toString());
    if (f.amountTo !== undefined) query = query.where('t.amount', '<=', f.amountTo.toString());
    if (f.transactionType !== undefined) query = query.where('t.type', '=', f.transactionType);
    if (f.transactionStatus?.length) query = query.where('t.status', 'in', f.transactionStatus);
    if (f.createdAtFrom) query = query.where('t.created_at', '>=', f.createdAtFrom);
    if (f.createdAtTo) query = query.where('t.created_at', '<=', f.createdAtTo);
    checkWindow(page);
    const total = await boundedTotal(this.deps.db, query);
    const rows = await query
      .innerJoin('payments_orders as o', 'o.id', 't.order_id')
      .selectAll('t')
      .select(['o.external_order_id', 'o.description', 'o.back_url', 'c.email'])
      .orderBy('t.id', page.newestFirst ? 'desc' : 'asc')
      .limit(page.perPage)
      .offset((page.page - 1) * page.perPage)
      .execute();
    return { items: rows, total };
  }

  /** The transaction a 3D Secure return leg belongs to, with where its order sends the browser. */
  async returnLeg(token: string): Promise<
    | {
        transaction: TransactionRow;
        backUrl: string | null;
        checkout: 'hosted' | 'embedded' | null;
        siteId: number;
      }
    | undefined
  > {
    const id = Number(this.deps.capabilities.open('3ds-return', token));
    if (!Number.isSafeInteger(id) || id <= 0) return undefined;
    const transaction = await this.deps.db
      .selectFrom('payments_transactions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (!transaction) return undefined;
    const order = await this.deps.db
      .selectFrom('payments_orders')
      .select(['back_url', 'checkout', 'site_id'])
      .where('id', '=', transaction.order_id)
      .executeTakeFirstOrThrow();
    return { transaction, backUrl: order.back_url, checkout: order.checkout, siteId: order.site_id };
  }

  /** Sweep: authorizations nobody captured in time are released (void-ok). */
  async expireAuthorizations(): Promise<number> {
    const due = await this.deps.db
      .selectFrom('payments_transactions')
      .select('id')
      .where('status', '=', 'in-progress')
      .where('auth_expires_at', '<=', this.deps.clock.now())
      .limit(200)
      .execute();
    return transactEach(this.deps.transact, due, async (tx, row) => {
      const t = await tx
        .selectFrom('payments_transactions')
        .selectAll()
        .where('id', '=', row.id)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (t?.status !== 'in-progress') return false;
      await this.deps.network.release(tx, this.reference(t));
      await this.onChange(
        tx,
        await this.setStatus(tx, t.id, 'void-ok', { reason: 'authorization-expired', message: null }),
      );
      return true;
    });
  }

  /** The site's whole ledger balance in a currency (sandbox and operator views). */
  siteBalance(siteId: number, currency: string): Promise<bigint> {
    return this.money.siteBalance(this.deps.db, siteId, currency);
  }

  // Internals ------------------------------------------------------------------------------------------

  private async apply(
    tx: Tx,
    t: TransactionRow,
    answer: AuthorizationAnswer,
    splitSchema: string | null,
  ): Promise<TransactionRow> {
    switch (answer.outcome) {
      case 'approved':
        return this.approve(
          tx,
          { ...t, is_3d: answer.threeDS === 'frictionless' },
          answer.captured,
          splitSchema,
        );
      case 'declined':
        return this.fail(tx, t, answer.reason);
      case 'challenge': {
        const pending = await this.setStatus(tx, t.id, '3d-pending', { is_3d: true });
        await this.onChange(tx, pending);
        return pending;
      }
      case 'unknown':
        // The answer was lost: the record stays `start` until the network's reconciliation tells.
        await this.onChange(tx, t);
        return t;
    }
  }

  /** An approval: captured now for authAndCapture (unless the network already did, as a sale), else held. */
  private async approve(
    tx: Tx,
    t: TransactionRow,
    isCaptured: boolean,
    splitSchema?: string | null,
  ): Promise<TransactionRow> {
    const amount = BigInt(t.amount);
    if (t.type !== 'credit' && t.mode === 'authAndCapture') {
      if (!isCaptured) await this.deps.network.capture(tx, this.reference(t), amount);
      return this.captureIn(tx, t, amount, splitSchema);
    }
    const approved =
      t.type === 'credit'
        ? await this.setStatus(tx, t.id, 'complete-ok', { is_3d: t.is_3d })
        : await this.setStatus(tx, t.id, 'in-progress', {
            is_3d: t.is_3d,
            auth_expires_at: addSeconds(this.deps.clock.now(), this.deps.authorizationSeconds),
          });
    await this.onChange(tx, approved);
    return approved;
  }

  private async fail(tx: Tx, t: TransactionRow, reason: FailureReason): Promise<TransactionRow> {
    if (t.type === 'credit' && reason !== 'merchant_balance_insufficient') {
      // The network refused the credit: the site gets its money back.
      await this.money.creditReturned(tx, t);
    }
    const failure = FAILURES[reason];
    const failed = await this.setStatus(tx, t.id, 'complete-failed', {
      decline_reason: reason,
      error_code: failure.code,
      error_message: failure.message,
    });
    await this.onChange(tx, failed);
    return failed;
  }

  /**
   * Captures: the record and its IPN first, the ledger credit to the site last, so the site's balance
   * shard is locked only for the commit.
   */
  private async captureIn(
    tx: Tx,
    t: TransactionRow,
    amount: bigint,
    splitSchema?: string | null,
  ): Promise<TransactionRow> {
    const { legs, rows } = await this.money.capture(tx, t, amount, splitSchema);
    const captured = await this.setStatus(tx, t.id, 'complete-ok', {
      is_3d: t.is_3d,
      captured_amount: amount,
      auth_expires_at: null,
    });
    await this.onChange(tx, captured, { captured: true });
    await this.deps.ledger.transfer(tx, {
      operationId: `payments-capture:${t.id}`,
      legs,
      metadata: { transactionId: t.id },
    });
    await insertBalanceTransactions(tx, rows);
    return captured;
  }

  private async setStatus(
    tx: Tx,
    id: number,
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
    return tx
      .updateTable('payments_transactions')
      .set({ status, updated_at: this.deps.clock.now(), ...extra })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  private reference(t: TransactionRow): string {
    if (!t.network_reference) throw new Error(`transaction ${t.id} was never sent to the network`);
    return t.network_reference;
  }

  private async lockOwned(tx: Tx, merchant: MerchantScope, id: number): Promise<TransactionRow> {
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

/** A charge's transaction before the network answers (both paths start from it). */
function startedTransaction(
  r: ChargeRequest,
  networkReference: string,
  now: Date,
): Omit<TransactionRow, 'id' | 'captured_amount' | 'refunded_amount' | 'is_3d'> {
  return {
    merchant_id: r.order.merchant_id,
    site_id: r.order.site_id,
    order_id: r.order.id,
    customer_id: r.order.customer_id,
    card_id: r.cardId,
    parent_id: null,
    type: r.type,
    status: 'start',
    method: 'card',
    mode: r.mode,
    initiator: r.initiator,
    amount: r.amount.toString(),
    currency: r.order.currency,
    card_brand: r.instrument.brand,
    card_bin: r.instrument.card.pan.slice(0, 6),
    card_last4: r.instrument.card.pan.slice(-4),
    card_holder_name: r.instrument.holderName,
    card_expiry: `${String(r.instrument.card.expiryMonth).padStart(2, '0')}/${String(r.instrument.card.expiryYear % 100).padStart(2, '0')}`,
    network_reference: networkReference,
    error_code: null,
    error_message: null,
    decline_reason: null,
    reason: null,
    message: null,
    auth_expires_at: null,
    created_at: now,
    updated_at: now,
  };
}

/** A transaction as chargeAtOnce writes it (the columns not named keep their defaults). */
const insertTransaction = rowInsert<TransactionRow, keyof TransactionRow>('payments_transactions', [
  'id',
  'merchant_id',
  'site_id',
  'order_id',
  'customer_id',
  'card_id',
  'type',
  'status',
  'method',
  'mode',
  'initiator',
  'amount',
  'captured_amount',
  'currency',
  'card_brand',
  'card_bin',
  'card_last4',
  'card_holder_name',
  'card_expiry',
  'is_3d',
  'network_reference',
  'error_code',
  'error_message',
  'decline_reason',
  'auth_expires_at',
  'created_at',
  'updated_at',
]);

export function parseSplits(text: string): SplitEntry[] {
  return (JSON.parse(text) as { toSite: number; amount: string; description?: string }[]).map((s) => ({
    toSite: s.toSite,
    amount: BigInt(s.amount),
    description: s.description,
  }));
}

function assetOf(currency: string) {
  const asset = findAsset(currency);
  if (!asset) throw new Error(`unknown currency ${currency}`);
  return asset;
}
