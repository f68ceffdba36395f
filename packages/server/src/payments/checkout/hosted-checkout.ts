// The hosted checkout (the real service's `POST /` form, also embedded in a merchant's page): a verified
// checkout request is paid with the card the buyer enters (or one of their saved cards) through the same
// services as the API — the customer found or made by its identifier, the order made with the request's
// terms — and the browser goes back to backUrl with the result encrypted under the site's secret key,
// the same JSON the IPN carries.

import type { Clock } from '../../platform/clock/clock.ts';
import type { UnitOfWork } from '../../platform/db/connection-scope.ts';
import type { Db } from '../../platform/db/database.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import type { Brand } from '../../platform/tenants/brand.ts';
import type { MerchantsService } from '../../platform/tenants/merchants-service.ts';
import { encryptIpn } from '../../platform/webhooks/wire-signing.ts';
import type { StoredCard } from '../cards/stored-cards-service.ts';
import { identifierOf, paymentResult } from '../events/publish-ipn.ts';
import type { ChargeResult, OrderRow } from '../orders/orders-service.ts';
import type { InstrumentCommand } from '../orders/payment-instrument.ts';
import type { CheckoutRequest, ChecksumKeys } from '../pages/checkout-request.ts';
import type { PaymentsServices } from '../payments-services.ts';
import { loadMerchantScope, type MerchantScope } from '../sites.ts';
import type { TransactionRow } from '../transactions/transactions-service.ts';

export interface CheckoutResult {
  siteId: number;
  backUrl: string;
  /** `base64(iv),base64(ciphertext)`: what the SDK's decryptOrderResponse reads */
  opensslResult: string;
  transactionStatus: string;
  orderId: number;
  transactionId: number;
  externalOrderId: string | null;
  cardId: number | null;
}

export class HostedCheckout {
  constructor(
    private readonly deps: {
      db: Db;
      createUnit: () => UnitOfWork;
      clock: Clock;
      merchants: MerchantsService;
      payments: PaymentsServices;
    },
  ) {}

  /** The keys a site's checkout requests are signed with (the newest, and the previous one in a rotation). */
  readonly checksumKeys: ChecksumKeys = (siteId) => this.deps.merchants.checksumKeys(this.deps.db, siteId);

  /**
   * A verified request whose order the payment would take: every term is checked before the card page
   * is shown (a firstBillDate in the past, a recurring order without its interval…), not after the buyer
   * typed a card.
   */
  async checkTerms(request: CheckoutRequest): Promise<void> {
    this.deps.payments.orders.checkTerms(await this.scope(request), request.terms);
  }

  /** What the site's pages show of it. */
  brandOf(siteId: number): Promise<Brand> {
    return this.deps.merchants.brandOf(this.deps.db, siteId);
  }

  /** The request's customer's saved cards, when they exist already (a first-time buyer has none). */
  async savedCards(request: CheckoutRequest, customerId?: number): Promise<StoredCard[]> {
    const merchant = await this.scope(request);
    const id = customerId ?? (await this.existingCustomer(request));
    if (id === undefined) return [];
    // Only the signed request's own customer, on its site: the page's userId is the buyer's to change,
    // the checksum-protected identifier is not.
    const customer = await this.deps.payments.customers.get(merchant, id).catch(() => undefined);
    if (customer?.siteId !== request.siteId || customer.identifier !== request.order.customer.identifier)
      return [];
    const { items } = await this.deps.payments.cards.list(
      merchant,
      { customerId: id, hasToken: true },
      { page: 1, perPage: 20, newestFirst: true },
    );
    return items;
  }

  /**
   * Pays the request: the customer and order are made, the card charged (or sent to 3-D Secure). All in
   * one unit of work: a request refused (a bad card field, terms the order cannot take) leaves no
   * customer behind, while a decline is kept, as the API keeps it (the failed order and its IPN).
   * The page's attempt id makes it one payment: a second post of the same page (a double click, a
   * resubmit) answers the order the first one made (`replayed`) and charges nothing.
   */
  async pay(
    request: CheckoutRequest,
    instrument: InstrumentCommand,
    kind: 'hosted' | 'embedded',
    attempt: string,
  ): Promise<ChargeResult | { replayed: { orderId: number; transactionId: number } }> {
    const earlier = await this.attemptMade(request.siteId, attempt);
    if (earlier) return { replayed: earlier };
    const unit = this.deps.createUnit();
    await unit.begin();
    try {
      const charged = await unit.run(() => this.payInUnit(request, instrument, kind, attempt));
      await unit.finish('commit');
      return charged;
    } catch (err) {
      await unit.finish(err instanceof DomainError && err.status === 402 ? 'commit' : 'rollback');
      // The same page posted twice at once: the other post made the order.
      const concurrent = isUniqueViolation(err) ? await this.attemptMade(request.siteId, attempt) : undefined;
      if (concurrent) return { replayed: concurrent };
      throw err;
    }
  }

  private attemptMade(siteId: number, attempt: string) {
    return this.deps.db
      .selectFrom('payments_orders as o')
      .innerJoin('payments_transactions as t', 't.order_id', 'o.id')
      .select(['o.id as orderId', 't.id as transactionId'])
      .where('o.site_id', '=', siteId)
      .where('o.checkout_attempt', '=', attempt)
      .where('t.type', '=', 'deposit')
      .orderBy('t.id')
      .executeTakeFirst();
  }

  private async payInUnit(
    request: CheckoutRequest,
    instrument: InstrumentCommand,
    kind: 'hosted' | 'embedded',
    attempt: string,
  ): Promise<ChargeResult> {
    const { payments } = this.deps;
    const merchant = await this.scope(request);
    const { customer } = request.order;
    const customerId = await payments.customers.findOrCreate(merchant, {
      siteId: request.siteId,
      identifier: customer.identifier,
      ...definedOf({
        firstName: customer.firstName,
        lastName: customer.lastName,
        country: customer.country?.toUpperCase(),
        state: customer.state,
        city: customer.city,
        address: customer.address,
        zipCode: customer.zipCode,
        phone: customer.phone,
        email: customer.email,
      }),
    });
    return payments.orders.create(merchant, {
      ...request.terms,
      customerId,
      checkout: kind,
      checkoutAttempt: attempt,
      instrument,
    });
  }

  /** The result the browser carries back to backUrl, as the order and transaction are now. */
  async result(orderId: number, transactionId: number): Promise<CheckoutResult | undefined> {
    const { db } = this.deps;
    const order = (await db
      .selectFrom('payments_orders')
      .selectAll()
      .where('id', '=', orderId)
      .executeTakeFirst()) as OrderRow | undefined;
    const t = (await db
      .selectFrom('payments_transactions')
      .selectAll()
      .where('id', '=', transactionId)
      .where('order_id', '=', orderId)
      .executeTakeFirst()) as TransactionRow | undefined;
    if (!order?.back_url || !order.checkout || !t) return undefined;
    const payload = paymentResult(order, t, await identifierOf(db, order.customer_id), this.deps.clock.now());
    const key = await this.deps.merchants.ipnSecret(db, order.site_id);
    return {
      siteId: order.site_id,
      backUrl: order.back_url,
      opensslResult: encryptIpn(JSON.stringify(payload), key),
      transactionStatus: t.status,
      orderId: order.id,
      transactionId: t.id,
      externalOrderId: order.external_order_id,
      cardId: t.card_id,
    };
  }

  private async scope(request: CheckoutRequest): Promise<MerchantScope> {
    const scope = await loadMerchantScope(this.deps.db, request.merchantId);
    return { ...scope, siteIds: [request.siteId] };
  }

  private async existingCustomer(request: CheckoutRequest): Promise<number | undefined> {
    const row = await this.deps.db
      .selectFrom('payments_customers')
      .select('id')
      .where('site_id', '=', request.siteId)
      .where('identifier', '=', request.order.customer.identifier)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row?.id;
  }
}

function definedOf<T extends Record<string, string | undefined>>(fields: T): { [K in keyof T]?: string } {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== '')) as {
    [K in keyof T]?: string;
  };
}

const isUniqueViolation = (err: unknown) => (err as { code?: string } | null)?.code === '23505';
