// The card network rail: what the payments API (the acquirer side) asks of card schemes and issuers.
// An authorization is approved, declined, needs a 3D Secure challenge, or its answer is lost (unknown,
// resolved later by reconciliation). Later news about a reference (a challenge decided, a lost answer
// reconciled) is handed to the owner's sink inside the transaction that learned it.
// A card issued by this platform's issuing API is authorized on-us by the issuer connected here.
import type { Tx } from '../../platform/db/database.ts';
import type { StatementBatch } from '../../platform/db/statement-batch.ts';

export interface CardDetails {
  pan: string;
  expiryMonth: number;
  /** Four digits */
  expiryYear: number;
  cvv?: string;
}

export interface AuthorizationRequest {
  /** Whose news this is (the sink connected under this name) */
  owner: string;
  /** The requester's unique reference for this authorization */
  reference: string;
  card: CardDetails;
  amount: bigint;
  currency: string;
  merchant: string;
  /** The acquirer's id of the merchant (an on-us issuer's spending controls read it) */
  merchantId?: string;
  /** The merchant's category code (ISO 18245) and country (ISO 3166 alpha-2), as the acquirer knows them */
  mcc?: string | null;
  merchantCountry?: string | null;
  /** 'credit' pushes funds to the card (OCT); 'purchase' pulls them */
  kind: 'purchase' | 'credit';
  /** Merchant-initiated charges (recurring, rebill) are exempt from 3D Secure */
  initiator: 'customer' | 'merchant';
  /** The merchant already authenticated the cardholder (external 3DS, wallet or token cryptogram) */
  isAuthenticated: boolean;
  /** A retry after a soft decline, asking for 3D Secure */
  isSoftDeclineRetry: boolean;
  /**
   * The requestor asks for a 3-D Secure challenge whatever the issuer would choose (EMV 3DS's challenge
   * indicator "challenge requested: mandate"): a risk rule's `challenge` (docs/risk.md)
   */
  challengeRequested?: boolean;
  /** Where the challenge page sends the browser when the cardholder has decided */
  returnUrl: string;
  /** Capture at once when approved without a challenge (a sale: one message instead of two) */
  capture: boolean;
}

export type DeclineReason =
  | 'generic'
  | 'insufficient_funds'
  | 'expired_card'
  | 'soft_decline'
  | 'authentication_failed'
  | 'processor_timeout'
  | 'card_not_active'
  | 'invalid_card'
  | 'currency_not_supported'
  | 'amount_over_limit';

/** Hard declines are final; the others may succeed on a later attempt (recurring retries). */
export const HARD_DECLINES: ReadonlySet<DeclineReason> = new Set([
  'generic',
  'expired_card',
  'authentication_failed',
  'card_not_active',
  'invalid_card',
  'currency_not_supported',
]);

export interface ChallengeRedirect {
  url: string;
  formMethod: 'POST' | 'GET';
  params: Record<string, string>;
}

export type AuthorizationAnswer =
  | { outcome: 'approved'; threeDS: 'none' | 'frictionless'; captured: boolean }
  | { outcome: 'declined'; reason: DeclineReason }
  | { outcome: 'challenge'; redirect: ChallengeRedirect }
  | { outcome: 'unknown' };

/** Later news of an authorization, for its owner. */
export type NetworkNews =
  | {
      reference: string;
      kind: 'challenge_decided' | 'reconciled';
      outcome: 'approved' | 'declined';
      reason?: DeclineReason;
      /** The approval was a sale and is already captured */
      captured?: boolean;
    }
  | {
      reference: string;
      /** The cardholder's bank disputes the captured payment: the network takes the money back */
      kind: 'chargeback';
      dispute: 'fraud' | 'not_received';
      /** How the network will decide, when it already knows (the test card says) */
      plannedOutcome?: 'won' | 'lost';
    };

export type NetworkSink = (tx: Tx, news: NetworkNews) => Promise<void>;

/** What the network's BIN table says of a card range (the real service shows it as `binInfo`). */
export interface BinInfo {
  bin: string;
  /** The scheme, upper case: VISA, MASTERCARD, AMEX, … */
  brand: string;
  /** CREDIT, DEBIT or PREPAID */
  type: string;
  /** The product level: CLASSIC, GOLD, BUSINESS, … */
  level: string;
  /** The issuer's country, ISO 3166 alpha-2 */
  countryCode: string;
  /** The issuing bank */
  bank: string;
}

export interface CardNetwork {
  /** The BIN table's entry for a card's first six digits. */
  binInfo(bin: string): BinInfo;
  authorize(tx: Tx, request: AuthorizationRequest): Promise<AuthorizationAnswer>;
  /**
   * The answer when the network can give it without its state (an approval or a decline), its record
   * added to the caller's batch of writes; undefined when `authorize` must be asked instead.
   */
  authorizeAtOnce?(
    batch: StatementBatch,
    request: Omit<AuthorizationRequest, 'returnUrl'>,
  ): AuthorizationAnswer | undefined;
  /** Captures part or all of an approved authorization; the rest is released. */
  capture(tx: Tx, reference: string, amount: bigint): Promise<void>;
  /** Releases an approved, uncaptured authorization. */
  release(tx: Tx, reference: string): Promise<void>;
  /** Gives captured funds back to the card. */
  refund(tx: Tx, reference: string, refundReference: string, amount: bigint): Promise<void>;
  connect(owner: string, sink: NetworkSink): void;
  connectIssuer(issuer: OnUsIssuer): void;
  /** An on-us issuer reports its cardholder's 3D Secure decision (or its timeout). */
  issuerDecided(
    tx: Tx,
    reference: string,
    outcome: 'approved' | 'declined',
    reason?: DeclineReason,
  ): Promise<void>;
}

/** The issuing side of this platform, for cards it issued (recognised by BIN). */
export interface OnUsIssuer {
  issues(pan: string): boolean;
  authorize(
    tx: Tx,
    request: {
      reference: string;
      card: CardDetails;
      amount: bigint;
      currency: string;
      merchant: string;
      merchantId: string | null;
      mcc: string | null;
      merchantCountry: string | null;
      /** Ask the cardholder (issuing 3D Secure challenge) before approving */
      challenge: boolean;
    },
  ): Promise<{ outcome: 'approved' | 'challenge' } | { outcome: 'declined'; reason: DeclineReason }>;
  capture(tx: Tx, reference: string, amount: bigint): Promise<void>;
  release(tx: Tx, reference: string): Promise<void>;
  /** Funds to the card: a refund of an earlier payment (`refundOf`), or a credit (OCT) to `card`. */
  credit(
    tx: Tx,
    request: {
      reference: string;
      refundOf?: string;
      card?: CardDetails;
      amount: bigint;
      currency: string;
      merchant: string;
    },
  ): Promise<{ outcome: 'approved' } | { outcome: 'declined'; reason: DeclineReason }>;
}
