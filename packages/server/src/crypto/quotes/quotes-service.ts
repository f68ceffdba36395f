// Exchange-rate quotes (docs/crypto.md: valid 60 seconds). A store asks for one with
// POST /stores/exchange_rates; the hosted payment page makes one each time the buyer picks a currency.
// A quote is used at most once, and never after it expired.

import type { Selectable } from 'kysely';
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import type { Db, Executor } from '../../platform/db/database.ts';
import type { CryptoQuotesTable } from '../../platform/db/schema.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { newId } from '../../platform/ids.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { Store } from '../../platform/tenants/stores-service.ts';
import type { FxRates } from '../../rails/fx/port.ts';

export const QUOTE_TTL_SECONDS = 60;
/** Fiat currencies a store can price orders in and settle to */
export const SETTLEMENT_CURRENCIES = ['EUR', 'USD', 'GBP', 'CHF', 'RON', 'PLN'] as const;

export interface Quote {
  id: string;
  kind: 'crypto' | 'fiat';
  from: string;
  to: string;
  rateE18: bigint;
  orderId: string | null;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

export const isSettlementCurrency = (code: string) =>
  (SETTLEMENT_CURRENCIES as readonly string[]).includes(code);

export class QuotesService {
  constructor(private readonly deps: { db: Db; clock: Clock; fx: FxRates }) {}

  /** A store's quote: `crypto` prices one of its accepted currencies in a settlement currency, `fiat` the reverse. */
  async create(store: Store, input: { kind: 'crypto' | 'fiat'; from: string; to: string }): Promise<Quote> {
    const [crypto, fiat, cryptoField, fiatField] =
      input.kind === 'crypto' ? [input.from, input.to, 'from', 'to'] : [input.to, input.from, 'to', 'from'];
    const pointer = (f: string) => `data.attributes.${f}`;
    if (!store.currencies.some((c) => c.currency === crypto))
      throw new DomainError('validation_failed', `${crypto} is not a currency this store accepts`, {
        field: pointer(cryptoField),
      });
    if (!isSettlementCurrency(fiat))
      throw new DomainError(
        'validation_failed',
        `${fiat} is not a settlement currency (${SETTLEMENT_CURRENCIES.join(', ')})`,
        { field: pointer(fiatField) },
      );
    return this.issue(this.deps.db, store.id, { ...input, orderId: null });
  }

  /** A quote made for a buyer on the hosted page: the order's crypto in the order's currency. */
  async issue(
    db: Executor,
    storeId: string,
    input: { kind: 'crypto' | 'fiat'; from: string; to: string; orderId: string | null },
  ): Promise<Quote> {
    const now = this.deps.clock.now();
    const row = await db
      .insertInto('crypto_quotes')
      .values({
        id: newId('quote'),
        store_id: storeId,
        order_id: input.orderId,
        kind: input.kind,
        from_currency: input.from,
        to_currency: input.to,
        rate_e18: await this.deps.fx.rate(db, input.from, input.to),
        created_at: now,
        expires_at: addSeconds(now, QUOTE_TTL_SECONDS),
        used_at: input.orderId ? now : null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toQuote(row);
  }

  async get(store: Store, id: string): Promise<Quote> {
    const row = await this.deps.db
      .selectFrom('crypto_quotes')
      .selectAll()
      .where('id', '=', id)
      .where('store_id', '=', store.id)
      .executeTakeFirst();
    if (!row) throw notFound('exchange rate');
    return toQuote(row);
  }

  /**
   * Uses a store's quote to lock an order's rate: only a `crypto` quote into the order's currency, unused
   * and unexpired. Refusals name the field the quote id came in.
   */
  async claim(
    db: Executor,
    storeId: string,
    id: string,
    input: { orderId: string; currency: string; field: string },
  ): Promise<Quote> {
    const row = await db
      .selectFrom('crypto_quotes')
      .selectAll()
      .where('id', '=', id)
      .where('store_id', '=', storeId)
      .forUpdate()
      .executeTakeFirst();
    const refuse = (message: string) => new DomainError('validation_failed', message, { field: input.field });
    if (!row) throw refuse('no such exchange rate quote');
    const now = this.deps.clock.now();
    if (row.expires_at <= now)
      throw refuse(`the exchange rate quote expired at ${row.expires_at.toISOString()}`);
    if (row.used_at !== null) throw refuse('the exchange rate quote was already used');
    if (row.kind !== 'crypto' || row.to_currency !== input.currency)
      throw refuse(
        `the quote prices ${row.from_currency} in ${row.to_currency}, not a crypto currency in ${input.currency}`,
      );
    const claimed = await db
      .updateTable('crypto_quotes')
      .set({ used_at: now, order_id: input.orderId })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return toQuote(claimed);
  }

  async find(db: Executor, id: string): Promise<Quote | undefined> {
    const row = await db.selectFrom('crypto_quotes').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toQuote(row);
  }

  isValid(quote: Quote): boolean {
    return this.deps.clock.now() < quote.expiresAt;
  }

  status(quote: Quote): 'active' | 'used' | 'expired' {
    if (quote.usedAt && quote.orderId) return 'used';
    return this.isValid(quote) ? 'active' : 'expired';
  }
}

export function assetOf(code: string) {
  const asset = findAsset(code);
  if (!asset) throw new Error(`unknown asset ${code}`);
  return asset;
}

function toQuote(row: Selectable<CryptoQuotesTable>): Quote {
  return {
    id: row.id,
    kind: row.kind,
    from: row.from_currency,
    to: row.to_currency,
    rateE18: BigInt(row.rate_e18),
    orderId: row.order_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    usedAt: row.used_at,
  };
}
