// Payment links (spec, Payment links; docs/wire-compatibility.md body): a hosted checkout for one site, one-off or
// recurring, with an amount, optional expiry and usage limit, addressed by an unguessable hash. The
// checkout page pays it through the same customer and order services as the API. A use is a payment
// that went through (counted from the link's orders under a lock, so the limit holds under concurrency).
import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Db, Executor } from '../../platform/db/database.ts';
import type { PaymentsLinksTable } from '../../platform/db/schema.ts';
import { DomainError, notFound, validationFailed } from '../../platform/errors/domain-error.ts';
import { ClientAmount, formatAmountIn } from '../../platform/money/amount.ts';
import { findAsset, knownAsset } from '../../platform/money/assets.ts';
import type { Notifier } from '../../rails/notifier/port.ts';
import type { Page } from '../http/envelope.ts';
import { boundedAmount } from '../order-amounts.ts';
import { loadMerchantScope, type MerchantScope, siteOf } from '../sites.ts';

export type LinkRow = Selectable<PaymentsLinksTable>;

export interface LinkInput {
  siteId?: number | undefined;
  amount?: ClientAmount | undefined;
  currency?: string | undefined;
  orderType?: 'purchase' | 'recurring' | undefined;
  description?: string | undefined;
  contentType?: 'Description' | 'Items' | undefined;
  items?: { name: string; quantity: number; price: string }[] | undefined;
  intervalType?: 'day' | 'month' | undefined;
  intervalValue?: number | undefined;
  active?: boolean | undefined;
  expiresAt?: Date | null | undefined;
  usageLimit?: number | null | undefined;
  backUrl?: string | undefined;
}

export const PAID_STATUSES = ['complete-ok', 'in-progress', 'retrying'] as const;

export class PaymentLinksService {
  constructor(private readonly deps: { db: Db; clock: Clock; notifier: Notifier; publicUrl: string }) {}

  /** The link's page address, as the API and its emails show it. */
  urlOf(hash: string): string {
    return `${this.deps.publicUrl}/pay/${hash}`;
  }

  /**
   * Emails the link to a buyer. Only a link that can be paid is sent. The message is handed to the
   * notifier in one write (by SMTP it is an outbox row: retried until sent, never sent twice); a retried
   * request with the same Idempotency-Key is answered from the first one, so it does not mail again.
   */
  async email(merchant: MerchantScope, hash: string, recipient: string): Promise<LinkRow> {
    const link = await this.get(merchant, hash);
    const unavailable = await this.whyUnavailable(link);
    if (unavailable) throw new DomainError('invalid_state', unavailable);
    const site = merchant.sites.get(link.site_id)?.name ?? 'The merchant';
    const price = `${formatAmountIn(BigInt(link.amount), link.currency)} ${link.currency}`;
    const items: { name: string; quantity: number }[] = link.items ? JSON.parse(link.items) : [];
    const what =
      link.content_type === 'Items' && items.length > 0
        ? items.map((i) => `${i.quantity} × ${i.name}`).join(', ')
        : link.description;
    const n = link.interval_value ?? 0;
    const every =
      link.order_type === 'recurring' && link.interval_type && n > 0
        ? `, then every ${n > 1 ? `${n} ${link.interval_type}s` : link.interval_type} until you cancel`
        : '';
    await this.deps.notifier.send(this.deps.db, {
      channel: 'email',
      recipient,
      subject: `${site} asks you to pay ${price}`,
      body: [
        `${site} asks you to pay ${price}${what ? ` for ${what}` : ''}${every}.`,
        `Pay by card on this page: ${this.urlOf(link.hash)}`,
        ...(link.expires_at
          ? [
              `The link can be used until ${link.expires_at.toISOString().slice(0, 16).replace('T', ' ')} UTC.`,
            ]
          : []),
        'If you did not expect this message, ignore it: nothing is charged unless you pay on that page.',
      ].join('\n'),
    });
    return link;
  }

  async create(merchant: MerchantScope, input: LinkInput): Promise<LinkRow> {
    const siteId = siteOf(merchant, input.siteId);
    const terms = this.terms({ ...input, orderType: input.orderType ?? 'purchase' }, true);
    const now = this.deps.clock.now();
    return this.deps.db
      .insertInto('payments_links')
      .values({
        hash: randomBytes(16).toString('base64url'),
        merchant_id: merchant.merchantId,
        site_id: siteId,
        order_type: input.orderType ?? 'purchase',
        amount: terms.amount ?? 0n,
        currency: terms.currency ?? '',
        description: input.description ?? null,
        content_type: input.contentType ?? 'Description',
        items: input.items ? JSON.stringify(input.items) : null,
        interval_type: input.intervalType ?? null,
        interval_value: input.intervalValue ?? null,
        active: input.active ?? true,
        expires_at: input.expiresAt ?? null,
        usage_limit: input.usageLimit ?? null,
        back_url: input.backUrl ?? null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async update(merchant: MerchantScope, hash: string, input: LinkInput): Promise<LinkRow> {
    const current = await this.get(merchant, hash);
    const merged = {
      orderType: input.orderType ?? current.order_type,
      intervalType: input.intervalType ?? current.interval_type ?? undefined,
      intervalValue: input.intervalValue ?? current.interval_value ?? undefined,
      currency: input.currency ?? current.currency,
      // A new currency without a new amount keeps the amount's value (10.50 EUR → 10.50 USD), never its
      // minor units; one the new currency cannot express is refused, naming the amount.
      amount:
        input.amount ??
        (input.currency !== undefined && input.currency.toUpperCase() !== current.currency
          ? ClientAmount.fromMinor(BigInt(current.amount), knownAsset(current.currency))
          : undefined),
    };
    const terms = this.terms(merged, false);
    const row = await this.deps.db
      .updateTable('payments_links')
      .set({
        ...(input.siteId !== undefined ? { site_id: siteOf(merchant, input.siteId) } : {}),
        ...(terms.amount !== undefined ? { amount: terms.amount } : {}),
        ...(input.currency !== undefined ? { currency: terms.currency } : {}),
        ...(input.orderType !== undefined ? { order_type: input.orderType } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.contentType !== undefined ? { content_type: input.contentType } : {}),
        ...(input.items !== undefined ? { items: JSON.stringify(input.items) } : {}),
        ...(input.intervalType !== undefined ? { interval_type: input.intervalType } : {}),
        ...(input.intervalValue !== undefined ? { interval_value: input.intervalValue } : {}),
        ...(input.active !== undefined ? { active: input.active } : {}),
        ...(input.expiresAt !== undefined ? { expires_at: input.expiresAt } : {}),
        ...(input.usageLimit !== undefined ? { usage_limit: input.usageLimit } : {}),
        ...(input.backUrl !== undefined ? { back_url: input.backUrl } : {}),
        updated_at: this.deps.clock.now(),
      })
      .where('hash', '=', hash)
      .where('merchant_id', '=', merchant.merchantId)
      .where('site_id', 'in', merchant.siteIds)
      .returningAll()
      .executeTakeFirstOrThrow();
    return row;
  }

  async get(merchant: MerchantScope, hash: string): Promise<LinkRow> {
    const row = await this.find(this.deps.db, hash);
    if (!row || row.merchant_id !== merchant.merchantId) throw notFound('payment link');
    return row;
  }

  async delete(merchant: MerchantScope, hash: string): Promise<void> {
    await this.get(merchant, hash);
    await this.deps.db
      .updateTable('payments_links')
      .set({ deleted_at: this.deps.clock.now(), active: false })
      .where('hash', '=', hash)
      .execute();
  }

  async list(merchant: MerchantScope, filter: { siteId?: number; active?: boolean }, page: Page) {
    let query = this.deps.db
      .selectFrom('payments_links')
      .where('merchant_id', '=', merchant.merchantId)
      .where('site_id', 'in', merchant.siteIds)
      .where('deleted_at', 'is', null);
    if (filter.siteId !== undefined) query = query.where('site_id', '=', filter.siteId);
    if (filter.active !== undefined) query = query.where('active', '=', filter.active);
    const total = await query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    const rows = await query
      .selectAll()
      .orderBy('seq', page.newestFirst ? 'desc' : 'asc')
      .limit(page.perPage)
      .offset((page.page - 1) * page.perPage)
      .execute();
    return { items: rows, total: Number(total.n) };
  }

  usesOf(hash: string): Promise<number> {
    return this.uses(this.deps.db, hash);
  }

  async uses(db: Executor, hash: string): Promise<number> {
    const row = await db
      .selectFrom('payments_orders')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('payment_link_hash', '=', hash)
      .where('status', 'in', [...PAID_STATUSES])
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The link as a buyer may pay it, or why not (inactive, expired, used up, deleted: all "unavailable"). */
  async payable(hash: string): Promise<{ link: LinkRow } | { unavailable: string }> {
    const link = await this.find(this.deps.db, hash);
    if (!link) return { unavailable: 'This payment link does not exist.' };
    const unavailable = await this.whyUnavailable(link);
    return unavailable ? { unavailable } : { link };
  }

  /** Why a buyer cannot pay this link now (deleted, inactive, expired, used up), or undefined. */
  private async whyUnavailable(link: LinkRow): Promise<string | undefined> {
    if (link.deleted_at) return 'This payment link does not exist.';
    if (!link.active) return 'This payment link is not active.';
    if (link.expires_at && link.expires_at <= this.deps.clock.now()) return 'This payment link has expired.';
    if (link.usage_limit !== null && (await this.uses(this.deps.db, link.hash)) >= link.usage_limit) {
      return 'This payment link has been used up.';
    }
    return undefined;
  }

  /** Inside the checkout's order transaction: lock the link, so concurrent payments respect its limit. */
  async claimUse(db: Executor, hash: string): Promise<void> {
    const link = await db
      .selectFrom('payments_links')
      .selectAll()
      .where('hash', '=', hash)
      .forUpdate()
      .executeTakeFirst();
    if (!link || link.deleted_at || !link.active)
      throw new DomainError('invalid_state', 'the payment link is not available');
    if (link.usage_limit !== null && (await this.uses(db, hash)) >= link.usage_limit) {
      throw new DomainError('invalid_state', 'the payment link has been used up');
    }
  }

  /** The merchant a link's checkout acts for. */
  merchantOf(link: LinkRow): Promise<MerchantScope> {
    return loadMerchantScope(this.deps.db, link.merchant_id);
  }

  /** A transaction of an order paid through this link (a result page shows nothing else). */
  async transactionOf(hash: string, transactionId: number) {
    if (!Number.isSafeInteger(transactionId) || transactionId <= 0) return undefined;
    return this.deps.db
      .selectFrom('payments_transactions as t')
      .innerJoin('payments_orders as o', 'o.id', 't.order_id')
      .innerJoin('payments_links as l', 'l.hash', 'o.payment_link_hash')
      .select(['t.id', 't.order_id', 't.site_id', 't.status', 't.amount', 't.currency', 'l.back_url'])
      .where('t.id', '=', transactionId)
      .where('o.payment_link_hash', '=', hash)
      .executeTakeFirst();
  }

  private async find(db: Executor, hash: string): Promise<LinkRow | undefined> {
    if (!/^[A-Za-z0-9_-]{10,64}$/.test(hash)) return undefined;
    return db.selectFrom('payments_links').selectAll().where('hash', '=', hash).executeTakeFirst();
  }

  private terms(
    input: {
      amount?: ClientAmount | undefined;
      currency?: string | undefined;
      orderType: string;
      intervalType?: string | undefined;
      intervalValue?: number | undefined;
    },
    isNew: boolean,
  ) {
    if (isNew && input.amount === undefined) throw validationFailed('amount', 'amount is required');
    if (isNew && input.currency === undefined) throw validationFailed('currency', 'currency is required');
    const asset = input.currency !== undefined ? findAsset(input.currency) : undefined;
    if (input.currency !== undefined && asset?.kind !== 'fiat') {
      throw validationFailed('currency', 'currency must be an ISO 4217 code');
    }
    if (input.orderType === 'recurring' && (!input.intervalType || !input.intervalValue)) {
      throw validationFailed('intervalType', 'recurring links need intervalType and intervalValue');
    }
    return {
      currency: asset?.code,
      amount: input.amount !== undefined && asset ? boundedAmount(input.amount, asset) : undefined,
    };
  }
}
