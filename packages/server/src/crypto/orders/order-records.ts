// A crypto order read whole (its deposits, their confirmations from the chain, its payment), the option
// its buyer picked priced as the next transfer will be, its status moved, and its events published; and a
// store's balance of one asset.

import type { Selectable } from 'kysely';
import type { Clock } from '../../platform/clock/clock.ts';
import type { BusinessProfiles } from '../../platform/compliance/business-profiles.ts';
import type { Compliance } from '../../platform/compliance/compliance.ts';
import type { Db, Executor, Tx } from '../../platform/db/database.ts';
import type {
  CryptoDepositsTable,
  CryptoOrderStatus,
  CryptoOrdersTable,
  CryptoPaymentsTable,
} from '../../platform/db/schema.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { notFound } from '../../platform/errors/domain-error.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import { formatAmount } from '../../platform/money/amount.ts';
import { convertBack } from '../../platform/money/rates.ts';
import type { Risk } from '../../platform/risk/risk.ts';
import type { StoresService } from '../../platform/tenants/stores-service.ts';
import type { ChainRail } from '../../rails/chain/port.ts';
import type { FxRates } from '../../rails/fx/port.ts';
import { type CryptoEventType, publishCryptoEvent } from '../events/publish-crypto-event.ts';
import { assetOf, type Quote, type QuotesService } from '../quotes/quotes-service.ts';
import { moveOrder } from './order-status.ts';
import type { Deposit, Order, PaymentOption } from './order-types.ts';
import type { StoreSettlement } from './store-settlement.ts';

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
  /** The rules at crypto.order (order-risk.ts) */
  risk: Risk;
  /** TESSERA_ONBOARDING_REQUIRED=charges: no order before the store's profile is approved */
  onboarding: Pick<BusinessProfiles, 'refuseChargeUnlessApproved'>;
  /** A payment's sender screened against OFAC's digital-currency addresses (payer-screening.ts) */
  compliance: Pick<Compliance, 'sanctions' | 'cases'>;
}

export class OrderRecords {
  constructor(private readonly deps: OrdersDeps) {}

  setStatus(tx: Tx, order: Order, status: CryptoOrderStatus): Promise<void> {
    return moveOrder(tx, order.id, status, this.deps.clock.now());
  }

  async publish(
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

  // --- reading ---------------------------------------------------------------------------------------

  cryptoDue(order: Order, quote: Quote): bigint {
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

  toOrder(
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
      inReview: row.in_review,
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
