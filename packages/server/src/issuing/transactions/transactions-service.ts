// Card transactions of issued cards (docs/issuing.md, Transactions and 3D Secure): the card network
// asks for an authorization (sandbox: POST /sandbox/issuing/authorizations); checks, a ledger hold, and
// optionally a 3D Secure challenge the cardholder decides; then clearing or reversal, or the hold lapses.
// Every step is one transaction with its ledger postings and events.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import { type Db, type Executor, pgErrorCode, type Tx } from '../../platform/db/database.ts';
import { preparedStatement } from '../../platform/db/prepared.ts';
import type { IssuingTransactionStatus, ThreeDsStatus } from '../../platform/db/schema.ts';
import { StatementBatch } from '../../platform/db/statement-batch.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import { isUuid } from '../../platform/ids.ts';
import { type Ledger, ledgerRefusal } from '../../platform/ledger/ledger.ts';
import { formatAmount, parseAmountField } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { CardNetwork, DeclineReason as NetworkDeclineReason } from '../../rails/card-network/port.ts';
import {
  type IssuingEventType,
  publishIssuingEvent,
  stageIssuingEvent,
} from '../events/publish-issuing-event.ts';
import type { CustomerRef } from '../kyc/kyc-service.ts';

const SELECT_AUTHORIZING_CARD = `
  SELECT c.id, c.status, c.customer_id, c.partner_id, c.account_id, a.currency, a.status AS account_status,
    a.ledger_account_id
  FROM issuing_cards c JOIN issuing_accounts a ON a.id = c.account_id
  WHERE c.id = $1`;

/** The guard of an authorization on a card's remembered facts (statement_guard, migration 0027). */
const CARD_STILL_USABLE = `
  SELECT statement_guard(EXISTS (
    SELECT 1 FROM issuing_cards c JOIN issuing_accounts a ON a.id = c.account_id
    WHERE c.id = $1 AND c.status = 'active' AND a.status = 'open'), 'the card or its account changed')`;
const STATEMENT_GUARD_FAILED = 'TG001';
/** Cards whose facts are remembered at most (past it, the memory starts over) */
const KNOWN_CARDS = 100_000;

const INSERT_AUTHORIZED = `
  INSERT INTO issuing_transactions (id, customer_id, partner_id, card_id, account_id, type, status, currency, amount,
    merchant, hold_id, hold_expires_at, created_at, authorized_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, 'card_payment', 'authorized', $6, $7, $8, $9, $10, $11, $11, $11)`;

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

/** The largest single card payment the program authorizes, in major units (default: 10,000) */
export const MAX_AUTHORIZATION_MAJOR = 10_000n;

export type DeclineReason =
  | 'card_not_active'
  | 'account_closed'
  | 'currency_not_supported'
  | 'amount_over_limit'
  | 'insufficient_funds'
  | '3ds_declined'
  | '3ds_cancelled'
  | '3ds_timeout'
  | '3ds_failed';

export interface IssuingTransaction {
  transactionId: string;
  customerId: string;
  cardId: string;
  accountId: string;
  type: 'card_payment' | 'refund';
  status: IssuingTransactionStatus;
  currency: string;
  amount: bigint;
  settledAmount: bigint | null;
  merchant: string;
  declineReason: string | null;
  threeDS: {
    transactionAuthId: string;
    status: ThreeDsStatus;
    authType: string | null;
    expiresAt: Date;
  } | null;
  createdAt: Date;
  authorizedAt: Date | null;
  settledAt: Date | null;
  holdExpiresAt: Date | null;
}

export interface PendingChallenge {
  transactionAuthId: string;
  transactionId: string;
  cardId: string;
  amount: bigint;
  currency: string;
  merchant: string;
  requestedAt: Date;
  expiresAt: Date;
}

export interface TransactionsDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  outbox: Outbox;
  ledger: Ledger;
  threeDsTimeoutSeconds: number;
  holdSeconds: number;
  /** Told the cardholder's decision when a challenged payment came from the card network (on-us) */
  network?: Pick<CardNetwork, 'issuerDecided'>;
  /** Common authorizations are written in one statement (authorizeAtOnce); false runs every one the general way */
  oneStatementWrites: boolean;
}

interface AuthorizingCard {
  id: string;
  status: string;
  customer_id: string;
  partner_id: string;
  account_id: string;
  currency: string;
  account_status: string;
  ledger_account_id: string;
}

// docs/wire-compatibility.md: the decision body's authStatus maps onto challenge statuses.
const AUTH_STATUS_TO_CHALLENGE = {
  success: 'authorized',
  failed: 'declined',
  canceled: 'cancelled',
  timeout: 'timeout',
} as const;
export type AuthStatus = keyof typeof AUTH_STATUS_TO_CHALLENGE;
export const AUTH_TYPES = ['pinCode', 'pattern', 'other', 'faceRecognition', 'fingerprint'] as const;

export class TransactionsService {
  /** Facts of cards authorized before (ids, currency, ledger account): they never change */
  private readonly knownCards = new Map<string, AuthorizingCard>();

  constructor(private readonly deps: TransactionsDeps) {}

  /** The card network's authorization request for an issued card. */
  async authorize(input: {
    cardId: string;
    amount: string | number;
    currency: string;
    merchant: string;
    threeDS?: boolean;
  }): Promise<IssuingTransaction> {
    // A card seen before: its facts are known (they never change), its statuses checked in the statement.
    const known = this.deps.oneStatementWrites ? this.knownCards.get(input.cardId) : undefined;
    const card = known ?? (await this.loadCard(this.deps.db, input.cardId));
    if (!card) throw notFound('card');
    const asset = findAsset(input.currency.toUpperCase());
    if (!asset)
      throw new DomainError('validation_failed', 'currency must be an ISO 4217 code', { field: 'currency' });
    const amount = parseAmountField(input.amount, asset);
    const request = {
      currency: asset.code,
      amount,
      merchant: input.merchant,
      threeDS: input.threeDS ?? false,
      networkReference: null,
    };
    if (this.deps.oneStatementWrites && !known) this.remember(card);
    let shortOfFunds = false;
    if (this.deps.oneStatementWrites && !request.threeDS && !declineFor(card, asset.code, amount)) {
      const outcome = await this.authorizeAtOnce(card, request, { checkStatuses: known !== undefined });
      if (typeof outcome === 'object') return outcome;
      shortOfFunds = outcome === 'short_of_funds';
    }
    // The general way, on the card as it is now.
    const current = known ? await this.loadCard(this.deps.db, input.cardId) : card;
    if (!current) throw notFound('card');
    return this.deps.transact((tx) =>
      this.authorizeCard(tx, current, {
        ...request,
        ...(shortOfFunds ? { decline: 'insufficient_funds' } : {}),
      }),
    );
  }

  /** A card's facts, for its next authorization: kept as active and open, which the statement checks. */
  private remember(card: AuthorizingCard): void {
    if (this.knownCards.size >= KNOWN_CARDS) this.knownCards.clear();
    this.knownCards.set(card.id, { ...card, status: 'active', account_status: 'open' });
  }

  /**
   * The common case, an authorization without a challenge that the card's checks pass, in one statement
   * (one round trip, atomic on its own): the transaction as authorized, its event and its hold; with
   * `checkStatuses`, the card and its account still active and open, checked in the statement. Nothing
   * is written when the account cannot cover it (the ledger refused) or a status changed.
   */
  private async authorizeAtOnce(
    card: AuthorizingCard,
    input: { currency: string; amount: bigint; merchant: string },
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
      creditAccountId: await this.settlementAccount(db, input.currency, id),
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
      ],
    });
    const event = await stageIssuingEvent(outbox, batch, db, {
      partnerId: card.partner_id,
      customerId: card.customer_id,
      eventType: 'transactionCreated',
      data: { transactionId: id },
    });
    try {
      await batch.run(db);
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
      merchant: input.merchant,
      declineReason: null,
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
      merchant: string;
      threeDS: boolean;
      networkReference: string;
    },
  ): Promise<IssuingTransaction> {
    const card = await this.loadCard(tx, input.cardId);
    if (!card) throw notFound('card');
    return this.authorizeCard(tx, card, input);
  }

  /** Clearing or reversal asked by the card network for an on-us payment, in the caller's transaction. */
  async settleFromNetwork(tx: Tx, networkReference: string, amount: bigint | null): Promise<void> {
    const row = await tx
      .selectFrom('issuing_transactions')
      .select('id')
      .where('network_reference', '=', networkReference)
      .executeTakeFirst();
    if (!row) throw notFound('transaction');
    if (amount === null) await this.reverseIn(tx, row.id);
    else await this.clearIn(tx, row.id, amount);
  }

  /**
   * Funds pushed to an issued card by the card network (a refund of an on-us payment, or a credit): the
   * card network pays the account at once, recorded as a settled `refund` transaction.
   */
  async creditFromNetwork(
    tx: Tx,
    input: { cardId: string; currency: string; amount: bigint; merchant: string; networkReference: string },
  ): Promise<IssuingTransaction | NetworkDeclineReason> {
    const card = await this.loadCard(tx, input.cardId);
    if (!card) throw notFound('card');
    if (card.account_status !== 'open' || card.status === 'closed') return 'card_not_active';
    if (card.currency !== input.currency) return 'currency_not_supported';
    const id = randomUUID();
    const now = this.deps.clock.now();
    await tx
      .insertInto('issuing_transactions')
      .values({
        id,
        ...ownedBy(card),
        type: 'refund',
        status: 'settled',
        currency: card.currency,
        amount: input.amount.toString(),
        settled_amount: input.amount.toString(),
        merchant: input.merchant,
        decline_reason: null,
        network_reference: input.networkReference,
        created_at: now,
        authorized_at: now,
        settled_at: now,
        updated_at: now,
      })
      .execute();
    await this.deps.ledger.transfer(tx, {
      operationId: `issuing-credit:${id}`,
      legs: [
        { accountId: await this.settlementAccount(tx, card.currency, id), amount: -input.amount },
        { accountId: card.ledger_account_id, amount: input.amount },
      ],
      metadata: { transactionId: id },
    });
    const customer = { customerId: card.customer_id, partnerId: card.partner_id };
    await this.event(tx, customer, 'transactionCreated', { transactionId: id });
    await this.event(tx, customer, 'transactionSettled', { transactionId: id });
    return this.getInternal(tx, id);
  }

  /** The card an on-us payment was made with (to refund it). */
  async cardOfNetworkPayment(db: Executor, networkReference: string): Promise<string | undefined> {
    const row = await db
      .selectFrom('issuing_transactions')
      .select('card_id')
      .where('network_reference', '=', networkReference)
      .executeTakeFirst();
    return row?.card_id;
  }

  private async loadCard(db: Executor, cardId: string): Promise<AuthorizingCard | undefined> {
    if (!isUuid(cardId)) return undefined;
    const { rows } = await db.executeQuery<AuthorizingCard>(
      preparedStatement('issuing_authorizing_card', SELECT_AUTHORIZING_CARD, [cardId]),
    );
    return rows[0];
  }

  private async authorizeCard(
    tx: Tx,
    card: AuthorizingCard,
    input: {
      currency: string;
      amount: bigint;
      merchant: string;
      threeDS: boolean;
      networkReference: string | null;
      /** Already known (the account was short when the hold was tried) */
      decline?: DeclineReason;
    },
  ): Promise<IssuingTransaction> {
    const asset = findAsset(input.currency);
    if (!asset) throw new Error(`unknown currency ${input.currency}`);
    const amount = input.amount;
    const customer = { customerId: card.customer_id, partnerId: card.partner_id };
    const decline = input.decline ?? declineFor(card, asset.code, amount);

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
        decline_reason: decline ?? null,
        network_reference: input.networkReference,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await this.event(tx, customer, 'transactionCreated', { transactionId: id });
    if (decline) return this.getInternal(tx, id);
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
      await this.event(tx, customer, 'transaction3dsRequested', {
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
      return this.getInternal(tx, id);
    }
    await this.placeHold(tx, id, card.ledger_account_id, asset.code, amount);
    return this.getInternal(tx, id);
  }

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
      return this.getInternal(tx, challenge.transaction_id);
    });
  }

  /** Clearing (settlement) for the authorized amount or less; the rest of the hold is released. */
  async clear(transactionId: string, amountText?: string | number): Promise<IssuingTransaction> {
    return this.deps.transact(async (tx) => {
      const t = await this.lockTransaction(tx, transactionId);
      const asset = findAsset(t.currency);
      if (!asset) throw new Error(`unknown currency ${t.currency}`);
      let amount = BigInt(t.amount);
      if (amountText !== undefined) {
        amount = parseAmountField(amountText, asset);
        if (amount > BigInt(t.amount)) {
          throw new DomainError('validation_failed', 'clearing cannot exceed the authorized amount', {
            field: 'amount',
          });
        }
      }
      await this.clearIn(tx, t.id, amount);
      return this.getInternal(tx, t.id);
    });
  }

  /** The merchant's reversal of an authorization: the hold is released, nothing moves. */
  async reverse(transactionId: string): Promise<IssuingTransaction> {
    return this.deps.transact(async (tx) => {
      const t = await this.lockTransaction(tx, transactionId);
      await this.reverseIn(tx, t.id);
      return this.getInternal(tx, t.id);
    });
  }

  private async clearIn(tx: Tx, transactionId: string, amount: bigint): Promise<void> {
    const t = await this.lockTransaction(tx, transactionId);
    if (t.status !== 'authorized') throw stateError('clear', t.status);
    if (!t.hold_id) throw new Error(`transaction ${t.id} has no hold`);
    await this.deps.ledger.postHold(tx, {
      operationId: `issuing-clear:${t.id}`,
      holdId: t.hold_id,
      amount,
    });
    const now = this.deps.clock.now();
    await tx
      .updateTable('issuing_transactions')
      .set({ status: 'settled', settled_amount: amount.toString(), settled_at: now, updated_at: now })
      .where('id', '=', t.id)
      .execute();
    await this.event(tx, { customerId: t.customer_id, partnerId: t.partner_id }, 'transactionSettled', {
      transactionId: t.id,
    });
  }

  private async reverseIn(tx: Tx, transactionId: string): Promise<void> {
    const t = await this.lockTransaction(tx, transactionId);
    if (t.status !== 'authorized') throw stateError('reverse', t.status);
    if (t.hold_id) await this.deps.ledger.voidHold(tx, t.hold_id);
    await tx
      .updateTable('issuing_transactions')
      .set({ status: 'reversed', updated_at: this.deps.clock.now() })
      .where('id', '=', t.id)
      .execute();
    await this.event(tx, { customerId: t.customer_id, partnerId: t.partner_id }, 'transactionStatusChanged', {
      transactionId: t.id,
      status: 'reversed',
    });
  }

  /** One of the customer's transactions with its 3D Secure record; another customer's is a 404. */
  async get(customer: CustomerRef, transactionId: string): Promise<IssuingTransaction> {
    const found = isUuid(transactionId) ? await this.find(this.deps.db, transactionId) : undefined;
    if (!found || found.customerId !== customer.customerId) throw notFound('transaction');
    return found;
  }

  async list(
    customer: CustomerRef,
    filter: {
      page: number;
      size: number;
      type?: string;
      status?: IssuingTransactionStatus;
      startDate?: Date;
      endDate?: Date;
    },
  ): Promise<{ items: IssuingTransaction[]; total: number }> {
    let query = this.deps.db
      .selectFrom('issuing_transactions')
      .where('customer_id', '=', customer.customerId);
    if (filter.type) query = query.where('type', '=', filter.type as 'card_payment' | 'refund');
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.startDate) query = query.where('created_at', '>=', filter.startDate);
    if (filter.endDate) query = query.where('created_at', '<', filter.endDate);
    const total = await query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    const ids = await query
      .select('id')
      .orderBy('seq', 'desc')
      .limit(filter.size)
      .offset((filter.page - 1) * filter.size)
      .execute();
    const items = await Promise.all(ids.map((r) => this.getInternal(this.deps.db, r.id)));
    return { items, total: Number(total.n) };
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

  /** Sweep: authorization holds that were never cleared lapse and give the funds back. */
  async expireHolds(): Promise<number> {
    const due = await this.deps.db
      .selectFrom('issuing_transactions')
      .select('id')
      .where('status', '=', 'authorized')
      .where('hold_expires_at', '<=', this.deps.clock.now())
      .limit(200)
      .execute();
    return transactEach(this.deps.transact, due, async (tx, row) => {
      const t = await tx
        .selectFrom('issuing_transactions')
        .selectAll()
        .where('id', '=', row.id)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (t?.status !== 'authorized') return false;
      if (t.hold_id) await this.deps.ledger.expireHold(tx, t.hold_id);
      await tx
        .updateTable('issuing_transactions')
        .set({ status: 'expired', updated_at: this.deps.clock.now() })
        .where('id', '=', t.id)
        .execute();
      await this.event(
        tx,
        { customerId: t.customer_id, partnerId: t.partner_id },
        'transactionStatusChanged',
        {
          transactionId: t.id,
          status: 'expired',
        },
      );
      return true;
    });
  }

  // Internals ------------------------------------------------------------------------------------------

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
        'a.ledger_account_id',
        'c.status',
        'a.status as account_status',
        'a.currency as account_currency',
      ])
      .where('t.id', '=', transactionId)
      .executeTakeFirstOrThrow();
    const amount = BigInt(t.amount);
    const cardDecline =
      decided === 'authorized'
        ? declineFor(
            { status: t.status, account_status: t.account_status, currency: t.account_currency },
            t.currency,
            amount,
          )
        : undefined;
    const status = cardDecline ? 'failed' : decided;
    await tx
      .updateTable('issuing_3ds_challenges')
      .set({ status, auth_type: authType, decided_at: now })
      .where('id', '=', challengeId)
      .execute();
    await this.event(tx, customer, 'transaction3dsCompleted', { transactionId, status });
    if (status === 'authorized') {
      await this.placeHold(tx, transactionId, t.ledger_account_id, t.currency, amount);
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
      .set({ status: 'declined', decline_reason: reason, updated_at: now })
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

  /** Holds the amount on the account; no funds is a decline recorded in the same transaction. */
  private async placeHold(
    tx: Tx,
    transactionId: string,
    ledgerAccountId: string,
    currency: string,
    amount: bigint,
  ): Promise<void> {
    const networkAccountId = await this.settlementAccount(tx, currency, transactionId);
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
          hold_expires_at: hold.expiresAt,
          authorized_at: now,
          updated_at: now,
        })
        .where('id', '=', transactionId)
        .execute();
    } catch (err) {
      // The ledger answers refusals without writing, so the decline is recorded in this same transaction.
      if (!(err instanceof DomainError) || err.details?.reason !== 'insufficient_funds') throw err;
      await tx
        .updateTable('issuing_transactions')
        .set({ status: 'declined', decline_reason: 'insufficient_funds', updated_at: now })
        .where('id', '=', transactionId)
        .execute();
    }
  }

  private async settlementAccount(tx: Executor, currency: string, transactionId: string): Promise<string> {
    const shards = await this.deps.ledger.systemAccounts(
      tx,
      { ownerType: 'issuing_network', ownerId: 'card-network', asset: currency, isBounded: false },
      SETTLEMENT_PURPOSES,
    );
    return shards[Number.parseInt(transactionId.slice(0, 8), 16) % shards.length] as string;
  }

  private async lockTransaction(tx: Tx, transactionId: string) {
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

  private async event(
    tx: Executor,
    customer: CustomerRef,
    eventType: Extract<IssuingEventType, `transaction${string}`>,
    data: Record<string, unknown>,
  ) {
    await publishIssuingEvent(this.deps.outbox, tx, {
      partnerId: customer.partnerId,
      customerId: customer.customerId,
      eventType,
      data,
    });
  }

  private async getInternal(db: Executor, transactionId: string): Promise<IssuingTransaction> {
    const found = await this.find(db, transactionId);
    if (!found) throw new Error(`transaction ${transactionId} vanished`);
    return found;
  }

  private async find(db: Executor, transactionId: string): Promise<IssuingTransaction | undefined> {
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
      merchant: row.merchant,
      declineReason: row.decline_reason,
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

/** The columns that tie a transaction record to its card, account, customer and partner. */
function ownedBy(card: AuthorizingCard) {
  return {
    customer_id: card.customer_id,
    partner_id: card.partner_id,
    card_id: card.id,
    account_id: card.account_id,
  };
}

/** Why the card cannot pay this now, if it cannot: checked at authorization and again at 3DS approval. */
function declineFor(
  card: Pick<AuthorizingCard, 'status' | 'account_status' | 'currency'>,
  currency: string,
  amount: bigint,
): DeclineReason | undefined {
  const asset = findAsset(currency);
  if (card.status !== 'active') return 'card_not_active';
  if (card.account_status !== 'open') return 'account_closed';
  if (!asset || currency !== card.currency) return 'currency_not_supported';
  if (amount > MAX_AUTHORIZATION_MAJOR * 10n ** BigInt(asset.exponent)) return 'amount_over_limit';
  return undefined;
}

function stateError(action: string, status: string): DomainError {
  return new DomainError('invalid_state', `cannot ${action} a transaction that is ${status}`, {
    details: { status },
  });
}
