// Refund proposals (docs/crypto.md, refund rules 1–5 and the 30-day expiry). The store
// proposes an amount in the order's currency; the buyer accepts on the hosted decision page (giving an
// address) or rejects; an accepted refund is paid out on chain from the store's balance, a ledger hold
// until the payout confirms. The crypto sent back is the same share of the crypto received as the
// refund is of the payment total, so a refund never sends more than arrived, whatever the rate did.

import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock/clock.ts';
import { addMonths, addSeconds, daysSince } from '../../platform/clock/clock.ts';
import type { Compliance } from '../../platform/compliance/compliance.ts';
import { hashToken } from '../../platform/crypto/hashing.ts';
import type { Db, Tx } from '../../platform/db/database.ts';
import type { CryptoOrderStatus } from '../../platform/db/schema.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, invalidState, notFound } from '../../platform/errors/domain-error.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import { formatAmount, formatAmountIn } from '../../platform/money/amount.ts';
import type { Risk } from '../../platform/risk/risk.ts';
import type { Store, StoresService } from '../../platform/tenants/stores-service.ts';
import type { ChainNews, ChainRail } from '../../rails/chain/port.ts';
import type { Notifier } from '../../rails/notifier/port.ts';
import { type CryptoEventType, publishCryptoEvent } from '../events/publish-crypto-event.ts';
import { moveOrder } from '../orders/order-status.ts';
import { REFUND_AGE_LIMIT_MONTHS, storeBalance } from '../orders/orders-service.ts';
import type { StoreSettlement } from '../orders/store-settlement.ts';
import { assetOf } from '../quotes/quotes-service.ts';
import { CryptoRisk } from '../risk/crypto-risk.ts';
import { refuseListedAddress } from './refund-address-screening.ts';
import { findRefund, type Refund, type RefundLookup, refundQuery } from './refund-records.ts';

export type { Refund } from './refund-records.ts';

export const REFUND_PROPOSAL_TTL_SECONDS = 30 * 24 * 3600;
export const REFUND_REFERENCE = 'crypto-refund';

export interface RefundsDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  outbox: Outbox;
  ledger: Ledger;
  chain: ChainRail;
  notifier: Notifier;
  stores: StoresService;
  settlement: StoreSettlement;
  publicUrl: string;
  /** The rules at crypto.refund (crypto-risk.ts) */
  risk: Risk;
  /** A refund address OFAC lists is refused, and raised as an alert (docs/compliance.md, Monitoring) */
  compliance: Pick<Compliance, 'sanctions' | 'cases'>;
}

export class RefundsService {
  private readonly risk: CryptoRisk;

  constructor(private readonly deps: RefundsDeps) {
    this.risk = new CryptoRisk(deps.risk, 'crypto.refund');
    // A held proposal can be decided by the buyer once approved; refused, it is rejected.
    deps.risk.reviews.outcomes.set('crypto.refund', (tx, id, approved) => this.reviewed(tx, id, approved));
    // Approving it lets the buyer take the money: the store's refund threshold applies.
    deps.risk.reviews.approvals.set('crypto.refund', async (db, id) => {
      const refund = await db
        .selectFrom('crypto_refunds')
        .select(['currency', 'amount'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const amount = BigInt(refund.amount);
      return {
        action: 'refund',
        money: { currency: refund.currency, amount },
        summary: `let the held refund ${id} of ${formatAmountIn(amount, refund.currency)} ${refund.currency} go to the buyer`,
      };
    });
  }

  /** Proposes a refund; answers the refund and, once only, the buyer's decision link. */
  async propose(
    store: Store,
    paymentId: string,
    input: { amount: bigint; reason: string | null },
  ): Promise<{ refund: Refund; decisionUrl: string }> {
    const proposed = await this.deps.transact(async (tx) => {
      const payment = await tx
        .selectFrom('crypto_payments as p')
        .innerJoin('crypto_orders as o', 'o.id', 'p.order_id')
        .select([
          'p.id',
          'p.order_id',
          'p.total',
          'p.currency',
          'p.crypto_amount',
          'p.asset',
          'p.network',
          'p.offramp',
          'p.created_at',
          'o.status as order_status',
          'o.customer',
          'o.reference',
          'o.callback_url',
        ])
        .where('p.id', '=', paymentId)
        .where('p.store_id', '=', store.id)
        .forUpdate()
        .executeTakeFirst();
      if (!payment) throw notFound('payment');
      // Rule 1
      if (!store.refundsEnabled) throw new DomainError('forbidden', 'refunds are not enabled for this store');
      // Rule 5
      if (payment.offramp) throw invalidState('offramp payments cannot be refunded', { rule: 'offramp' });
      // Rule 4
      const now = this.deps.clock.now();
      if (addMonths(payment.created_at, REFUND_AGE_LIMIT_MONTHS) < now)
        throw invalidState('payments older than 3 months cannot be refunded', { rule: 'age' });
      // Rule 2 (also guarded by a unique index, should two proposals race)
      const active = await tx
        .selectFrom('crypto_refunds')
        .select('status')
        .where('payment_id', '=', paymentId)
        .where('status', 'in', ['proposed', 'accepted', 'complete'])
        .executeTakeFirst();
      if (active)
        throw invalidState(`the payment already has a ${active.status} refund`, {
          rule: 'one_active',
          status: active.status,
        });
      // Rule 3
      const currency = assetOf(payment.currency);
      const total = BigInt(payment.total);
      const minimum = 10n ** BigInt(Math.max(0, currency.exponent - 2)); // 0.01 in the currency
      if (input.amount < minimum || input.amount > total)
        throw new DomainError(
          'validation_failed',
          `amount must be at least ${formatAmount(minimum, currency)} and at most the payment total ${formatAmount(total, currency)}`,
          { field: 'data.attributes.amount' },
        );
      const id = randomUUID();
      const signal = this.risk.signal({
        storeId: store.id,
        amount: input.amount,
        currency: payment.currency,
        customer: payment.customer,
        at: now,
        attributes: {
          refund: { share_bps: (input.amount * 10_000n) / total, reason: input.reason ?? '' },
          payment: {
            total,
            asset: payment.asset,
            network: payment.network,
            age_days: daysSince(payment.created_at, now),
          },
        },
      });
      const verdict = await this.risk.verdict(tx, signal);
      // Blocked: nothing proposed; the decision is kept (committed) and the refusal answered after it.
      if (verdict?.action === 'block') {
        await this.risk.recordRefusal(tx, signal, id, verdict);
        return undefined;
      }
      const token = randomBytes(24).toString('base64url');
      await tx
        .insertInto('crypto_refunds')
        .values({
          id,
          payment_id: paymentId,
          order_id: payment.order_id,
          store_id: store.id,
          status: 'proposed',
          amount: input.amount,
          currency: payment.currency,
          reason: input.reason,
          crypto_amount: (BigInt(payment.crypto_amount) * input.amount) / total,
          asset: payment.asset,
          network: payment.network,
          order_status_before: payment.order_status,
          decision_token_hash: hashToken(token),
          in_review: verdict?.action === 'review',
          expires_at: addSeconds(now, REFUND_PROPOSAL_TTL_SECONDS),
          created_at: now,
        })
        .execute();
      await this.risk.record(tx, signal, id, verdict, addSeconds(now, REFUND_PROPOSAL_TTL_SECONDS));
      await this.setOrderStatus(tx, payment.order_id, 'refund_proposed');
      const decisionUrl = `${this.deps.publicUrl}/crypto/refunds/${token}`;
      const refund = await findRefund(tx, { id });
      await this.deps.notifier.send(tx, {
        channel: 'email',
        recipient: payment.customer.email,
        subject: `${store.name} proposes a refund for order ${payment.reference}`,
        body: `${store.name} proposes to refund ${formatAmount(input.amount, currency)} ${payment.currency} of your crypto payment for order ${payment.reference}. Accept it (and say where to send it) or reject it here: ${decisionUrl}\nThe proposal expires on ${refund.expiresAt.toISOString().slice(0, 10)}.`,
      });
      await this.publish(tx, refund, 'ORDER.REFUND.PROPOSED', payment.callback_url);
      return { refund, decisionUrl };
    });
    if (!proposed) throw this.risk.refusal('refund');
    return proposed;
  }

  /** A held proposal's review decided: the buyer may now decide, or it is rejected (the store told). */
  private async reviewed(tx: Tx, id: string, approved: boolean): Promise<void> {
    const refund = await this.lock(tx, { id });
    if (refund.status !== 'proposed') return;
    await tx
      .updateTable('crypto_refunds')
      .set(
        approved
          ? { in_review: false }
          : { in_review: false, status: 'rejected', decided_at: this.deps.clock.now() },
      )
      .where('id', '=', id)
      .execute();
    if (approved) return;
    await this.setOrderStatus(tx, refund.orderId, refund.orderStatusBefore);
    await this.publish(tx, await findRefund(tx, { id }), 'ORDER.REFUND.REJECTED', refund.callbackUrl);
  }

  /** The currency of a store's payment (refund amounts are in it); a foreign payment is not found. */
  async paymentCurrency(store: Store, paymentId: string): Promise<string> {
    const row = await this.deps.db
      .selectFrom('crypto_payments')
      .select('currency')
      .where('id', '=', paymentId)
      .where('store_id', '=', store.id)
      .executeTakeFirst();
    if (!row) throw notFound('payment');
    return row.currency;
  }

  /** The network a payment arrived on (refunds go back on it). */
  async paymentNetwork(paymentId: string): Promise<string> {
    const row = await this.deps.db
      .selectFrom('crypto_payments')
      .select('network')
      .where('id', '=', paymentId)
      .executeTakeFirst();
    if (!row) throw notFound('payment');
    return row.network;
  }

  /** The payment's current refund (the latest proposal). */
  async get(store: Store, paymentId: string): Promise<Refund> {
    return findRefund(this.deps.db, { paymentId, storeId: store.id });
  }

  /** The hosted page's view, by the token in its link. */
  async byToken(token: string): Promise<Refund> {
    return findRefund(this.deps.db, { tokenHash: hashToken(token) });
  }

  /** The buyer accepts and gives an address: the payout is broadcast. */
  async accept(where: { token: string } | { paymentId: string }, address: string): Promise<Refund> {
    await refuseListedAddress(this.deps, address, (tx) => this.lock(tx, lookupOf(where)));
    return this.decide(where, async (tx, refund) => {
      if (!this.deps.chain.isValidAddress(refund.network, address))
        throw new DomainError('validation_failed', `not a ${refund.network} address`, { field: 'address' });
      const now = this.deps.clock.now();
      const balance = await storeBalance(this.deps.ledger, tx, refund.storeId, refund.asset);
      const payout = await this.deps.ledger.openAccount(tx, {
        ownerType: 'crypto_chain',
        ownerId: refund.network,
        asset: refund.asset,
        purpose: 'payouts',
        isBounded: false,
      });
      await this.deps.settlement.refundAccepted(tx, {
        storeId: refund.storeId,
        refundId: refund.id,
        amount: refund.amount,
        currency: refund.currency,
      });
      const hold = await this.deps.ledger.hold(tx, {
        operationId: `crypto-refund:${refund.id}`,
        debitAccountId: balance,
        creditAccountId: payout.id,
        amount: refund.cryptoAmount,
        metadata: { refundId: refund.id },
      });
      const transfer = await this.deps.chain.send(tx, {
        network: refund.network,
        asset: refund.asset,
        address,
        amount: refund.cryptoAmount,
        reference: `${REFUND_REFERENCE}:${refund.id}`,
      });
      await tx
        .updateTable('crypto_refunds')
        .set({
          status: 'accepted',
          refund_address: address,
          ledger_hold_id: hold.id,
          payout_id: transfer.transactionHash,
          decided_at: now,
        })
        .where('id', '=', refund.id)
        .execute();
      await this.setOrderStatus(tx, refund.orderId, 'refund_processing');
      return 'ORDER.REFUND.ACCEPTED';
    });
  }

  async reject(where: { token: string } | { paymentId: string }): Promise<Refund> {
    return this.decide(where, async (tx, refund) => {
      await tx
        .updateTable('crypto_refunds')
        .set({ status: 'rejected', decided_at: this.deps.clock.now() })
        .where('id', '=', refund.id)
        .execute();
      await this.setOrderStatus(tx, refund.orderId, refund.orderStatusBefore);
      return 'ORDER.REFUND.REJECTED';
    });
  }

  /** Sweep: proposals nobody accepted within 30 days end as `expired`. */
  async expireDue(): Promise<number> {
    const due = await this.deps.db
      .selectFrom('crypto_refunds')
      .select('id')
      .where('status', '=', 'proposed')
      .where('expires_at', '<=', this.deps.clock.now())
      .limit(200)
      .execute();
    return transactEach(this.deps.transact, due, async (tx, row) => {
      const refund = await this.lock(tx, { id: row.id });
      if (refund.status !== 'proposed') return false;
      await tx.updateTable('crypto_refunds').set({ status: 'expired' }).where('id', '=', refund.id).execute();
      await this.setOrderStatus(tx, refund.orderId, refund.orderStatusBefore);
      await this.publish(
        tx,
        await findRefund(tx, { id: refund.id }),
        'ORDER.REFUND.EXPIRED',
        refund.callbackUrl,
      );
      return true;
    });
  }

  /**
   * The chain rail's news of a payout: on its way (a real chain's hash is known once it is signed, and a
   * fee bump replaces it), then final: the refund is complete, with the hash that was mined.
   */
  async onChain(tx: Tx, news: ChainNews): Promise<void> {
    const id = news.transfer.reference.slice(REFUND_REFERENCE.length + 1);
    const refund = await this.lock(tx, { id });
    if (refund.status !== 'accepted' || !refund.holdId) return;
    await tx
      .updateTable('crypto_refunds')
      .set({ payout_id: news.transfer.id })
      .where('id', '=', id)
      .execute();
    if (news.kind !== 'confirmed') return;
    await this.deps.ledger.postHold(tx, {
      operationId: `crypto-refund-payout:${refund.id}`,
      holdId: refund.holdId,
    });
    await tx
      .updateTable('crypto_refunds')
      .set({ status: 'complete', completed_at: this.deps.clock.now() })
      .where('id', '=', refund.id)
      .execute();
    await this.setOrderStatus(tx, refund.orderId, 'refund_completed');
    await this.publish(tx, await findRefund(tx, { id }), 'ORDER.REFUND.COMPLETED', refund.callbackUrl);
  }

  // ---------------------------------------------------------------------------------------------------

  private async decide(
    where: { token: string } | { paymentId: string },
    step: (tx: Tx, refund: Awaited<ReturnType<RefundsService['lock']>>) => Promise<CryptoEventType>,
  ): Promise<Refund> {
    return this.deps.transact(async (tx) => {
      const refund = await this.lock(tx, lookupOf(where));
      if (refund.status !== 'proposed')
        throw invalidState(`the refund is ${refund.status}; only a proposed refund can be decided`, {
          status: refund.status,
        });
      if (refund.expiresAt <= this.deps.clock.now()) throw invalidState('the refund proposal has expired');
      if (refund.inReview)
        throw invalidState('the refund is being checked; it can be decided once the checks are done', {
          status: 'in_review',
        });
      const eventType = await step(tx, refund);
      const updated = await findRefund(tx, { id: refund.id });
      await this.publish(tx, updated, eventType, refund.callbackUrl);
      return updated;
    });
  }

  private async lock(tx: Tx, where: RefundLookup) {
    const row = await refundQuery(tx, where).forUpdate(/* refund row only */).executeTakeFirst();
    if (!row) throw notFound('refund');
    const order = await tx
      .selectFrom('crypto_orders')
      .select('callback_url')
      .where('id', '=', row.order_id)
      .executeTakeFirstOrThrow();
    return {
      id: row.id,
      status: row.status,
      inReview: row.in_review,
      orderId: row.order_id,
      storeId: row.store_id,
      asset: row.asset,
      network: row.network,
      cryptoAmount: BigInt(row.crypto_amount),
      amount: BigInt(row.amount),
      currency: row.currency,
      holdId: row.ledger_hold_id,
      expiresAt: row.expires_at,
      orderStatusBefore: row.order_status_before,
      callbackUrl: order.callback_url,
    };
  }

  private setOrderStatus(tx: Tx, orderId: string, status: CryptoOrderStatus): Promise<void> {
    return moveOrder(tx, orderId, status, this.deps.clock.now());
  }

  private async publish(tx: Tx, refund: Refund, eventType: CryptoEventType, callbackUrl: string | null) {
    const storeId = (
      await tx
        .selectFrom('crypto_refunds')
        .select('store_id')
        .where('id', '=', refund.id)
        .executeTakeFirstOrThrow()
    ).store_id;
    await publishCryptoEvent(this.deps.outbox, tx, {
      storeId,
      callbackUrl,
      eventType,
      resource: {
        amount: formatAmount(refund.amount, assetOf(refund.currency)),
        currency: refund.currency,
        reference: refund.orderReference,
        order_id: refund.orderId,
        payment_id: refund.paymentId,
        refund_id: refund.id,
        status: refund.status,
        crypto_amount: formatAmount(refund.cryptoAmount, assetOf(refund.asset)),
        crypto_currency: refund.asset,
        network: refund.network,
      },
    });
  }
}

/** A refund as the hosted page's link (its token) or the store's API (its payment) names it */
const lookupOf = (where: { token: string } | { paymentId: string }): RefundLookup =>
  'token' in where ? { tokenHash: hashToken(where.token) } : { paymentId: where.paymentId };
