// A cardholder dispute (docs/issuing.md, Disputes): its record, its lifecycle in one table, and the
// sandbox network's own decision. No database here.
import type { IssuingDisputeStatus } from '../../platform/db/schema.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';

/** Why the cardholder disputes the payment (the card networks' dispute categories, in plain words). */
export const DISPUTE_REASONS = [
  'fraud',
  'not_received',
  'not_as_described',
  'duplicate',
  'incorrect_amount',
  'canceled',
  'other',
] as const;
export type DisputeReason = (typeof DISPUTE_REASONS)[number];

/** The lifecycle: the network reviews the dispute and decides once. */
export const DISPUTE_STEPS: Record<IssuingDisputeStatus, readonly IssuingDisputeStatus[]> = {
  under_review: ['won', 'lost'],
  won: [],
  lost: [],
};

export function assertDisputeStep(from: IssuingDisputeStatus, to: IssuingDisputeStatus): void {
  if (!DISPUTE_STEPS[from].includes(to)) {
    throw new DomainError('invalid_state', `the dispute is already ${from}`, { details: { status: from } });
  }
}

/** How long the sandbox network reviews a dispute before it decides by itself, in days */
export const DISPUTE_REVIEW_DAYS = 10;

/**
 * The sandbox network's own decision when nobody decided by hand: a dispute whose amount ends in 13 minor
 * units (10.13, 0.13) is lost, every other is won — so a test can choose the outcome by its amount.
 */
export function sandboxOutcome(amount: bigint): 'won' | 'lost' {
  return amount % 100n === 13n ? 'lost' : 'won';
}

export interface IssuingDispute {
  disputeId: string;
  transactionId: string;
  customerId: string;
  status: IssuingDisputeStatus;
  reason: string;
  explanation: string | null;
  currency: string;
  amount: bigint;
  provisionalCredit: bigint;
  unrecoveredAmount: bigint;
  decideBy: Date;
  createdAt: Date;
  decidedAt: Date | null;
}
