// A card's secrets and wallets: its number, CVV and PIN decrypted for its holder (every reveal audited,
// at most SECRET_REVEALS_PER_HOUR an hour), and its provisioning to Apple Pay and Google Pay.
import type { Selectable } from 'kysely';
import { auditActionName } from '../../platform/audit/audit-actions.ts';
import { appendAudit } from '../../platform/audit/audit-trail.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import type { Tx } from '../../platform/db/database.ts';
import type { IssuingCardsTable } from '../../platform/db/schema.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { isUuid } from '../../platform/ids.ts';
import type {
  ApplePayProvisioning,
  ApplePayRequest,
  GooglePayProvisioning,
} from '../../rails/wallet-tokenization/port.ts';
import type { CustomerRef } from '../kyc/kyc-service.ts';
import type { CardsDeps } from './card-types.ts';
import { type CardSecrets, SECRET_REVEALS_PER_HOUR, stateError } from './card-types.ts';

/** Locks a card of this customer (CardsService.lockCard), 404 when it is not theirs */
type LockCard = (tx: Tx, customer: CustomerRef, cardId: string) => Promise<Selectable<IssuingCardsTable>>;

export class CardSecretReveals {
  constructor(
    private readonly deps: CardsDeps,
    private readonly lockCard: LockCard,
  ) {}

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
}
