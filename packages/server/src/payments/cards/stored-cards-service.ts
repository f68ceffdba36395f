// Stored cards (spec, Cards): saved at payment time (saveCard, or as the mandate of a recurring or
// managed order). The number is encrypted at rest, bound to the row's token; the CVV is never stored.
// Reads only ever show brand, masked number, last four and expiry.
import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Encryptor } from '../../platform/crypto/encryption.ts';
import type { Db, Executor, Tx } from '../../platform/db/database.ts';
import type { PaymentsCardsTable } from '../../platform/db/schema.ts';
import { notFound } from '../../platform/errors/domain-error.ts';
import type { BinInfo, CardDetails, CardNetwork } from '../../rails/card-network/port.ts';
import type { Page } from '../http/envelope.ts';
import type { MerchantScope } from '../sites.ts';

export interface StoredCard {
  id: number;
  customerId: number;
  orderId: number | null;
  token: string;
  kind: 'card' | 'networkToken';
  brand: string;
  bin: string;
  last4: string;
  expiryMonth: number;
  expiryYear: number;
  nameOnCard: string | null;
  cardHolderCountry: string | null;
  cardHolderState: string | null;
  status: 'active' | 'deleted';
  createdAt: Date;
}

export interface CardToSave {
  merchantId: number;
  customerId: number;
  orderId: number;
  kind: 'card' | 'networkToken';
  brand: string;
  card: CardDetails;
  nameOnCard: string | null;
  holderCountry: string | null;
  holderState: string | null;
}

type Row = Selectable<PaymentsCardsTable>;

export class StoredCardsService {
  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      encryptor: Encryptor;
      network: Pick<CardNetwork, 'binInfo'>;
    },
  ) {}

  /** The card network's BIN table entry for a stored card's range. */
  binInfo(card: StoredCard): BinInfo {
    return this.binOf(card.bin);
  }

  /** The card network's BIN table entry for a card's first six digits (a transaction's card). */
  binOf(bin: string): BinInfo {
    return this.deps.network.binInfo(bin);
  }

  /**
   * Saves the card for the customer, or reuses the one already saved for them (matched by a keyed
   * fingerprint of the number), taking the newer expiry and holder details.
   */
  async save(tx: Tx, input: CardToSave): Promise<number> {
    const token = randomUUID();
    const row = await tx
      .insertInto('payments_cards')
      .values({
        pan_fingerprint: this.deps.encryptor.fingerprint('payments-card', input.card.pan),
        merchant_id: input.merchantId,
        customer_id: input.customerId,
        token,
        kind: input.kind,
        brand: input.brand,
        bin: input.card.pan.slice(0, 6),
        last4: input.card.pan.slice(-4),
        expiry_month: input.card.expiryMonth,
        expiry_year: input.card.expiryYear,
        name_on_card: input.nameOnCard,
        holder_country: input.holderCountry,
        holder_state: input.holderState,
        pan_enc: this.deps.encryptor.encrypt(input.card.pan, `payments-card:${token}`),
        order_id: input.orderId,
        status: 'active',
        created_at: this.deps.clock.now(),
      })
      .onConflict((oc) =>
        oc
          .columns(['customer_id', 'pan_fingerprint'])
          .where('status', '=', 'active')
          .where('pan_fingerprint', 'is not', null)
          .doUpdateSet((eb) => ({
            expiry_month: eb.ref('excluded.expiry_month'),
            expiry_year: eb.ref('excluded.expiry_year'),
            name_on_card: eb.ref('excluded.name_on_card'),
            holder_country: eb.ref('excluded.holder_country'),
            holder_state: eb.ref('excluded.holder_state'),
          })),
      )
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /** The customer's live stored card, decrypted for a charge (no CVV: it was never kept). */
  async forCharge(
    db: Executor,
    merchantId: number,
    customerId: number,
    cardId: number,
  ): Promise<{ card: CardDetails; stored: StoredCard } | undefined> {
    const row = await db
      .selectFrom('payments_cards')
      .selectAll()
      .where('id', '=', cardId)
      .where('merchant_id', '=', merchantId)
      .where('customer_id', '=', customerId)
      .where('status', '=', 'active')
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      card: {
        pan: this.deps.encryptor.decrypt(row.pan_enc, `payments-card:${row.token}`),
        expiryMonth: row.expiry_month,
        expiryYear: row.expiry_year,
      },
      stored: present(row),
    };
  }

  async get(merchant: MerchantScope, id: number, customerId?: number): Promise<StoredCard> {
    let query = this.deps.db
      .selectFrom('payments_cards')
      .selectAll()
      .where('id', '=', id)
      .where('merchant_id', '=', merchant.merchantId)
      .where('customer_id', 'in', customersOf(this.deps.db, merchant))
      .where('status', '=', 'active');
    if (customerId !== undefined) query = query.where('customer_id', '=', customerId);
    const row = await query.executeTakeFirst();
    if (!row) throw notFound('card');
    return present(row);
  }

  async list(
    merchant: MerchantScope,
    filter: { customerId: number; orderId?: number; hasToken?: boolean; cardStatus?: 'active' | 'deleted' },
    page: Page,
  ) {
    let query = this.deps.db
      .selectFrom('payments_cards')
      .where('merchant_id', '=', merchant.merchantId)
      .where('customer_id', '=', filter.customerId)
      .where('customer_id', 'in', customersOf(this.deps.db, merchant))
      .where('status', '=', filter.cardStatus ?? (filter.hasToken === false ? 'deleted' : 'active'));
    if (filter.orderId !== undefined) query = query.where('order_id', '=', filter.orderId);
    // hasToken (the real service's name): the card is kept to be charged again, i.e. not deleted.
    if (filter.hasToken !== undefined)
      query = query.where('status', '=', filter.hasToken ? 'active' : 'deleted');
    const total = await query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    const rows = await query
      .selectAll()
      .orderBy('id', page.newestFirst ? 'desc' : 'asc')
      .limit(page.perPage)
      .offset((page.page - 1) * page.perPage)
      .execute();
    return { items: rows.map(present), total: Number(total.n) };
  }

  /** Deletes the card: it can no longer be charged (recurring bills with it then fail as hard declines). */
  async delete(merchant: MerchantScope, id: number, customerId?: number): Promise<void> {
    await this.get(merchant, id, customerId);
    await this.deps.db
      .updateTable('payments_cards')
      .set({ status: 'deleted', deleted_at: this.deps.clock.now() })
      .where('id', '=', id)
      .where('merchant_id', '=', merchant.merchantId)
      .execute();
  }

  async deleteForCustomer(tx: Tx, customerId: number): Promise<void> {
    await tx
      .updateTable('payments_cards')
      .set({ status: 'deleted', deleted_at: this.deps.clock.now() })
      .where('customer_id', '=', customerId)
      .where('status', '=', 'active')
      .execute();
  }
}

function present(row: Row): StoredCard {
  return {
    id: row.id,
    customerId: row.customer_id,
    orderId: row.order_id,
    token: row.token,
    kind: row.kind,
    brand: row.brand,
    bin: row.bin,
    last4: row.last4,
    expiryMonth: row.expiry_month,
    expiryYear: row.expiry_year,
    nameOnCard: row.name_on_card,
    cardHolderCountry: row.holder_country,
    cardHolderState: row.holder_state,
    status: row.status,
    createdAt: row.created_at,
  };
}

/** The customers of the sites the caller acts for (a site's key: that site only). */
function customersOf(db: Db, merchant: MerchantScope) {
  return db.selectFrom('payments_customers').select('id').where('site_id', 'in', merchant.siteIds);
}
