// A card transaction of an issued card (docs/issuing.md, Card transactions and Clearing): its record,
// its lifecycle in one table, and the pure rules of authorization and clearing. No database here.
import type { IssuingTransactionStatus, ThreeDsStatus } from '../../platform/db/schema.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { Channel } from '../cards/spending-controls.ts';

export interface IssuingTransaction {
  transactionId: string;
  customerId: string;
  cardId: string;
  accountId: string;
  type: 'card_payment' | 'refund';
  status: IssuingTransactionStatus;
  currency: string;
  amount: bigint;
  /** What the clearings posted so far (null: none yet) */
  settledAmount: bigint | null;
  /** Still held for the clearings to come (null: never held) */
  heldAmount: bigint | null;
  /** Refunds of this payment so far */
  refundedAmount: bigint;
  /** Cleared without an authorization */
  forcePost: boolean;
  /** A refund: the payment it refunds */
  originalTransactionId: string | null;
  merchant: string;
  declineReason: string | null;
  /** The spending control that declined it (declineReason 'spending_control'), as '<scope>.<control>' */
  declinedBy: string | null;
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

/** Where and how the card is used, as the authorization request says (spending controls read it) */
export interface MerchantFacts {
  merchant: string;
  /** ISO 18245 merchant category code; null when the request gave none */
  mcc: string | null;
  /** ISO 3166-1 alpha-2; null when the request gave none */
  merchantCountry: string | null;
  merchantId: string | null;
  channel: Channel;
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

/**
 * The lifecycle: from each status, the statuses a step may lead to. `authorized → authorized` is a part
 * cleared or reversed with the rest still held; `expired → settled` is a late presentment (a clearing
 * after the hold lapsed). Refunds are transactions of their own and change no status.
 */
export const TRANSACTION_STEPS: Record<IssuingTransactionStatus, readonly IssuingTransactionStatus[]> = {
  pending_3ds: ['authorized', 'declined'],
  authorized: ['authorized', 'settled', 'reversed', 'expired'],
  expired: ['settled'],
  settled: [],
  declined: [],
  reversed: [],
};

/** Refuses a step the lifecycle does not have (409 naming the status). */
export function assertStep(
  action: string,
  from: IssuingTransactionStatus,
  to: IssuingTransactionStatus,
): void {
  if (!TRANSACTION_STEPS[from].includes(to)) throw stateError(action, from);
}

export function stateError(action: string, status: string): DomainError {
  return new DomainError('invalid_state', `cannot ${action} a transaction that is ${status}`, {
    details: { status },
  });
}

export type DeclineReason =
  | 'card_not_active'
  | 'account_closed'
  | 'currency_not_supported'
  | 'amount_over_limit'
  | 'insufficient_funds'
  | 'spending_control'
  | 'risk_declined'
  | '3ds_declined'
  | '3ds_cancelled'
  | '3ds_timeout'
  | '3ds_failed';

/** The largest single card payment the program authorizes, in major units (default: 10,000) */
export const MAX_AUTHORIZATION_MAJOR = 10_000n;

/** Why the card cannot pay this now, if it cannot: checked at authorization and again at 3DS approval. */
export function declineFor(
  card: { status: string; account_status: string; currency: string },
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

/**
 * The most that the clearings of an authorization may post together: the authorized amount plus the
 * tolerance (tips, fuel), rounded down to the minor unit.
 */
export function clearingCeiling(authorized: bigint, tolerancePercent: number): bigint {
  return authorized + (authorized * BigInt(Math.round(tolerancePercent * 100))) / 10_000n;
}

export function assetOf(currency: string) {
  const asset = findAsset(currency);
  if (!asset) throw new Error(`unknown currency ${currency}`);
  return asset;
}

/** The ledger's refusal of a clearing for want of funds, as the clearing's decline. */
export async function declinedWhenShort(posting: Promise<unknown>): Promise<void> {
  try {
    await posting;
  } catch (err) {
    if (err instanceof DomainError && err.details?.reason === 'insufficient_funds') {
      throw clearingDeclined('insufficient_funds', 'the account cannot cover it');
    }
    throw err;
  }
}

/** A clearing the program will not post: a 422 saying why; nothing of it is written. */
export function clearingDeclined(
  reason: 'over_tolerance' | 'insufficient_funds',
  message: string,
  details: Record<string, unknown> = {},
) {
  return new DomainError('limit_exceeded', `clearing declined: ${message}`, {
    field: 'amount',
    details: { reason, ...details },
  });
}
