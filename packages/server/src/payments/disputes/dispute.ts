// A chargeback case (docs/payments.md, Disputes): the networks' reason codes the sandbox knows, the
// dispute's lifecycle in one table, the deadlines, how the sandbox network decides, and which dispute
// of a payment is still open.
import type { Executor } from '../../platform/db/database.ts';
import type { PaymentsDisputeStatus } from '../../platform/db/schema.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';

/** The reason codes of the sandbox network, per card scheme, with what each disputes. */
export const REASON_CODES: Record<
  string,
  Record<string, { kind: 'fraud' | 'not_received'; description: string }>
> = {
  VISA: {
    '10.4': { kind: 'fraud', description: 'Other fraud: card-absent environment' },
    '13.1': { kind: 'not_received', description: 'Merchandise / services not received' },
  },
  MASTERCARD: {
    '4837': { kind: 'fraud', description: 'No cardholder authorization' },
    '4855': { kind: 'not_received', description: 'Goods or services not provided' },
  },
  AMEX: {
    F29: { kind: 'fraud', description: 'Card not present' },
    C08: { kind: 'not_received', description: 'Goods / services not received or only partially received' },
  },
};

/** The scheme whose codes a card's chargeback uses (other schemes use Visa's, as the sandbox network does). */
export function schemeOf(cardBrand: string | null): keyof typeof REASON_CODES {
  const brand = (cardBrand ?? '').toUpperCase();
  return brand === 'MASTERCARD' || brand === 'AMEX' ? brand : 'VISA';
}

/** The code a scheme gives a kind of dispute (the network's own chargebacks of test cards). */
export function codeFor(scheme: keyof typeof REASON_CODES, kind: 'fraud' | 'not_received'): string {
  const entry = Object.entries(REASON_CODES[scheme] ?? {}).find(([, code]) => code.kind === kind);
  if (!entry) throw new Error(`no ${kind} code for ${scheme}`);
  return entry[0];
}

/**
 * The lifecycle: the merchant answers (evidence: under review) or accepts before the deadline, else the
 * dispute is lost; the network decides a dispute under review. Decided once.
 */
export const DISPUTE_STEPS: Record<PaymentsDisputeStatus, readonly PaymentsDisputeStatus[]> = {
  needs_response: ['under_review', 'accepted', 'lost', 'won'],
  under_review: ['won', 'lost'],
  won: [],
  lost: [],
  accepted: [],
};

export function assertDisputeStep(
  from: PaymentsDisputeStatus,
  to: PaymentsDisputeStatus,
  action: string,
): void {
  if (!DISPUTE_STEPS[from].includes(to)) {
    throw new DomainError('invalid_state', `cannot ${action}: the dispute is ${from}`, {
      details: { status: from },
    });
  }
}

/** Sandbox days the merchant has to answer a chargeback */
export const RESPONSE_DAYS = 7;
/** Sandbox days the network takes to decide a dispute under review */
export const REVIEW_DAYS = 5;

/**
 * The sandbox network's decision of a dispute under review: what the test card or the trigger planned,
 * else won — the merchant answered with evidence.
 */
export function networkDecision(planned: 'won' | 'lost' | null): 'won' | 'lost' {
  return planned ?? 'won';
}

/** The payment's dispute that awaits an answer or a decision, if any (a refund and a new chargeback wait for it). */
export async function openDisputeOf(db: Executor, transactionId: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('payments_disputes')
    .select('id')
    .where('transaction_id', '=', transactionId)
    .where('status', 'in', ['needs_response', 'under_review'])
    .executeTakeFirst();
  return row?.id;
}
