// Cards of the card issuing API (docs/issuing.md, Cards): issuing virtual and physical cards on an
// open account after KYC approval, the status transitions of card.ts, reissue by reason, and audited,
// rate-limited reveals of card secrets. cardStatusChanged is published with every status change.

import { createHmac, randomUUID } from 'node:crypto';
import { auditActionName } from '../../platform/audit/audit-actions.ts';
import { appendAudit } from '../../platform/audit/audit-trail.ts';
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import type { Encryptor } from '../../platform/crypto/encryption.ts';
import type { Db, Executor, Tx } from '../../platform/db/database.ts';
import { PG_ERRORS, pgConstraint, pgErrorCode } from '../../platform/db/database.ts';
import type { CardStatus } from '../../platform/db/schema.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import { isUuid } from '../../platform/ids.ts';
import type {
  ApplePayProvisioning,
  ApplePayRequest,
  GooglePayProvisioning,
  WalletTokenization,
} from '../../rails/wallet-tokenization/port.ts';
import { publishIssuingEvent } from '../events/publish-issuing-event.ts';
import type { CustomerRef, KycService } from '../kyc/kyc-service.ts';
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

/** The program's card products (`subscriptionCardId` in the real service's body). */
export const CARD_PRODUCTS = {
  '0b5f0d60-4b7e-4b8e-8f2e-7d1a5c9e0001': { name: 'Tessera Debit', network: 'VISA' },
} as const;
export const DEFAULT_PRODUCT_ID = '0b5f0d60-4b7e-4b8e-8f2e-7d1a5c9e0001';

/** Years a new card is valid (default: 4) */
export const CARD_VALIDITY_YEARS = 4;
/** Secret reveals allowed per card per hour (default: 5) */
export const SECRET_REVEALS_PER_HOUR = 5;

export interface DeliveryAddress {
  name: string;
  line1: string;
  line2?: string | undefined;
  city: string;
  postalCode: string;
  country: string;
}

export interface IssueCardInput {
  subscriptionCardId?: string | undefined;
  isVirtual: boolean;
  currency: string;
  label?: string | undefined;
  deliveryAddress?: DeliveryAddress | undefined;
  pin?: string | undefined;
}

export interface Card {
  cardId: string;
  accountId: string;
  currency: string;
  subscriptionCardId: string;
  status: CardStatus;
  isVirtual: boolean;
  label: string | null;
  bin: string;
  last4: string;
  expiryMonth: number;
  expiryYear: number;
  replacesCardId: string | null;
  reissueReason: string | null;
  createdAt: Date;
}

export interface CardSecrets {
  pan: string;
  cvv: string;
  expiryMonth: number;
  expiryYear: number;
}

export interface CardsDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  outbox: Outbox;
  encryptor: Encryptor;
  /** Keys the PAN fingerprint used for uniqueness (never the PAN itself) */
  fingerprintKey: Uint8Array;
  bin: string;
  kyc: KycService;
  tokenization: WalletTokenization;
}

export class CardsService {
  constructor(private readonly deps: CardsDeps) {}

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

  /** Decrypts the card's secrets for its holder; every reveal is audited and at most 5 an hour. */
  async revealSecrets(
    customer: CustomerRef,
    cardId: string,
    audit: { requestId: string; ip: string },
  ): Promise<CardSecrets> {
    return this.deps.transact(async (tx) => {
      const card = await this.lockCard(tx, customer, cardId);
      if (card.status === 'closed') throw stateError('reveal the secrets of', card.status);
      const since = addSeconds(this.deps.clock.now(), -3600);
      const recent = await tx
        .selectFrom('issuing_card_secret_reveals')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('card_id', '=', cardId)
        .where('revealed_at', '>', since)
        .executeTakeFirstOrThrow();
      if (Number(recent.n) >= SECRET_REVEALS_PER_HOUR) {
        throw new DomainError(
          'rate_limited',
          `card secrets can be shown ${SECRET_REVEALS_PER_HOUR} times an hour`,
          { retryAfterSeconds: 3600 },
        );
      }
      await tx
        .insertInto('issuing_card_secret_reveals')
        .values({
          card_id: cardId,
          customer_id: customer.customerId,
          request_id: audit.requestId,
          ip: audit.ip,
          revealed_at: this.deps.clock.now(),
        })
        .execute();
      // Every access to card data is in the audit trail too (PCI DSS 10.2.1), committed with the reveal.
      await appendAudit(tx, {
        at: this.deps.clock.now(),
        actorKind: 'issuing_customer',
        actor: customer.customerId,
        source: audit.ip,
        action: auditActionName('card secrets revealed'),
        objectId: cardId,
        tenant: { kind: 'partner', id: customer.partnerId },
        detail: {},
        outcome: 'succeeded',
        status: null,
        requestId: audit.requestId,
      });
      return {
        pan: this.deps.encryptor.decrypt(card.pan_enc, `card-pan:${card.id}`),
        cvv: this.deps.encryptor.decrypt(card.cvv_enc, `card-cvv:${card.id}`),
        expiryMonth: card.expiry_month,
        expiryYear: card.expiry_year,
      };
    });
  }

  /** Apple Pay In-App Provisioning data for an active card (the tokenization rail produces it). */
  async provisionApplePay(
    customer: CustomerRef,
    cardId: string,
    request: ApplePayRequest,
  ): Promise<ApplePayProvisioning> {
    return this.deps.tokenization.applePay(await this.provisionable(customer, cardId), request);
  }

  /** Google Pay push-provisioning data for an active card. */
  async provisionGooglePay(customer: CustomerRef, cardId: string): Promise<GooglePayProvisioning> {
    return this.deps.tokenization.googlePay(await this.provisionable(customer, cardId));
  }

  // Internals ------------------------------------------------------------------------------------------

  private async provisionable(customer: CustomerRef, cardId: string) {
    if (!isUuid(cardId)) throw notFound('card');
    const card = await this.deps.db
      .selectFrom('issuing_cards as c')
      .leftJoin('issuing_kyc as k', 'k.customer_id', 'c.customer_id')
      .select(['c.id', 'c.status', 'c.pan_enc', 'c.expiry_month', 'c.expiry_year', 'k.steps'])
      .where('c.id', '=', cardId)
      .where('c.customer_id', '=', customer.customerId)
      .executeTakeFirst();
    if (!card) throw notFound('card');
    if (card.status !== 'active') throw stateError('add to a wallet', card.status);
    const info = (card.steps?.['personal-info'] ?? {}) as { firstName?: string; lastName?: string };
    return {
      cardId: card.id,
      pan: this.deps.encryptor.decrypt(card.pan_enc, `card-pan:${card.id}`),
      expiryMonth: card.expiry_month,
      expiryYear: card.expiry_year,
      holderName: [info.firstName, info.lastName].filter(Boolean).join(' ') || 'Cardholder',
    };
  }

  private async apply(customer: CustomerRef, cardId: string, action: CardAction): Promise<Card> {
    return this.deps.transact(async (tx) => {
      const card = await this.lockCard(tx, customer, cardId);
      if (!canApply(action, card.status)) throw stateError(action, card.status);
      await this.setStatus(tx, customer, cardId, TRANSITIONS[action].to);
      return this.get(tx, customer, cardId);
    });
  }

  private async setStatus(tx: Tx, customer: CustomerRef, cardId: string, status: CardStatus): Promise<void> {
    await tx
      .updateTable('issuing_cards')
      .set({ status, updated_at: this.deps.clock.now() })
      .where('id', '=', cardId)
      .execute();
    await publishIssuingEvent(this.deps.outbox, tx, {
      partnerId: customer.partnerId,
      customerId: customer.customerId,
      eventType: 'cardStatusChanged',
      data: { cardId, newStatus: status },
    });
  }

  private async lockCard(tx: Tx, customer: CustomerRef, cardId: string) {
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

function stateError(action: string, status: CardStatus): DomainError {
  return new DomainError('invalid_state', `cannot ${action} a card that is ${status}`, {
    details: { status },
  });
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
