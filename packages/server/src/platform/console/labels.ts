// The console's words for the APIs' codes (docs/console.md, Words, not codes): every status, type and
// reason a page shows maps here to a label a person reads and a tone its badge takes. The wire value is
// never hidden — a badge carries it as its title, a detail row shows it beside the label, search finds
// by it — but it is not the headline. Typed by the schema's own unions, so a status added to a lifecycle
// without its words here does not compile; test/console/labels.test.ts reads the APIs' exported
// lifecycle tables and reason codes against it at run time too.

import type { TimelineKind } from '../compliance/case-timeline.ts';
import type {
  ApprovalStatus,
  BusinessProfileStatus,
  CardStatus,
  ComplianceCaseStatus,
  CryptoOrderStatus,
  CryptoRefundStatus,
  IssuingDisputeStatus,
  IssuingTransactionStatus,
  KycStatus,
  PaymentsDisputeStatus,
  PaymentsOrderStatus,
  PaymentsOrderType,
  PaymentsTransactionStatus,
  ThreeDsStatus,
  TopupStatus,
} from '../db/schema.ts';
import type { BalanceTransactionType } from '../payouts/balance-transactions.ts';

/** How a badge reads at a glance: done well, still moving, a person should look, went wrong, or neither */
export type Tone = 'success' | 'pending' | 'attention' | 'failure' | 'neutral';
export interface Label {
  label: string;
  tone: Tone;
}

const ok = (label: string): Label => ({ label, tone: 'success' });
const wait = (label: string): Label => ({ label, tone: 'pending' });
const look = (label: string): Label => ({ label, tone: 'attention' });
const bad = (label: string): Label => ({ label, tone: 'failure' });
const plain = (label: string): Label => ({ label, tone: 'neutral' });

export const LABELS = {
  'payments.order': {
    start: plain('Created'),
    'in-progress': wait('In progress'),
    retrying: wait('Retrying a failed bill'),
    expiring: look('Card expiring'),
    'complete-ok': ok('Succeeded'),
    'complete-failed': bad('Failed'),
    canceled: plain('Canceled'),
  } satisfies Record<PaymentsOrderStatus, Label>,
  'payments.orderType': {
    purchase: plain('One-off purchase'),
    recurring: plain('Subscription'),
    managed: plain('Managed by the site'),
    credit: plain('Payout to a card'),
  } satisfies Record<PaymentsOrderType, Label>,
  'payments.transaction': {
    start: plain('Created'),
    'in-progress': wait('Authorized, not captured'),
    'complete-ok': ok('Succeeded'),
    'complete-failed': bad('Declined'),
    'cancel-ok': plain('Canceled'),
    'refund-ok': plain('Refunded'),
    'void-ok': plain('Voided'),
    '3d-pending': wait('Waiting for 3-D Secure'),
    'charge-back': bad('Charged back'),
  } satisfies Record<PaymentsTransactionStatus, Label>,
  'payments.transactionType': {
    deposit: plain('Payment'),
    refund: plain('Refund'),
    credit: plain('Payout to a card'),
    chargeback: plain('Chargeback'),
    representment: plain('Chargeback reversed'),
  } satisfies Record<'deposit' | 'refund' | 'credit' | 'chargeback' | 'representment', Label>,
  // Why a payment failed (the payments API's 402 reasons: test/console/labels.test.ts holds them to these)
  'payments.decline': {
    generic: bad('Declined by the card’s bank'),
    insufficient_funds: bad('Not enough funds'),
    expired_card: bad('Card expired'),
    soft_decline: bad('The bank asks for 3-D Secure (soft decline)'),
    authentication_failed: bad('3-D Secure failed'),
    processor_timeout: bad('The network did not answer in time'),
    card_not_active: bad('Card not active'),
    invalid_card: bad('Card details match no card'),
    currency_not_supported: bad('The card does not take this currency'),
    amount_over_limit: bad('Over the card’s limit'),
    merchant_balance_insufficient: bad('The site’s balance does not cover it'),
    card_deleted: bad('Stored card deleted'),
    risk_blocked: bad('Blocked by a risk rule'),
  } satisfies Record<string, Label>,
  'payments.dispute': {
    needs_response: look('Needs your response'),
    under_review: wait('Under review by the bank'),
    won: ok('Won'),
    lost: bad('Lost'),
    accepted: plain('Accepted'),
  } satisfies Record<PaymentsDisputeStatus, Label>,
  'payments.storedCard': {
    active: ok('Saved'),
    deleted: plain('Deleted'),
  } satisfies Record<'active' | 'deleted', Label>,
  'crypto.order': {
    pending: wait('Waiting for payment'),
    paid: ok('Paid'),
    expired: plain('Expired unpaid'),
    canceled: plain('Canceled'),
    refund_proposed: look('Refund proposed'),
    refund_processing: wait('Refund being sent'),
    refund_completed: plain('Refunded'),
  } satisfies Record<CryptoOrderStatus, Label>,
  'crypto.refund': {
    proposed: look('Waiting for the buyer’s address'),
    accepted: wait('Being sent'),
    rejected: plain('Rejected'),
    complete: ok('Sent'),
    expired: plain('Expired'),
  } satisfies Record<CryptoRefundStatus, Label>,
  'crypto.deposit': {
    detected: wait('Seen, confirming'),
    confirmed: ok('Confirmed'),
    reverted: bad('Reverted by the chain'),
  } satisfies Record<'detected' | 'confirmed' | 'reverted', Label>,
  'crypto.transfer': {
    queued: wait('Queued'),
    broadcast: wait('Broadcast'),
    pending: wait('Confirming'),
    confirmed: ok('Confirmed'),
    reverted: bad('Reverted by the chain'),
    failed: bad('Failed'),
  } satisfies Record<'queued' | 'broadcast' | 'pending' | 'confirmed' | 'reverted' | 'failed', Label>,
  'issuing.card': {
    pending: wait('Being made'),
    readyToBeActivated: look('Waiting for activation'),
    active: ok('Active'),
    suspended: look('Suspended'),
    frozen: look('Frozen'),
    closed: plain('Closed'),
  } satisfies Record<CardStatus, Label>,
  'issuing.kyc': {
    not_started: plain('Not started'),
    in_progress: wait('In progress'),
    pending_review: look('Waiting for review'),
    approved: ok('Verified'),
    rejected: bad('Rejected'),
  } satisfies Record<KycStatus, Label>,
  'issuing.kycVerification': {
    started: wait('Started'),
    verified: ok('Verified'),
    rejected: bad('Rejected'),
  } satisfies Record<'started' | 'verified' | 'rejected', Label>,
  'issuing.customer': {
    pending_verification: look('Email not verified'),
    active: ok('Active'),
  } satisfies Record<'pending_verification' | 'active', Label>,
  'issuing.account': {
    open: ok('Open'),
    closed: plain('Closed'),
  } satisfies Record<'open' | 'closed', Label>,
  'issuing.transaction': {
    pending_3ds: wait('Waiting for 3-D Secure'),
    authorized: wait('Authorized'),
    declined: bad('Declined'),
    settled: ok('Settled'),
    reversed: plain('Reversed'),
    expired: plain('Authorization expired'),
  } satisfies Record<IssuingTransactionStatus, Label>,
  // Why an issued card's payment was declined (the issuing wire's declineReason)
  'issuing.decline': {
    card_not_active: bad('Card not active'),
    account_closed: bad('Account closed'),
    currency_not_supported: bad('Another currency than the card’s'),
    amount_over_limit: bad('Over the largest payment the program allows'),
    insufficient_funds: bad('Not enough funds'),
    spending_control: bad('Refused by a spending control'),
    risk_declined: bad('Declined by a risk rule'),
    '3ds_declined': bad('The cardholder refused 3-D Secure'),
    '3ds_cancelled': bad('3-D Secure canceled'),
    '3ds_timeout': bad('3-D Secure timed out'),
    '3ds_failed': bad('3-D Secure failed'),
  } satisfies Record<string, Label>,
  'issuing.threeDs': {
    pending: wait('Waiting for the cardholder'),
    authorized: ok('Approved by the cardholder'),
    declined: bad('Refused by the cardholder'),
    cancelled: plain('Canceled'),
    timeout: bad('Timed out'),
    failed: bad('Failed'),
  } satisfies Record<ThreeDsStatus, Label>,
  'issuing.topup': {
    pending: wait('Waiting for payment'),
    confirming: wait('Confirming'),
    completed: ok('Added to the account'),
    expired: plain('Expired unpaid'),
  } satisfies Record<TopupStatus, Label>,
  'issuing.dispute': {
    under_review: wait('Under review by the network'),
    won: ok('Won'),
    lost: bad('Lost'),
  } satisfies Record<IssuingDisputeStatus, Label>,
  payout: {
    held: look('Held'),
    pending: wait('Scheduled'),
    in_transit: wait('On its way'),
    paid: ok('Paid'),
    failed: bad('Failed'),
    returned: bad('Returned by the bank'),
  } satisfies Record<'held' | 'pending' | 'in_transit' | 'paid' | 'failed' | 'returned', Label>,
  'balance.type': {
    capture: plain('Payment captured'),
    refund: plain('Refund'),
    fee: plain('Fee'),
    payout: plain('Payout'),
    payout_return: plain('Payout returned'),
    reserve_hold: plain('Held in reserve'),
    reserve_release: plain('Released from reserve'),
    adjustment: plain('Adjustment'),
    chargeback: plain('Chargeback'),
    representment: plain('Chargeback reversed'),
  } satisfies Record<BalanceTransactionType, Label>,
  'bank.file': {
    applied: ok('Applied'),
    rejected: bad('Rejected'),
  } satisfies Record<'applied' | 'rejected', Label>,
  'ledger.transaction': {
    posted: ok('Posted'),
    pending: wait('Pending'),
    voided: plain('Voided'),
    expired: plain('Expired'),
    settled: ok('Settled'),
  } satisfies Record<'posted' | 'pending' | 'voided' | 'expired' | 'settled', Label>,
  webhook: {
    pending: wait('Being delivered'),
    succeeded: ok('Delivered'),
    failed: bad('Failing'),
    waiting: wait('Waiting to retry'),
    none: plain('No endpoint'),
  } satisfies Record<'pending' | 'succeeded' | 'failed' | 'waiting' | 'none', Label>,
  approval: {
    pending: look('Waiting for a second person'),
    approved: ok('Approved and done'),
    rejected: plain('Rejected'),
    expired: plain('Expired'),
  } satisfies Record<ApprovalStatus, Label>,
  'audit.outcome': {
    succeeded: ok('Succeeded'),
    refused: look('Refused'),
    failed: bad('Failed'),
  } satisfies Record<'succeeded' | 'refused' | 'failed', Label>,
  'risk.review': {
    pending: look('Waiting for a decision'),
    approved: ok('Approved'),
    refused: bad('Refused'),
    expired: plain('Expired: the default applied'),
  } satisfies Record<'pending' | 'approved' | 'refused' | 'expired', Label>,
  'risk.mode': {
    active: ok('Active'),
    shadow: plain('Shadow: recorded only'),
  } satisfies Record<'active' | 'shadow', Label>,
  'compliance.profile': {
    draft: plain('Draft'),
    submitted: look('Submitted for review'),
    approved: ok('Approved'),
    rejected: bad('Rejected'),
    more_information: look('More information asked'),
  } satisfies Record<BusinessProfileStatus, Label>,
  'compliance.case': {
    open: look('Open'),
    cleared: ok('Cleared'),
    confirmed: bad('Confirmed'),
  } satisfies Record<ComplianceCaseStatus, Label>,
  'compliance.timeline': {
    opened: plain('Case opened'),
    alert: look('Alert raised'),
    held: look('Held'),
    note: plain('Note added'),
    released: plain('Released'),
    decided: plain('Decided'),
  } satisfies Record<TimelineKind, Label>,
} as const;

export type LabelKind = keyof typeof LABELS;

/**
 * A dispute's reason in words, with the scheme's code after it: "Fraud — card absent (Visa 10.4)". Each
 * scheme's codes the sandbox network uses; a code this table lacks reads as the scheme and code.
 */
export const DISPUTE_REASON_LABELS: Record<string, Record<string, string>> = {
  VISA: { '10.4': 'Fraud — card absent', '13.1': 'Goods or services not received' },
  MASTERCARD: { '4837': 'Fraud — no cardholder authorization', '4855': 'Goods or services not provided' },
  AMEX: { F29: 'Fraud — card not present', C08: 'Goods or services not received' },
};
const SCHEME_NAMES: Record<string, string> = {
  VISA: 'Visa',
  MASTERCARD: 'Mastercard',
  AMEX: 'American Express',
};

export function disputeReasonLabel(scheme: string, code: string): string {
  const name = SCHEME_NAMES[scheme.toUpperCase()] ?? scheme;
  const words = DISPUTE_REASON_LABELS[scheme.toUpperCase()]?.[code];
  return words ? `${words} (${name} ${code})` : `${name} ${code}`;
}

/** A code no table words (a ledger account's purpose, an entry's kind) made readable: `in_transit` → "In transit" */
export function readable(code: string): string {
  const spaced = code
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .trim();
  return spaced ? `${spaced[0]?.toUpperCase()}${spaced.slice(1).toLowerCase()}` : code;
}

/** A code's label and tone; a value this build does not know (a newer version's data) reads as itself. */
export function labelOf(kind: LabelKind, value: string): Label {
  const table: Record<string, Label> = LABELS[kind];
  return Object.hasOwn(table, value) ? (table[value] as Label) : { label: value, tone: 'neutral' };
}
