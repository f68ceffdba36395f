// The common authorization in one statement (docs/issuing.md, Card transactions): one without a challenge
// that the card's checks pass, of a card with no spending controls — the transaction as authorized, its
// event, its hold and its risk signal in one round trip, atomic on its own.
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import { type Db, pgErrorCode } from '../../platform/db/database.ts';
import { StatementBatch, type StatementPart } from '../../platform/db/statement-batch.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import { uuidv7 } from '../../platform/ids.ts';
import { type Ledger, ledgerRefusal } from '../../platform/ledger/ledger.ts';
import type { Signal, Verdict } from '../../platform/risk/risk-engine.ts';
import { stageIssuingEvent } from '../events/publish-issuing-event.ts';
import type { AuthorizationRisk } from './authorization-risk.ts';
import type { DeclineReason, IssuingTransaction, MerchantFacts } from './transaction.ts';
import type { TransactionRecords } from './transaction-records.ts';

/** Spending controls set for the card, its account or its partner's program (migration 0054) */
export const HAS_CONTROLS = `EXISTS (SELECT 1 FROM issuing_spending_controls s
    WHERE s.subject_id IN (c.id::text, c.account_id::text, c.partner_id))`;

/**
 * The guard of every one-statement authorization (statement_guard, migration 0027): the card still active
 * and its account open, read under the account's ledger lock (issuing_card_usable_now, migration 0065, so
 * that a compliance hold's suspension is seen), and still without spending controls (controls set since
 * take the general way).
 */
const CARD_STILL_USABLE = `
  SELECT statement_guard(issuing_card_usable_now($1, $2) AND NOT EXISTS (
    SELECT 1 FROM issuing_cards c WHERE c.id = $1 AND ${HAS_CONTROLS}),
    'the card, its account or their controls changed')`;
const STATEMENT_GUARD_FAILED = 'TG001';
/** What refuses the one-statement authorization: the account short of funds, or a status changed. */
const isAuthorizationRefusal = (err: unknown) =>
  ledgerRefusal(err)?.details?.reason === 'insufficient_funds' || pgErrorCode(err) === STATEMENT_GUARD_FAILED;
// $7 is cast: the amount and the held amount are columns of two domains (migration 0048), and a parameter
// used for both would have no one type.
const INSERT_AUTHORIZED = `
  INSERT INTO issuing_transactions (id, customer_id, partner_id, card_id, account_id, type, status, currency, amount,
    held_amount, merchant, hold_id, hold_expires_at, created_at, authorized_at, updated_at, mcc, merchant_country,
    merchant_id, channel)
  VALUES ($1, $2, $3, $4, $5, 'card_payment', 'authorized', $6, $7::numeric, $7::numeric, $8, $9, $10, $11, $11, $11,
    $12, $13, $14, $15)`;

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
  /** When the cardholder became a customer and the account was opened: what risk rules read as ages */
  customer_since: Date;
  account_since: Date;
  /** The cardholder's country of residence, from their KYC: approved before any card, so it never changes */
  customer_country: string;
}

/** What the general way of authorizing is told beyond the card */
export type AuthorizationRequest = MerchantFacts & {
  currency: string;
  amount: bigint;
  threeDS: boolean;
  networkReference: string | null;
  /** Already known (the account was short when the hold was tried) */
  decline?: DeclineReason;
};

/** The authorization's risk signal and its rules' verdict (none: no rules), written with it */
export interface Judged {
  signal: Signal;
  verdict: Verdict | undefined;
  /** The one statement's check of the key velocity the verdict did not read (velocity-guard.ts) */
  guard?: StatementPart;
}

export class AuthorizeAtOnce {
  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      outbox: Outbox;
      ledger: Ledger;
      records: TransactionRecords;
      risk: AuthorizationRisk;
      holdSeconds: number;
    },
  ) {}

  /**
   * The common case, an authorization without a challenge that the card's checks pass, in one statement
   * (one round trip, atomic on its own): the transaction as authorized, its event and its hold, the card
   * and its account still active and open, checked in the statement (CARD_STILL_USABLE). Nothing
   * is written when the account cannot cover it (the ledger refused) or a status changed.
   */
  async run(
    card: AuthorizingCard,
    input: AuthorizationRequest,
    judged: Judged,
  ): Promise<IssuingTransaction | 'short_of_funds' | 'statuses_changed'> {
    const { db, clock, ledger, outbox } = this.deps;
    const id = uuidv7();
    const now = clock.now();
    const holdExpiresAt = addSeconds(now, this.deps.holdSeconds);
    const batch = new StatementBatch();
    batch.add({ sql: CARD_STILL_USABLE, parameters: [card.id, card.ledger_account_id], returns: true });
    if (judged.guard) batch.add(judged.guard);
    const holdId = ledger.stageHold(batch, {
      operationId: `issuing-auth:${id}`,
      debitAccountId: card.ledger_account_id,
      creditAccountId: await this.deps.records.settlementAccount(db, input.currency, id),
      amount: input.amount,
      expiresAt: holdExpiresAt,
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
}
