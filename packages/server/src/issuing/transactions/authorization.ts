// Authorization (docs/issuing.md, Card transactions): the card network asks to authorize a payment of an
// issued card. The card's checks, a ledger hold on the account, or a 3D Secure challenge first; a decline
// is recorded with its reason. The common case is one statement (authorize-at-once.ts).
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import type { Db, Executor, Tx } from '../../platform/db/database.ts';
import { preparedStatement } from '../../platform/db/prepared.ts';
import { StatementBatch } from '../../platform/db/statement-batch.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import { isUuid, uuidv7 } from '../../platform/ids.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import { type ClientAmount, formatAmount } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { SpendingControlsStore } from '../cards/spending-controls-store.ts';
import type { AuthorizationRisk } from './authorization-risk.ts';
import {
  type AuthorizationRequest,
  AuthorizeAtOnce,
  type AuthorizingCard,
  HAS_CONTROLS,
  type Judged,
} from './authorize-at-once.ts';
import { declineFor, type IssuingTransaction, type MerchantFacts } from './transaction.ts';
import { ownedBy, type TransactionRecords } from './transaction-records.ts';

const SELECT_AUTHORIZING_CARD = `
  SELECT c.id, c.status, c.customer_id, c.partner_id, c.account_id, a.currency, a.status AS account_status,
    a.ledger_account_id, c.pan_fingerprint, ${HAS_CONTROLS} AS has_controls,
    cu.created_at AS customer_since, a.created_at AS account_since,
    coalesce(k.steps->'residence'->>'country', '') AS customer_country
  FROM issuing_cards c JOIN issuing_accounts a ON a.id = c.account_id
    JOIN issuing_customers cu ON cu.id = c.customer_id
    LEFT JOIN issuing_kyc k ON k.customer_id = c.customer_id
  WHERE c.id = $1`;

/** Cards whose facts are remembered at most (past it, the memory starts over) */
const KNOWN_CARDS = 100_000;

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
  /** Common authorizations are written in one statement (AuthorizeAtOnce); false runs every one the general way */
  oneStatementWrites: boolean;
}

export class Authorizations {
  /** Facts of cards authorized before (ids, currency, ledger account): they never change */
  private readonly knownCards = new Map<string, AuthorizingCard>();
  private readonly atOnce: AuthorizeAtOnce;

  constructor(private readonly deps: AuthorizationDeps) {
    this.atOnce = new AuthorizeAtOnce(deps);
  }

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
    // A card under spending controls is never remembered: it always takes the general way.
    if (this.deps.oneStatementWrites && !known && !card.has_controls) this.remember(card);
    const oneStatement =
      this.deps.oneStatementWrites &&
      !request.threeDS &&
      !card.has_controls &&
      !declineFor(card, asset.code, amount);
    let judged = await this.judge(this.deps.db, card, request, oneStatement);
    let shortOfFunds = false;
    // (a challenge verdict sets threeDS)
    if (oneStatement && !request.threeDS && (judged.verdict?.action ?? 'allow') === 'allow') {
      const outcome = await this.atOnce.run(card, request, judged);
      if (typeof outcome === 'object') return outcome;
      shortOfFunds = outcome === 'short_of_funds';
      // Its velocity guard raised (a rule may match), or the statement was refused before it ran: the
      // rules decide with the velocity read, for the general way
      if (judged.guard) judged = await this.judge(this.deps.db, card, request, false);
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

  /**
   * The authorization's signal and what its partner's rules say of it (a challenge asks for 3-D Secure).
   * For the one statement, a key's velocity is not read but checked in it (the guard).
   */
  private async judge(
    db: Executor,
    card: AuthorizingCard,
    request: AuthorizationRequest,
    oneStatement = false,
  ): Promise<Judged> {
    const signal = this.deps.risk.signal(card, request, this.deps.clock.now());
    const { verdict, guard } = oneStatement
      ? await this.deps.risk.prejudge(db, signal)
      : { verdict: await this.deps.risk.verdict(db, signal), guard: undefined };
    if (verdict?.action === 'challenge') request.threeDS = true;
    return { signal, verdict, ...(guard ? { guard } : {}) };
  }

  /** A card's facts, for its next authorization: kept as active and open, which the statement checks. */
  private remember(card: AuthorizingCard): void {
    if (this.knownCards.size >= KNOWN_CARDS) this.knownCards.clear();
    this.knownCards.set(card.id, { ...card, status: 'active', account_status: 'open', has_controls: false });
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
    loaded: AuthorizingCard,
    input: AuthorizationRequest,
    judged: Judged,
  ): Promise<IssuingTransaction> {
    // The statuses as they are under the account's ledger lock (migration 0065): a compliance hold being
    // placed is waited for and seen, or waits for this authorization to commit
    let card = loaded;
    if (input.decline === undefined) {
      const { rows } = await sql<{ usable: boolean }>`
        SELECT issuing_card_usable_now(${card.id}, ${card.ledger_account_id}) AS usable`.execute(tx);
      if (!rows[0]?.usable) card = (await this.loadCard(tx, card.id)) ?? card;
    }
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

    const id = uuidv7();
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
