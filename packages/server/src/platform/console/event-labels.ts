// An event in words, for an object's timeline in the console (docs/console.md, What happened): the crypto
// and issuing APIs' types by name, a payments transaction's step by its kind, an order's or a payout's new
// status by the label table (labels.ts), with the amount the event carries.
import { findAsset } from '../money/assets.ts';
import { LABELS, type Label, type LabelKind, labelOf, readable } from './labels.ts';

/** The crypto API's and issuing API's event types in words (the payments API's are its statuses') */
const EVENT_WORDS: Record<string, string> = {
  'ORDER.PAYMENT.DETECTED': 'Payment seen on the chain',
  'ORDER.PAYMENT.REVERTED': 'Payment reverted by the chain',
  'ORDER.PAYMENT.PARTIAL': 'Part of the amount paid',
  'ORDER.PAYMENT.RECEIVED': 'Payment received',
  'ORDER.PAYMENT.LATE': 'Paid after the order expired',
  'ORDER.PAYMENT.CANCELLED': 'Order canceled',
  'ORDER.REFUND.PROPOSED': 'Refund proposed to the buyer',
  'ORDER.REFUND.ACCEPTED': 'Refund accepted by the buyer',
  'ORDER.REFUND.REJECTED': 'Refund rejected',
  'ORDER.REFUND.EXPIRED': 'Refund proposal expired',
  'ORDER.REFUND.COMPLETED': 'Refund sent',
  kycStatusChanged: 'KYC status changed',
  cardStatusChanged: 'Card status changed',
  transaction3dsRequested: '3-D Secure asked of the cardholder',
  transaction3dsCompleted: '3-D Secure answered',
  transactionCreated: 'Card payment authorized or declined',
  transactionSettled: 'Card payment settled',
  transactionStatusChanged: 'Card payment reversed or expired',
  topupCreated: 'Topup started',
  topupStatusChanged: 'Topup status changed',
  disputeCreated: 'Dispute opened',
  disputeStatusChanged: 'Dispute decided',
};

/** A payments transaction's kind as its timeline names it, and its steps that read better said whole */
const PAYMENT_NOUNS: Record<string, string> = {
  deposit: 'Payment',
  refund: 'Refund',
  credit: 'Payout to a card',
  chargeback: 'Chargeback',
  representment: 'Chargeback reversal',
};
const PAYMENT_STEPS: Record<string, string> = {
  'deposit in-progress': 'Payment authorized',
  'deposit void-ok': 'Authorization voided',
  'refund refund-ok': 'Refund succeeded',
  'chargeback charge-back': 'Charged back by the cardholder’s bank',
  'representment complete-ok': 'Dispute won: the chargeback reversed',
};

/**
 * An event in words, for an object's timeline: a payments transaction's step by its kind ("Refund
 * succeeded", "Charged back by the cardholder’s bank"), an order's or a payout's new status ("Payout
 * paid"), the other APIs' types by name; the amount when the event carries one.
 */
export function eventLabel(type: string, payload: unknown): string {
  const body = (typeof payload === 'object' && payload !== null ? payload : {}) as Record<string, unknown>;
  const written =
    (typeof body.amount === 'number' || typeof body.amount === 'string') && typeof body.currency === 'string'
      ? wireAmount(body.amount, body.currency)
      : undefined;
  const amount = written ? ` — ${written} ${String(body.currency)}` : '';
  const words = EVENT_WORDS[type];
  if (words) return words;
  const [object = '', step = ''] = type.toLowerCase().split(/\.(.*)/s);
  if (object === 'transaction' && typeof body.transactionType === 'string') {
    const kind = body.transactionType;
    const said =
      PAYMENT_STEPS[`${kind} ${step}`] ??
      `${PAYMENT_NOUNS[kind] ?? readable(kind)} ${lowerFirst(labelOf('payments.transaction', step).label)}`;
    return `${said}${amount}`;
  }
  const table: LabelKind | undefined =
    object === 'order' ? 'payments.order' : object === 'payout' ? 'payout' : undefined;
  if (!table) return readable(type);
  const label: Record<string, Label> = LABELS[table];
  const said = Object.hasOwn(label, step)
    ? label[step]?.label
    : { created: 'Created', released: 'Released' }[step];
  return said ? `${readable(object)} ${lowerFirst(said)}` : readable(type);
}
/**
 * The IPN's amount as it printed (a JSON number in major units) with the currency's own decimals, as text:
 * shown, never computed with, so it is not parsed into money here (the console's kit parses no wire).
 */
function wireAmount(amount: number | string, currency: string): string | undefined {
  const exponent = findAsset(currency)?.exponent;
  const text = String(amount);
  if (exponent === undefined || !/^\d+(\.\d+)?$/.test(text)) return undefined;
  const [whole = text, fraction = ''] = text.split('.');
  return exponent > fraction.length ? `${whole}.${fraction.padEnd(exponent, '0')}` : text;
}

const lowerFirst = (text: string) => `${text[0]?.toLowerCase() ?? ''}${text.slice(1)}`;
