// Authorization (docs/issuing.md, Card transactions): the card network asks to authorize a payment of an
// issued card. The card's checks, a ledger hold on the account, or a 3D Secure challenge first; a decline
// is recorded with its reason. The common case is one statement (authorizeAtOnce).
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import { type Db, type Executor, pgErrorCode, type Tx } from '../../platform/db/database.ts';
import { preparedStatement } from '../../platform/db/prepared.ts';
import { StatementBatch } from '../../platform/db/statement-batch.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import { isUuid } from '../../platform/ids.ts';
import { type Ledger, ledgerRefusal } from '../../platform/ledger/ledger.ts';
import { type ClientAmount, formatAmount } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { Signal, Verdict } from '../../platform/risk/risk-engine.ts';
import type { SpendingControlsStore } from '../cards/spending-controls-store.ts';
import { stageIssuingEvent } from '../events/publish-issuing-event.ts';
import type { AuthorizationRisk } from './authorization-risk.ts';
import {
  type DeclineReason,
  declineFor,
  type IssuingTransaction,
  type MerchantFacts,
} from './transaction.ts';
import { ownedBy, type TransactionRecords } from './transaction-records.ts';

/** Spending controls set for the card, its account or its partner's program (migration 0054) */
const HAS_CONTROLS = `EXISTS (SELECT 1 FROM issuing_spending_controls s
    WHERE s.subject_id IN (c.id::text, c.account_id::text, c.partner_id))`;

const SELECT_AUTHORIZING_CARD = `
  SELECT c.id, c.status, c.customer_id, c.partner_id, c.account_id, a.currency, a.status AS account_status,
    a.ledger_account_id, c.pan_fingerprint, ${HAS_CONTROLS} AS has_controls
  FROM issuing_cards c JOIN issuing_accounts a ON a.id = c.account_id
  WHERE c.id = $1`;

/**
 * The guard of an authorization on a card's remembered facts (statement_guard, migration 0027): still
 * active and open, and still without spending controls (controls set since take the general way).
 */
const CARD_STILL_USABLE = `
  SELECT statement_guard(EXISTS (
    SELECT 1 FROM issuing_cards c JOIN issuing_accounts a ON a.id = c.account_id
    WHERE c.id = $1 AND c.status = 'active' AND a.status = 'open' AND NOT ${HAS_CONTROLS}),
    'the card, its account or their controls changed')`;
const STATEMENT_GUARD_FAILED = 'TG001';
/** What refuses the one-statement authorization: the account short of funds, or a status changed. */
const isAuthorizationRefusal = (err: unknown) =>
  ledgerRefusal(err)?.details?.reason === 'insufficient_funds' || pgErrorCode(err) === STATEMENT_GUARD_FAILED;
/** Cards whose facts are remembered at most (past it, the memory starts over) */
const KNOWN_CARDS = 100_000;

// $7 is cast: the amount and the held amount are columns of two domains (migration 0048), and a parameter
// used for both would have no one type.
const INSERT_AUTHORIZED = `
  INSERT INTO issuing_transactions (id, customer_id, partner_id, card_id, account_id, type, status, currency, amount,
    held_amount, merchant, hold_id, hold_expires_at, created_at, authorized_at, updated_at, mcc, merchant_country,
    merchant_id, channel)
  VALUES ($1, $2, $3, $4, $5, 'card_payment', 'authorized', $6, $7::numeric, $7::numeric, $8, $9, $10, $11, $11, $11,
    $12, $13, $14, $15)`;

export interface AuthorizationDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  outbox: Outbox;
  ledger: Ledger;
  records: TransactionRecords;
  controls: SpendingControlsStore;
  risk: AuthorizationRisk;
  threeDsTimeoutSeconds: number;
  holdSeconds: number;
  /** Common authorizations are written in one statement (authorizeAtOnce); false runs every one the general way */
  oneStatementWrites: boolean;
}

export interface AuthorizingCard {
  id: string;
  status: string;
  customer_id: string;
  partner_id: string;
  account_id: string;
  currency: string;
  account_status: string;
  ledger_account_id: string;
  pan_fingerprint: string;
  /** Spending controls apply to it: authorized the general way, the controls checked */
  has_controls: boolean;
}

/** What the general way of authorizing is told beyond the card */
type AuthorizationRequest = MerchantFacts & {
  currency: string;
  amount: bigint;
  threeDS: boolean;
  networkReference: string | null;
  /** Already known (the account was short when the hold was tried) */
  decline?: DeclineReason;
};

/** The authorization's risk signal and its rules' verdict (none: no rules), written with it */
interface Judged {
  signal: Signal;
  verdict: Verdict | undefined;
}

export class Authorizations {
  /** Facts of cards authorized before (ids, currency, ledger account): they never change */
  private readonly knownCards = new Map<string, AuthorizingCard>();

  constructor(private readonly deps: AuthorizationDeps) {}

  /** The card network's authorization request for an issued card. */
  async authorize(
    input: {
      cardId: string;
      amount: ClientAmount;
      currency: string;
      threeDS?: boolean;
    } & MerchantFacts,
  ): Promise<IssuingTransaction> {
    // A card seen before: its facts are known (they never change), its statuses checked in the statement.
    const known = this.deps.oneStatementWrites ? this.knownCards.get(input.cardId) : undefined;
    const card = known ?? (await this.loadCard(this.deps.db, input.cardId));
    if (!card) throw notFound('card');
    const asset = findAsset(input.currency.toUpperCase());
    if (!asset)
      throw new DomainError('validation_failed', 'currency must be an ISO 4217 code', { field: 'currency' });
    const amount = input.amount.in(asset);
    const request: AuthorizationRequest = {
      currency: asset.code,
      amount,
      merchant: input.merchant,
      mcc: input.mcc,
      merchantCountry: input.merchantCountry,
      merchantId: input.merchantId,
      channel: input.channel,
      threeDS: input.threeDS ?? false,
      networkReference: null,
    };
    if (this.deps.oneStatementWrites && !known) this.remember(card);
    const judged = await this.judge(this.deps.db, card, request);
    let shortOfFunds = false;
    if (
      this.deps.oneStatementWrites &&
      !request.threeDS &&
      (judged.verdict?.action ?? 'allow') === 'allow' &&
      !card.has_controls &&
      !declineFor(card, asset.code, amount)
    ) {
      const outcome = await this.authorizeAtOnce(card, request, judged, {
        checkStatuses: known !== undefined,
      });
      if (typeof outcome === 'object') return outcome;
      shortOfFunds = outcome === 'short_of_funds';
    }
    // The general way, on the card as it is now.
    const current = known ? await this.loadCard(this.deps.db, input.cardId) : card;
    if (!current) throw notFound('card');
    return this.deps.transact((tx) =>
      this.authorizeCard(
        tx,
        current,
        { ...request, ...(shortOfFunds ? { decline: 'insufficient_funds' } : {}) },
        judged,
      ),
    );
  }

  /** The authorization's signal and what its partner's rules say of it (a challenge asks for 3-D Secure). */
  private async judge(db: Executor, card: AuthorizingCard, request: AuthorizationRequest): Promise<Judged> {
    const signal = this.deps.risk.signal(card, request, this.deps.clock.now());
    const verdict = await this.deps.risk.verdict(db, signal);
    if (verdict?.action === 'challenge') request.threeDS = true;
    return { signal, verdict };
  }

  /** A card's facts, for its next authorization: kept as active and open, which the statement checks. */
  private remember(card: AuthorizingCard): void {
    if (this.knownCards.size >= KNOWN_CARDS) this.knownCards.clear();
    this.knownCards.set(card.id, { ...card, status: 'active', account_status: 'open', has_controls: false });
  }

  /**
   * The common case, an authorization without a challenge that the card's checks pass, in one statement
   * (one round trip, atomic on its own): the transaction as authorized, its event and its hold; with
   * `checkStatuses`, the card and its account still active and open, checked in the statement. Nothing
   * is written when the account cannot cover it (the ledger refused) or a status changed.
   */
  private async authorizeAtOnce(
    card: AuthorizingCard,
    input: AuthorizationRequest,
    judged: Judged,
    options: { checkStatuses: boolean },
  ): Promise<IssuingTransaction | 'short_of_funds' | 'statuses_changed'> {
    const { db, clock, ledger, outbox } = this.deps;
    const id = randomUUID();
    const now = clock.now();
    const holdExpiresAt = addSeconds(now, this.deps.holdSeconds);
    const batch = new StatementBatch();
    if (options.checkStatuses) batch.add({ sql: CARD_STILL_USABLE, parameters: [card.id], returns: true });
    const holdId = ledger.stageHold(batch, {
      operationId: `issuing-auth:${id}`,
      debitAccountId: card.ledger_account_id,
      creditAccountId: await this.deps.records.settlementAccount(db, input.currency, id),
      amount: input.amount,
      expiresAt: holdExpiresAt,
      metadata: { transactionId: id },
    });
    batch.add({
      sql: INSERT_AUTHORIZED,
      parameters: [
        id,
        card.customer_id,
        card.partner_id,
        card.id,
        card.account_id,
        input.currency,
        input.amount.toString(),
        input.merchant,
        holdId,
        holdExpiresAt,
        now,
        input.mcc,
        input.merchantCountry,
        input.merchantId,
        input.channel,
      ],
    });
    this.deps.risk.stage(batch, judged.signal, id, false, judged.verdict);
    const event = await stageIssuingEvent(outbox, batch, db, {
      partnerId: card.partner_id,
      customerId: card.customer_id,
      eventType: 'transactionCreated',
      data: { transactionId: id },
    });
    // With an Idempotency-Key the statement may wait to be sent with the key's answer (the route is
    // optimistic), this answer made before it runs: refused there, the request runs again and meets the
    // refusal here.
    try {
      await batch.run(db, { deferrable: true, refusedBy: isAuthorizationRefusal });
    } catch (err) {
      if (ledgerRefusal(err)?.details?.reason === 'insufficient_funds') return 'short_of_funds';
      if (pgErrorCode(err) === STATEMENT_GUARD_FAILED) return 'statuses_changed';
      throw err;
    }
    await event.queued();
    return {
      transactionId: id,
      customerId: card.customer_id,
      cardId: card.id,
      accountId: card.account_id,
      type: 'card_payment',
      status: 'authorized',
      currency: input.currency,
      amount: input.amount,
      settledAmount: null,
      heldAmount: input.amount,
      refundedAmount: 0n,
      forcePost: false,
      originalTransactionId: null,
      merchant: input.merchant,
      declineReason: null,
      declinedBy: null,
      threeDS: null,
      createdAt: now,
      authorizedAt: now,
      settledAt: null,
      holdExpiresAt,
    };
  }

  /** An authorization that arrived through the card network (a payment on the payments API: on-us). */
  async authorizeFromNetwork(
    tx: Tx,
    input: {
      cardId: string;
      currency: string;
      amount: bigint;
      threeDS: boolean;
      networkReference: string;
    } & MerchantFacts,
  ): Promise<IssuingTransaction> {
    const { cardId, ...request } = input;
    const card = await this.loadCard(tx, cardId);
    if (!card) throw notFound('card');
    return this.authorizeCard(tx, card, request, await this.judge(tx, card, request));
  }

  async loadCard(db: Executor, cardId: string): Promise<AuthorizingCard | undefined> {
    if (!isUuid(cardId)) return undefined;
    const { rows } = await db.executeQuery<AuthorizingCard>(
      preparedStatement('issuing_authorizing_card', SELECT_AUTHORIZING_CARD, [cardId]),
    );
    return rows[0];
  }

  private async authorizeCard(
    tx: Tx,
    card: AuthorizingCard,
    input: AuthorizationRequest,
    judged: Judged,
  ): Promise<IssuingTransaction> {
    const asset = findAsset(input.currency);
    if (!asset) throw new Error(`unknown currency ${input.currency}`);
    const amount = input.amount;
    const customer = { customerId: card.customer_id, partnerId: card.partner_id };
    let decline =
      input.decline ??
      declineFor(card, asset.code, amount) ??
      (judged.verdict?.action === 'decline' ? 'risk_declined' : undefined);
    // The card's spending controls, its limits read from counters locked until this transaction ends.
    const controls = card.has_controls ? await this.deps.controls.applying(tx, card) : [];
    const refusal = decline ? undefined : await this.deps.controls.refusal(tx, card, input, controls);
    if (refusal) decline = 'spending_control';

    const id = randomUUID();
    const now = this.deps.clock.now();
    await tx
      .insertInto('issuing_transactions')
      .values({
        id,
        ...ownedBy(card),
        type: 'card_payment',
        status: decline ? 'declined' : input.threeDS ? 'pending_3ds' : 'authorized',
        currency: asset.code,
        amount: amount.toString(),
        merchant: input.merchant,
        mcc: input.mcc,
        merchant_country: input.merchantCountry,
        merchant_id: input.merchantId,
        channel: input.channel,
        decline_reason: decline ?? null,
        declined_by: refusal ? `${refusal.scope}.${refusal.control}` : null,
        network_reference: input.networkReference,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const recorded = new StatementBatch();
    this.deps.risk.stage(recorded, judged.signal, id, decline !== undefined, judged.verdict);
    await recorded.run(tx);
    await this.deps.records.event(tx, customer, 'transactionCreated', { transactionId: id });
    if (decline) return this.deps.records.get(tx, id);
    if (input.threeDS) {
      const challengeId = randomUUID();
      const expiresAt = addSeconds(now, this.deps.threeDsTimeoutSeconds);
      await tx
        .insertInto('issuing_3ds_challenges')
        .values({
          id: challengeId,
          transaction_id: id,
          customer_id: card.customer_id,
          status: 'pending',
          requested_at: now,
          expires_at: expiresAt,
        })
        .execute();
      await this.deps.records.event(tx, customer, 'transaction3dsRequested', {
        transactionId: id,
        // What the cardholder's decision is addressed to (PATCH /v1/transactions/3d-secure/{transactionAuthId})
        transactionAuthId: challengeId,
        cardId: card.id,
        // The spec types this amount as a number; records and the API carry exact decimal strings.
        amount: Number(formatAmount(amount, asset)),
        currency: asset.code,
        merchant: input.merchant,
        requestedAt: now.toISOString(),
        expiresAt: expiresAt.toISOString(),
      });
      return this.deps.records.get(tx, id);
    }
    if (await this.placeHold(tx, id, card.ledger_account_id, asset.code, amount)) {
      await this.deps.controls.count(tx, card, controls, amount);
    }
    return this.deps.records.get(tx, id);
  }

  /** Holds the amount on the account (true); no funds is a decline recorded in the same transaction (false). */
  async placeHold(
    tx: Tx,
    transactionId: string,
    ledgerAccountId: string,
    currency: string,
    amount: bigint,
  ): Promise<boolean> {
    const networkAccountId = await this.deps.records.settlementAccount(tx, currency, transactionId);
    const now = this.deps.clock.now();
    try {
      const hold = await this.deps.ledger.hold(tx, {
        operationId: `issuing-auth:${transactionId}`,
        debitAccountId: ledgerAccountId,
        creditAccountId: networkAccountId,
        amount,
        expiresAt: addSeconds(now, this.deps.holdSeconds),
        metadata: { transactionId },
      });
      await tx
        .updateTable('issuing_transactions')
        .set({
          status: 'authorized',
          hold_id: hold.id,
          held_amount: amount.toString(),
          hold_expires_at: hold.expiresAt,
          authorized_at: now,
          updated_at: now,
        })
        .where('id', '=', transactionId)
        .execute();
      return true;
    } catch (err) {
      // The ledger answers refusals without writing, so the decline is recorded in this same transaction.
      if (!(err instanceof DomainError) || err.details?.reason !== 'insufficient_funds') throw err;
      await tx
        .updateTable('issuing_transactions')
        .set({ status: 'declined', decline_reason: 'insufficient_funds', updated_at: now })
        .where('id', '=', transactionId)
        .execute();
      return false;
    }
  }
}
