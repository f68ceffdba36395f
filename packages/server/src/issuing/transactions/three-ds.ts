// 3D Secure challenges of card transactions (docs/issuing.md, Card transactions and 3D Secure; the spec's
// GET and PATCH /v1/transactions/3d-secure): the cardholder's decision, or the timeout, ends a challenge;
// an approval places the hold, anything else declines; an on-us payment's network is told in the same step.
import type { Clock } from '../../platform/clock/clock.ts';
import type { Db, Tx } from '../../platform/db/database.ts';
import type { ThreeDsStatus } from '../../platform/db/schema.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { isUuid } from '../../platform/ids.ts';
import type { CardNetwork } from '../../rails/card-network/port.ts';
import type { Channel } from '../cards/spending-controls.ts';
import type { SpendingControlsStore } from '../cards/spending-controls-store.ts';
import type { CustomerRef } from '../kyc/kyc-service.ts';
import type { Authorizations } from './authorization.ts';
import {
  type DeclineReason,
  declineFor,
  type IssuingTransaction,
  type PendingChallenge,
} from './transaction.ts';
import type { TransactionRecords } from './transaction-records.ts';

// docs/wire-compatibility.md: the decision body's authStatus maps onto challenge statuses.
const AUTH_STATUS_TO_CHALLENGE = {
  success: 'authorized',
  failed: 'declined',
  canceled: 'cancelled',
  timeout: 'timeout',
} as const;
export type AuthStatus = keyof typeof AUTH_STATUS_TO_CHALLENGE;
export const AUTH_TYPES = ['pinCode', 'pattern', 'other', 'faceRecognition', 'fingerprint'] as const;

export class ThreeDsChallenges {
  constructor(
    private readonly deps: {
      db: Db;
      transact: Transact;
      clock: Clock;
      records: TransactionRecords;
      authorizations: Authorizations;
      controls: SpendingControlsStore;
      /** Told the cardholder's decision when a challenged payment came from the card network (on-us) */
      network?: Pick<CardNetwork, 'issuerDecided'>;
    },
  ) {}

  /** Pending challenges of the customer, oldest first (GET /v1/transactions/3d-secure). */
  async pendingChallenges(customer: CustomerRef): Promise<PendingChallenge[]> {
    const rows = await this.deps.db
      .selectFrom('issuing_3ds_challenges as ch')
      .innerJoin('issuing_transactions as t', 't.id', 'ch.transaction_id')
      .select([
        'ch.id',
        'ch.transaction_id',
        't.card_id',
        't.amount',
        't.currency',
        't.merchant',
        'ch.requested_at',
        'ch.expires_at',
      ])
      .where('ch.customer_id', '=', customer.customerId)
      .where('ch.status', '=', 'pending')
      .where('ch.expires_at', '>', this.deps.clock.now())
      .orderBy('ch.requested_at')
      .execute();
    return rows.map((r) => ({
      transactionAuthId: r.id,
      transactionId: r.transaction_id,
      cardId: r.card_id,
      amount: BigInt(r.amount),
      currency: r.currency,
      merchant: r.merchant,
      requestedAt: r.requested_at,
      expiresAt: r.expires_at,
    }));
  }

  /** The cardholder's decision; a second decision, or one after expiry, is a 409. */
  async decideChallenge(
    customer: CustomerRef,
    transactionAuthId: string,
    decision: { authType: string; authStatus: AuthStatus },
  ): Promise<IssuingTransaction> {
    return this.deps.transact(async (tx) => {
      const challenge = isUuid(transactionAuthId)
        ? await tx
            .selectFrom('issuing_3ds_challenges')
            .selectAll()
            .where('id', '=', transactionAuthId)
            .where('customer_id', '=', customer.customerId)
            .forUpdate()
            .executeTakeFirst()
        : undefined;
      if (!challenge) throw notFound('3D Secure challenge');
      if (challenge.status !== 'pending') {
        throw new DomainError('invalid_state', `the challenge is already ${challenge.status}`, {
          details: { status: challenge.status },
        });
      }
      // Expired but not yet swept: the expiry sweep records the timeout; the late decision is refused.
      if (challenge.expires_at <= this.deps.clock.now()) {
        throw new DomainError('invalid_state', 'the challenge has expired', {
          details: { status: 'timeout' },
        });
      }
      await this.finishChallenge(
        tx,
        customer,
        challenge.id,
        challenge.transaction_id,
        AUTH_STATUS_TO_CHALLENGE[decision.authStatus],
        decision.authType,
      );
      return this.deps.records.get(tx, challenge.transaction_id);
    });
  }

  /** Sweep: challenges nobody answered in time end as `timeout`. */
  async expireChallenges(): Promise<number> {
    const due = await this.deps.db
      .selectFrom('issuing_3ds_challenges as ch')
      .innerJoin('issuing_transactions as t', 't.id', 'ch.transaction_id')
      .select(['ch.id', 'ch.transaction_id', 't.customer_id', 't.partner_id'])
      .where('ch.status', '=', 'pending')
      .where('ch.expires_at', '<=', this.deps.clock.now())
      .limit(200)
      .execute();
    return transactEach(this.deps.transact, due, async (tx, row) => {
      const locked = await tx
        .selectFrom('issuing_3ds_challenges')
        .select('status')
        .where('id', '=', row.id)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (locked?.status !== 'pending') return false;
      await this.finishChallenge(
        tx,
        { customerId: row.customer_id, partnerId: row.partner_id },
        row.id,
        row.transaction_id,
        'timeout',
        null,
      );
      return true;
    });
  }

  /**
   * Ends a challenge. An approval is checked again: a card frozen, suspended or closed (or an account
   * closed) while the challenge was pending cannot pay, so the challenge ends `failed` and the payment is
   * declined for that reason, not held.
   */
  private async finishChallenge(
    tx: Tx,
    customer: CustomerRef,
    challengeId: string,
    transactionId: string,
    decided: Exclude<ThreeDsStatus, 'pending'>,
    authType: string | null,
  ): Promise<void> {
    const now = this.deps.clock.now();
    const t = await tx
      .selectFrom('issuing_transactions as t')
      .innerJoin('issuing_cards as c', 'c.id', 't.card_id')
      .innerJoin('issuing_accounts as a', 'a.id', 't.account_id')
      .select([
        't.amount',
        't.currency',
        't.card_id',
        't.account_id',
        't.partner_id',
        't.mcc',
        't.merchant_country',
        't.channel',
        'a.ledger_account_id',
        'c.status',
        'a.status as account_status',
        'a.currency as account_currency',
      ])
      .where('t.id', '=', transactionId)
      .executeTakeFirstOrThrow();
    const amount = BigInt(t.amount);
    const statusDecline =
      decided === 'authorized'
        ? declineFor(
            { status: t.status, account_status: t.account_status, currency: t.account_currency },
            t.currency,
            amount,
          )
        : undefined;
    // The card's spending controls again, now: its limits may have filled while the cardholder decided.
    const card = { id: t.card_id, account_id: t.account_id, partner_id: t.partner_id };
    const controls =
      decided === 'authorized' && !statusDecline ? await this.deps.controls.applying(tx, card) : [];
    const refusal = await this.deps.controls.refusal(
      tx,
      card,
      {
        amount,
        currency: t.currency,
        mcc: t.mcc,
        merchantCountry: t.merchant_country,
        channel: t.channel as Channel,
      },
      controls,
    );
    const cardDecline: DeclineReason | undefined =
      statusDecline ?? (refusal ? 'spending_control' : undefined);
    const status = cardDecline ? 'failed' : decided;
    await tx
      .updateTable('issuing_3ds_challenges')
      .set({ status, auth_type: authType, decided_at: now })
      .where('id', '=', challengeId)
      .execute();
    await this.deps.records.event(tx, customer, 'transaction3dsCompleted', { transactionId, status });
    if (status === 'authorized') {
      if (
        await this.deps.authorizations.placeHold(tx, transactionId, t.ledger_account_id, t.currency, amount)
      ) {
        await this.deps.controls.count(tx, card, controls, amount);
      }
      await this.tellNetwork(tx, transactionId);
      return;
    }
    const reason: DeclineReason =
      cardDecline ??
      (status === 'declined'
        ? '3ds_declined'
        : status === 'cancelled'
          ? '3ds_cancelled'
          : status === 'timeout'
            ? '3ds_timeout'
            : '3ds_failed');
    await tx
      .updateTable('issuing_transactions')
      .set({
        status: 'declined',
        decline_reason: reason,
        declined_by: refusal ? `${refusal.scope}.${refusal.control}` : null,
        updated_at: now,
      })
      .where('id', '=', transactionId)
      .execute();
    await this.tellNetwork(tx, transactionId);
  }

  /** An on-us payment waits on the cardholder: the card network learns the outcome in this transaction. */
  private async tellNetwork(tx: Tx, transactionId: string): Promise<void> {
    const t = await tx
      .selectFrom('issuing_transactions')
      .select(['status', 'decline_reason', 'network_reference'])
      .where('id', '=', transactionId)
      .executeTakeFirstOrThrow();
    if (!t.network_reference || !this.deps.network) return;
    if (t.status === 'authorized') {
      await this.deps.network.issuerDecided(tx, t.network_reference, 'approved');
      return;
    }
    const reason = t.decline_reason === 'insufficient_funds' ? 'insufficient_funds' : 'authentication_failed';
    await this.deps.network.issuerDecided(tx, t.network_reference, 'declined', reason);
  }
}
