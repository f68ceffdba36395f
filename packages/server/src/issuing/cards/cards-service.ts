// Cards of the card issuing API (docs/issuing.md, Cards): issuing virtual and physical cards on an
// open account after KYC approval, the status transitions of card.ts, reissue by reason; the audited,
// rate-limited reveals of its secrets are in card-secrets.ts. cardStatusChanged is published with every status change.

import { createHmac, randomUUID } from 'node:crypto';
import type { Db, Executor, Tx } from '../../platform/db/database.ts';
import { PG_ERRORS, pgConstraint, pgErrorCode } from '../../platform/db/database.ts';
import type { CardStatus } from '../../platform/db/schema.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { isUuid } from '../../platform/ids.ts';
import { publishIssuingEvent } from '../events/publish-issuing-event.ts';
import type { CustomerRef } from '../kyc/kyc-service.ts';
import {
  type CardAction,
  canApply,
  generateCvv,
  generatePan,
  isWeakPin,
  REISSUE_REASONS,
  type ReissueReason,
  TRANSITIONS,
} from './card.ts';
import { cardHolds, refuseIfCardHeld, refuseIfCustomerHeld, setCardStatus } from './card-holds.ts';
import { CardSecretReveals } from './card-secrets.ts';
import {
  CARD_PRODUCTS,
  CARD_VALIDITY_YEARS,
  type Card,
  type CardsDeps,
  DEFAULT_PRODUCT_ID,
  type DeliveryAddress,
  type IssueCardInput,
  stateError,
} from './card-types.ts';

export * from './card-types.ts';

export class CardsService {
  /** Reveals of a card's secrets, and wallet provisioning (card-secrets.ts) */
  readonly secrets: CardSecretReveals;

  constructor(private readonly deps: CardsDeps) {
    this.secrets = new CardSecretReveals(deps, (tx, customer, cardId) => this.lockCard(tx, customer, cardId));
    deps.holds.kinds.set('customer', cardHolds(deps));
  }

  get db(): Db {
    return this.deps.db;
  }

  async issue(customer: CustomerRef, input: IssueCardInput): Promise<Card> {
    const productId = input.subscriptionCardId ?? DEFAULT_PRODUCT_ID;
    if (!(productId in CARD_PRODUCTS)) {
      throw new DomainError('validation_failed', 'unknown card product', { field: 'subscriptionCardId' });
    }
    this.checkPhysicalInput(input);
    return this.deps.transact(async (tx) => {
      if (!(await this.deps.kyc.isApproved(tx, customer.customerId))) {
        throw new DomainError('invalid_state', 'cards can be issued once KYC is approved');
      }
      const account = await tx
        .selectFrom('issuing_accounts')
        .select('id')
        .where('customer_id', '=', customer.customerId)
        .where('currency', '=', input.currency)
        .where('status', '=', 'open')
        .executeTakeFirst();
      if (!account)
        throw new DomainError(
          'invalid_state',
          `open a ${input.currency} account before issuing a card in it`,
          { field: 'currency' },
        );
      const card = await this.insertCard(tx, customer, {
        accountId: account.id,
        productId,
        isVirtual: input.isVirtual,
        label: input.label ?? null,
        deliveryAddress: input.deliveryAddress ?? null,
        pin: input.pin ?? null,
      });
      return card;
    });
  }

  async list(
    customer: CustomerRef,
    filter: { status?: CardStatus; accountId?: string } = {},
  ): Promise<Card[]> {
    let query = this.cardQuery(this.deps.db)
      .where('c.customer_id', '=', customer.customerId)
      .orderBy('c.seq');
    if (filter.status) query = query.where('c.status', '=', filter.status);
    if (filter.accountId) query = query.where('c.account_id', '=', filter.accountId);
    return (await query.execute()).map(toCard);
  }

  /** One of the customer's cards; another customer's is a 404 like an unknown one. */
  async get(db: Executor, customer: CustomerRef, cardId: string): Promise<Card> {
    if (!isUuid(cardId)) throw notFound('card');
    const row = await this.cardQuery(db)
      .where('c.id', '=', cardId)
      .where('c.customer_id', '=', customer.customerId)
      .executeTakeFirst();
    if (!row) throw notFound('card');
    return toCard(row);
  }

  freeze(customer: CustomerRef, cardId: string): Promise<Card> {
    return this.apply(customer, cardId, 'freeze');
  }

  unfreeze(customer: CustomerRef, cardId: string): Promise<Card> {
    return this.apply(customer, cardId, 'unfreeze');
  }

  activate(customer: CustomerRef, cardId: string): Promise<Card> {
    return this.apply(customer, cardId, 'activate');
  }

  /** The card producer has shipped a physical card (sandbox: POST /sandbox/issuing/cards/{cardId}/ship). */
  ship(cardId: string): Promise<Card> {
    return this.applyAsIssuer(cardId, 'ship');
  }

  /** The issuer stops a card it suspects (fraud, compliance): POST /admin/issuing/cards/{cardId}/suspend. */
  suspend(cardId: string): Promise<Card> {
    return this.applyAsIssuer(cardId, 'suspend');
  }

  /** The issuer lifts a suspension: POST /admin/issuing/cards/{cardId}/reinstate. */
  reinstate(cardId: string): Promise<Card> {
    return this.applyAsIssuer(cardId, 'reinstate');
  }

  /** Its account is closing: every card still open on it closes, in the account's transaction. */
  async closeAllOf(tx: Tx, customer: CustomerRef, accountId: string): Promise<void> {
    const open = await tx
      .selectFrom('issuing_cards')
      .select('id')
      .where('account_id', '=', accountId)
      .where('status', '!=', 'closed')
      .orderBy('id')
      .forUpdate()
      .execute();
    for (const card of open) await this.setStatus(tx, customer, card.id, TRANSITIONS.close.to);
  }

  /** An action of the issuer or the card producer on any card (not the cardholder's). */
  private async applyAsIssuer(cardId: string, action: CardAction): Promise<Card> {
    const owner = isUuid(cardId)
      ? await this.deps.db
          .selectFrom('issuing_cards')
          .select(['customer_id', 'partner_id'])
          .where('id', '=', cardId)
          .executeTakeFirst()
      : undefined;
    if (!owner) throw notFound('card');
    if (action === 'reinstate') await refuseIfCardHeld(this.deps.db, cardId);
    return this.apply({ customerId: owner.customer_id, partnerId: owner.partner_id }, cardId, action);
  }

  /**
   * Replaces a card: lost, stolen or compromised cards get a new number; damaged or expired ones keep it
   * with a new expiry and CVV. The old card is closed in the same transaction.
   */
  async reissue(
    customer: CustomerRef,
    cardId: string,
    reason: ReissueReason,
    input: { deliveryAddress?: DeliveryAddress; pin?: string } = {},
  ): Promise<Card> {
    return this.deps.transact(async (tx) => {
      const old = await this.lockCard(tx, customer, cardId);
      if (!canApply('reissue', old.status)) throw stateError('reissue', old.status);
      await this.setStatus(tx, customer, cardId, 'closed');
      const deliveryAddress = (input.deliveryAddress ??
        old.delivery_address ??
        null) as DeliveryAddress | null;
      // The replacement keeps the PIN and delivery address unless new ones are given.
      if (input.pin !== undefined) this.checkPin(input.pin);
      return this.insertCard(tx, customer, {
        accountId: old.account_id,
        productId: old.product_id,
        isVirtual: old.is_virtual,
        label: old.label,
        deliveryAddress,
        pin:
          input.pin ?? (old.pin_enc ? this.deps.encryptor.decrypt(old.pin_enc, `card-pin:${old.id}`) : null),
        replaces: {
          cardId: old.id,
          reason,
          pan: REISSUE_REASONS[reason].isNewNumber
            ? undefined
            : this.deps.encryptor.decrypt(old.pan_enc, `card-pan:${old.id}`),
        },
      });
    });
  }

  // Internals ------------------------------------------------------------------------------------------

  private async apply(customer: CustomerRef, cardId: string, action: CardAction): Promise<Card> {
    return this.deps.transact(async (tx) => {
      const card = await this.lockCard(tx, customer, cardId);
      if (!canApply(action, card.status)) throw stateError(action, card.status);
      await this.setStatus(tx, customer, cardId, TRANSITIONS[action].to);
      return this.get(tx, customer, cardId);
    });
  }

  private setStatus(tx: Tx, customer: CustomerRef, cardId: string, status: CardStatus): Promise<void> {
    return setCardStatus(this.deps, tx, customer, cardId, status);
  }

  async lockCard(tx: Tx, customer: CustomerRef, cardId: string) {
    if (!isUuid(cardId)) throw notFound('card');
    const card = await tx
      .selectFrom('issuing_cards')
      .selectAll()
      .where('id', '=', cardId)
      .where('customer_id', '=', customer.customerId)
      .forUpdate()
      .executeTakeFirst();
    if (!card) throw notFound('card');
    return card;
  }

  private async insertCard(
    tx: Tx,
    customer: CustomerRef,
    input: {
      accountId: string;
      productId: string;
      isVirtual: boolean;
      label: string | null;
      deliveryAddress: DeliveryAddress | null;
      pin: string | null;
      replaces?: { cardId: string; reason: ReissueReason; pan: string | undefined };
    },
  ): Promise<Card> {
    await refuseIfCustomerHeld(tx, this.deps.holds, customer.customerId);
    const now = this.deps.clock.now();
    const expiry = new Date(Date.UTC(now.getUTCFullYear() + CARD_VALIDITY_YEARS, now.getUTCMonth(), 1));
    const status: CardStatus = input.isVirtual ? 'active' : 'pending';
    // A fresh number collides with a live one rarely; the unique index decides, and we draw again.
    for (let attempt = 1; ; attempt++) {
      const id = randomUUID();
      const pan = input.replaces?.pan ?? generatePan(this.deps.bin);
      try {
        await tx
          .insertInto('issuing_cards')
          .values({
            id,
            customer_id: customer.customerId,
            partner_id: customer.partnerId,
            account_id: input.accountId,
            product_id: input.productId,
            is_virtual: input.isVirtual,
            label: input.label,
            status,
            pan_enc: this.deps.encryptor.encrypt(pan, `card-pan:${id}`),
            cvv_enc: this.deps.encryptor.encrypt(generateCvv(), `card-cvv:${id}`),
            pin_enc: input.pin ? this.deps.encryptor.encrypt(input.pin, `card-pin:${id}`) : null,
            pan_fingerprint: this.fingerprint(pan),
            bin: pan.slice(0, 6),
            last4: pan.slice(-4),
            expiry_month: expiry.getUTCMonth() + 1,
            expiry_year: expiry.getUTCFullYear(),
            delivery_address: input.deliveryAddress ? JSON.stringify(input.deliveryAddress) : null,
            replaces_card_id: input.replaces?.cardId ?? null,
            reissue_reason: input.replaces?.reason ?? null,
            created_at: now,
            updated_at: now,
          })
          .execute();
        await publishIssuingEvent(this.deps.outbox, tx, {
          partnerId: customer.partnerId,
          customerId: customer.customerId,
          eventType: 'cardStatusChanged',
          data: { cardId: id, newStatus: status },
        });
        if (!input.replaces) await this.deps.monitoring.issued(tx, customer);
        return this.get(tx, customer, id);
      } catch (err) {
        const isCollision =
          pgErrorCode(err) === PG_ERRORS.uniqueViolation && pgConstraint(err) === 'issuing_cards_live_pan';
        if (!isCollision || input.replaces?.pan || attempt >= 5) throw err;
      }
    }
  }

  private checkPhysicalInput(input: {
    isVirtual: boolean;
    deliveryAddress?: DeliveryAddress | undefined;
    pin?: string | undefined;
  }): void {
    if (input.isVirtual) return;
    if (!input.deliveryAddress) {
      throw new DomainError('validation_failed', 'a physical card needs a deliveryAddress', {
        field: 'deliveryAddress',
      });
    }
    if (!input.pin)
      throw new DomainError('validation_failed', 'a physical card needs a 4-digit pin', { field: 'pin' });
    this.checkPin(input.pin);
  }

  private checkPin(pin: string): void {
    if (isWeakPin(pin))
      throw new DomainError('validation_failed', 'choose a pin that is not a repeated digit or a run', {
        field: 'pin',
      });
  }

  /**
   * The issued card a number belongs to when the expiry (and the CVV, when given) match too: how the
   * card network recognises an on-us card. A mismatch answers undefined, like an unknown number.
   */
  async matchCard(
    db: Executor,
    card: { pan: string; expiryMonth: number; expiryYear: number; cvv?: string },
  ): Promise<string | undefined> {
    const row = await db
      .selectFrom('issuing_cards')
      .select(['id', 'expiry_month', 'expiry_year', 'cvv_enc'])
      .where('pan_fingerprint', '=', this.fingerprint(card.pan))
      .where('status', '!=', 'closed')
      .executeTakeFirst();
    if (!row || row.expiry_month !== card.expiryMonth || row.expiry_year !== card.expiryYear)
      return undefined;
    if (
      card.cvv !== undefined &&
      this.deps.encryptor.decrypt(row.cvv_enc, `card-cvv:${row.id}`) !== card.cvv
    ) {
      return undefined;
    }
    return row.id;
  }

  private fingerprint(pan: string): string {
    return createHmac('sha256', this.deps.fingerprintKey).update(pan).digest('hex');
  }

  private cardQuery(db: Executor) {
    return db
      .selectFrom('issuing_cards as c')
      .innerJoin('issuing_accounts as a', 'a.id', 'c.account_id')
      .select([
        'c.id',
        'c.account_id',
        'a.currency',
        'c.product_id',
        'c.status',
        'c.is_virtual',
        'c.label',
        'c.bin',
        'c.last4',
        'c.expiry_month',
        'c.expiry_year',
        'c.replaces_card_id',
        'c.reissue_reason',
        'c.created_at',
      ]);
  }
}

function toCard(row: {
  id: string;
  account_id: string;
  currency: string;
  product_id: string;
  status: CardStatus;
  is_virtual: boolean;
  label: string | null;
  bin: string;
  last4: string;
  expiry_month: number;
  expiry_year: number;
  replaces_card_id: string | null;
  reissue_reason: string | null;
  created_at: Date;
}): Card {
  return {
    cardId: row.id,
    accountId: row.account_id,
    currency: row.currency,
    subscriptionCardId: row.product_id,
    status: row.status,
    isVirtual: row.is_virtual,
    label: row.label,
    bin: row.bin,
    last4: row.last4,
    expiryMonth: row.expiry_month,
    expiryYear: row.expiry_year,
    replacesCardId: row.replaces_card_id,
    reissueReason: row.reissue_reason,
    createdAt: row.created_at,
  };
}
