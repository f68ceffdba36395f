// What the card network posts to an issued card without an authorization's hold (docs/issuing.md,
// Clearing): a force post (a clearing that was never authorized), the merchant's refund of a cleared
// payment, and credits pushed by the network (an on-us refund). Each is a settled transaction of its
// own, with its ledger move and its events, in one database transaction.
import type { Insertable } from 'kysely';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Tx } from '../../platform/db/database.ts';
import type { IssuingTransactionsTable } from '../../platform/db/schema.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { uuidv7 } from '../../platform/ids.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import { type ClientAmount, formatAmountIn } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { DeclineReason as NetworkDeclineReason } from '../../rails/card-network/port.ts';
import type { Authorizations } from './authorization.ts';
import type { AuthorizingCard } from './authorize-at-once.ts';
import {
  assetOf,
  declinedWhenShort,
  type IssuingTransaction,
  type MerchantFacts,
  stateError,
} from './transaction.ts';
import { leftOf, ownedBy, type TransactionRecords } from './transaction-records.ts';

export class UnheldPostings {
  constructor(
    private readonly deps: {
      transact: Transact;
      clock: Clock;
      ledger: Ledger;
      records: TransactionRecords;
      authorizations: Authorizations;
    },
  ) {}

  /** A clearing with no authorization (a force post): the account pays it at once if it can. */
  async forcePost(
    input: { cardId: string; amount: ClientAmount; currency: string } & MerchantFacts,
  ): Promise<IssuingTransaction> {
    const asset = findAsset(input.currency.toUpperCase());
    if (!asset)
      throw new DomainError('validation_failed', 'currency must be an ISO 4217 code', { field: 'currency' });
    const amount = input.amount.in(asset);
    return this.deps.transact(async (tx) => {
      const card = await this.deps.authorizations.loadCard(tx, input.cardId);
      if (!card) throw notFound('card');
      if (card.currency !== asset.code) {
        throw new DomainError('validation_failed', `the card's account holds ${card.currency}`, {
          field: 'currency',
        });
      }
      const id = await this.posted(tx, card, 'card_payment', amount, input.merchant, {
        clearing_count: 1,
        force_post: true,
        authorized_at: null,
        // Where it was spent, kept as an authorization keeps it (a force post asks no controls: it is owed)
        mcc: input.mcc,
        merchant_country: input.merchantCountry,
        merchant_id: input.merchantId,
        channel: input.channel,
      });
      await declinedWhenShort(
        this.deps.records.payNetwork(
          tx,
          { id, currency: asset.code, ledgerAccountId: card.ledger_account_id },
          amount,
          `issuing-clear:${id}`,
        ),
      );
      return this.deps.records.get(tx, id);
    });
  }

  /** The merchant refunds a cleared payment to the card: a credit transaction of its own, up to what is left. */
  async refund(input: { transactionId: string; amount: ClientAmount }): Promise<IssuingTransaction> {
    return this.deps.transact(async (tx) => {
      const t = await this.deps.records.lock(tx, input.transactionId);
      const amount = input.amount.in(assetOf(t.currency));
      const refundable = leftOf(t);
      if (t.type !== 'card_payment' || refundable <= 0n)
        throw stateError('refund', `${t.status} with nothing cleared left to refund`);
      if (amount > refundable) {
        throw new DomainError(
          'validation_failed',
          `a refund is at most what is left of the payment (${formatAmountIn(refundable, t.currency)})`,
          {
            field: 'amount',
            details: { refundable: formatAmountIn(refundable, t.currency) },
          },
        );
      }
      await tx
        .updateTable('issuing_transactions')
        .set({
          refunded_amount: (BigInt(t.refunded_amount) + amount).toString(),
          updated_at: this.deps.clock.now(),
        })
        .where('id', '=', t.id)
        .execute();
      const card = await this.deps.authorizations.loadCard(tx, t.card_id);
      if (!card) throw new Error(`card ${t.card_id} vanished`);
      const refund = await this.credit(tx, card, {
        amount,
        merchant: t.merchant,
        originalTransactionId: t.id,
      });
      return this.deps.records.get(tx, refund);
    });
  }

  /**
   * Funds pushed to an issued card by the card network (a refund of an on-us payment, or a credit): the
   * card network pays the account at once, recorded as a settled `refund` transaction.
   */
  async creditFromNetwork(
    tx: Tx,
    input: { cardId: string; currency: string; amount: bigint; merchant: string; networkReference: string },
  ): Promise<IssuingTransaction | NetworkDeclineReason> {
    const card = await this.deps.authorizations.loadCard(tx, input.cardId);
    if (!card) throw notFound('card');
    if (card.account_status !== 'open' || card.status === 'closed') return 'card_not_active';
    if (card.currency !== input.currency) return 'currency_not_supported';
    const id = await this.credit(tx, card, {
      amount: input.amount,
      merchant: input.merchant,
      networkReference: input.networkReference,
    });
    return this.deps.records.get(tx, id);
  }

  /** A settled `refund` transaction: the card network pays the account. Answers its id. */
  private async credit(
    tx: Tx,
    card: AuthorizingCard,
    input: { amount: bigint; merchant: string; networkReference?: string; originalTransactionId?: string },
  ): Promise<string> {
    const id = await this.posted(tx, card, 'refund', input.amount, input.merchant, {
      network_reference: input.networkReference ?? null,
      original_transaction_id: input.originalTransactionId ?? null,
    });
    await this.deps.ledger.transfer(tx, {
      operationId: `issuing-credit:${id}`,
      legs: [
        {
          accountId: await this.deps.records.settlementAccount(tx, card.currency, id),
          amount: -input.amount,
        },
        { accountId: card.ledger_account_id, amount: input.amount },
      ],
      metadata: { transactionId: id },
    });
    return id;
  }

  /**
   * A transaction settled as it is created, with its two events (created, settled); the caller posts
   * its money in the same database transaction. Answers its id.
   */
  private async posted(
    tx: Tx,
    card: AuthorizingCard,
    type: 'card_payment' | 'refund',
    amount: bigint,
    merchant: string,
    extra: Partial<Insertable<IssuingTransactionsTable>>,
  ): Promise<string> {
    const id = uuidv7();
    const now = this.deps.clock.now();
    await tx
      .insertInto('issuing_transactions')
      .values({
        id,
        ...ownedBy(card),
        type,
        status: 'settled',
        currency: card.currency,
        amount: amount.toString(),
        settled_amount: amount.toString(),
        merchant,
        decline_reason: null,
        created_at: now,
        authorized_at: now,
        settled_at: now,
        updated_at: now,
        ...extra,
      })
      .execute();
    const customer = { customerId: card.customer_id, partnerId: card.partner_id };
    await this.deps.records.event(tx, customer, 'transactionCreated', { transactionId: id });
    await this.deps.records.event(tx, customer, 'transactionSettled', { transactionId: id });
    return id;
  }
}
