// What every phase of a card transaction shares: reading and locking its record, the card network's
// settlement account it moves money with, and publishing its events.
import type { Executor, Tx } from '../../platform/db/database.ts';
import { notFound } from '../../platform/errors/domain-error.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import { isUuid } from '../../platform/ids.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import { type IssuingEventType, publishIssuingEvent } from '../events/publish-issuing-event.ts';
import type { CustomerRef } from '../kyc/kyc-service.ts';
import type { IssuingTransaction } from './transaction.ts';

/**
 * Every authorization credits the card network's settlement account. One row for all of them would
 * serialise every authorization on its lock, so it is split into shards, picked by transaction id; the
 * network's position is the sum of its shards.
 */
export const NETWORK_SETTLEMENT_SHARDS = 16;
const SETTLEMENT_PURPOSES = Array.from(
  { length: NETWORK_SETTLEMENT_SHARDS },
  (_, shard) => `settlement:${shard}`,
);

export type TransactionEvent = Extract<IssuingEventType, `transaction${string}`>;

export class TransactionRecords {
  constructor(private readonly deps: { ledger: Ledger; outbox: Outbox }) {}

  /** The card network's settlement shard for this transaction, in its currency. */
  async settlementAccount(tx: Executor, currency: string, transactionId: string): Promise<string> {
    const shards = await this.deps.ledger.systemAccounts(
      tx,
      { ownerType: 'issuing_network', ownerId: 'card-network', asset: currency, isBounded: false },
      SETTLEMENT_PURPOSES,
    );
    return shards[Number.parseInt(transactionId.slice(0, 8), 16) % shards.length] as string;
  }

  /** The account pays the card network `amount` now (refused, nothing written, when it cannot). */
  async payNetwork(
    tx: Tx,
    t: { id: string; currency: string; ledgerAccountId: string },
    amount: bigint,
    operationId: string,
  ): Promise<void> {
    await this.deps.ledger.transfer(tx, {
      operationId,
      legs: [
        { accountId: t.ledgerAccountId, amount: -amount },
        { accountId: await this.settlementAccount(tx, t.currency, t.id), amount },
      ],
      metadata: { transactionId: t.id },
    });
  }

  /** The record locked for a step; an unknown id is a 404. */
  async lock(tx: Tx, transactionId: string) {
    const t = isUuid(transactionId)
      ? await tx
          .selectFrom('issuing_transactions')
          .selectAll()
          .where('id', '=', transactionId)
          .forUpdate()
          .executeTakeFirst()
      : undefined;
    if (!t) throw notFound('transaction');
    return t;
  }

  async event(
    tx: Executor,
    customer: CustomerRef,
    eventType: TransactionEvent,
    data: Record<string, unknown>,
  ) {
    await publishIssuingEvent(this.deps.outbox, tx, {
      partnerId: customer.partnerId,
      customerId: customer.customerId,
      eventType,
      data,
    });
  }

  async get(db: Executor, transactionId: string): Promise<IssuingTransaction> {
    const found = await this.find(db, transactionId);
    if (!found) throw new Error(`transaction ${transactionId} vanished`);
    return found;
  }

  async find(db: Executor, transactionId: string): Promise<IssuingTransaction | undefined> {
    const row = await db
      .selectFrom('issuing_transactions as t')
      .leftJoin('issuing_3ds_challenges as ch', 'ch.transaction_id', 't.id')
      .selectAll('t')
      .select([
        'ch.id as challenge_id',
        'ch.status as challenge_status',
        'ch.auth_type',
        'ch.expires_at as challenge_expires_at',
      ])
      .where('t.id', '=', transactionId)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      transactionId: row.id,
      customerId: row.customer_id,
      cardId: row.card_id,
      accountId: row.account_id,
      type: row.type,
      status: row.status,
      currency: row.currency,
      amount: BigInt(row.amount),
      settledAmount: row.settled_amount === null ? null : BigInt(row.settled_amount),
      heldAmount: row.held_amount === null ? null : BigInt(row.held_amount),
      refundedAmount: BigInt(row.refunded_amount),
      forcePost: row.force_post,
      originalTransactionId: row.original_transaction_id,
      merchant: row.merchant,
      declineReason: row.decline_reason,
      declinedBy: row.declined_by,
      threeDS:
        row.challenge_id && row.challenge_status && row.challenge_expires_at
          ? {
              transactionAuthId: row.challenge_id,
              status: row.challenge_status,
              authType: row.auth_type,
              expiresAt: row.challenge_expires_at,
            }
          : null,
      createdAt: row.created_at,
      authorizedAt: row.authorized_at,
      settledAt: row.settled_at,
      holdExpiresAt: row.hold_expires_at,
    };
  }
}

/** What is left of a payment to refund or dispute: what was cleared, less refunds and open or won disputes. */
export function leftOf(t: {
  settled_amount: string | null;
  refunded_amount: string;
  disputed_amount: string;
}): bigint {
  return BigInt(t.settled_amount ?? 0) - BigInt(t.refunded_amount) - BigInt(t.disputed_amount);
}

/** The columns that tie a transaction record to its card, account, customer and partner. */
export function ownedBy(card: { id: string; customer_id: string; partner_id: string; account_id: string }) {
  return {
    customer_id: card.customer_id,
    partner_id: card.partner_id,
    card_id: card.id,
    account_id: card.account_id,
  };
}
