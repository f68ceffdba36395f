// The console's words for the APIs' codes (src/platform/console/labels.ts): every status, type and reason
// the three APIs' lifecycle tables can produce has a label of its own (not the code again), the
// payments network's reason codes read in words with the scheme's code after them, and a page shows
// the label as the headline with the wire value kept beside it in detail rows and filtering by it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRYPTO_REFUND_STATUSES } from '../../src/crypto/console/crypto-reads.ts';
import { CRYPTO_EVENT_STATES } from '../../src/crypto/events/publish-crypto-event.ts';
import { CARD_STATUSES, KYC_STATUSES } from '../../src/issuing/console/issuing-reads.ts';
import { DISPUTE_STEPS as ISSUING_DISPUTE_STEPS } from '../../src/issuing/disputes/dispute.ts';
import type { DeclineReason as IssuingDeclineReason } from '../../src/issuing/transactions/transaction.ts';
import { PAYOUT_STATUSES } from '../../src/pages/console/reads/payouts-reads.ts';
import { APPROVAL_STATUSES } from '../../src/pages/console/routes/approvals-routes.ts';
import { DISPUTE_STATUSES } from '../../src/payments/console/payments-reads.ts';
import { DISPUTE_STEPS, REASON_CODES } from '../../src/payments/disputes/dispute.ts';
import { FAILURES } from '../../src/payments/transactions/decline-codes.ts';
import { TIMELINE_KINDS } from '../../src/platform/compliance/case-timeline.ts';
import { eventLabel } from '../../src/platform/console/event-labels.ts';
import {
  disputeReasonLabel,
  LABELS,
  type LabelKind,
  labelOf,
  readable,
} from '../../src/platform/console/labels.ts';
import { status, statusFact } from '../../src/platform/console/values.ts';
import {
  CRYPTO_ORDER_STATUSES,
  PAYMENTS_ORDER_STATUSES,
  PAYMENTS_TRANSACTION_STATUSES,
} from '../../src/platform/db/schema.ts';
import { BALANCE_TRANSACTION_TYPES } from '../../src/platform/payouts/balance-transactions.ts';
import { ConsoleClient } from '../harness/console-client.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments } from '../harness/payments-builders.ts';

/** Every reason the issuing wire declines a card payment with: a reason added there and not here fails to compile */
const ISSUING_DECLINES: Record<IssuingDeclineReason, true> = {
  card_not_active: true,
  account_closed: true,
  currency_not_supported: true,
  amount_over_limit: true,
  insufficient_funds: true,
  spending_control: true,
  risk_declined: true,
  '3ds_declined': true,
  '3ds_cancelled': true,
  '3ds_timeout': true,
  '3ds_failed': true,
};

/** Each lifecycle table the APIs export, against the label kind that words it */
const LIFECYCLES: [LabelKind, readonly string[]][] = [
  ['payments.order', PAYMENTS_ORDER_STATUSES],
  ['payments.transaction', PAYMENTS_TRANSACTION_STATUSES],
  ['payments.dispute', DISPUTE_STATUSES],
  ['payments.dispute', Object.keys(DISPUTE_STEPS)],
  ['crypto.order', CRYPTO_ORDER_STATUSES],
  ['crypto.refund', CRYPTO_REFUND_STATUSES],
  ['issuing.card', CARD_STATUSES],
  ['issuing.kyc', KYC_STATUSES],
  ['issuing.dispute', Object.keys(ISSUING_DISPUTE_STEPS)],
  ['payout', PAYOUT_STATUSES],
  ['approval', APPROVAL_STATUSES],
  ['balance.type', BALANCE_TRANSACTION_TYPES],
  ['compliance.timeline', TIMELINE_KINDS],
  ['payments.decline', Object.keys(FAILURES)],
  ['issuing.decline', Object.keys(ISSUING_DECLINES)],
];

describe('the label table', () => {
  it('words every status of every lifecycle table, none of them the code again', () => {
    const missing: string[] = [];
    for (const [kind, values] of LIFECYCLES) {
      for (const value of values) {
        const table: Record<string, { label: string }> = LABELS[kind];
        if (!Object.hasOwn(table, value)) missing.push(`${kind} ${value}`);
      }
    }
    expect(missing).toEqual([]);
    for (const [kind, table] of Object.entries(LABELS)) {
      for (const [value, { label, tone }] of Object.entries(table)) {
        expect(label.length, `${kind} ${value}`).toBeGreaterThan(1);
        // Words a person reads: a capital first, never the code itself
        expect(label, `${kind} ${value}`).toMatch(/^[A-Z0-9]/);
        expect(label, `${kind} ${value}`).not.toBe(value);
        expect(['success', 'pending', 'attention', 'failure', 'neutral']).toContain(tone);
      }
    }
  });

  it('words every reason code of the sandbox network, with the scheme and code after them', () => {
    for (const [scheme, codes] of Object.entries(REASON_CODES)) {
      for (const code of Object.keys(codes)) {
        expect(disputeReasonLabel(scheme, code)).toMatch(
          /^[A-Z][^(]+ \((Visa|Mastercard|American Express) \S+\)$/,
        );
      }
    }
    expect(disputeReasonLabel('VISA', '10.4')).toBe('Fraud — card absent (Visa 10.4)');
    // A code this build does not know still says which it is
    expect(disputeReasonLabel('VISA', '12.6.1')).toBe('Visa 12.6.1');
  });

  it('renders a badge with its tone and the wire value, and a value it does not know as itself', () => {
    expect(String(status('complete-ok', 'payments.order'))).toBe(
      '<span class="status tone-success" data-status="complete-ok" title="complete-ok">Succeeded</span>',
    );
    expect(String(statusFact('needs_response', 'payments.dispute'))).toContain(
      'Needs your response</span> <code class="wire">needs_response</code>',
    );
    expect(labelOf('payments.order', 'from-a-newer-version')).toEqual({
      label: 'from-a-newer-version',
      tone: 'neutral',
    });
    // A name of Object.prototype is no status
    expect(labelOf('payout', 'constructor').label).toBe('constructor');
    expect(String(status(null, 'payout'))).toBe('—');
  });
});

describe('events in words', () => {
  it('words every crypto event type, a payments step by its kind, and a payout’s by its status', () => {
    for (const type of Object.keys(CRYPTO_EVENT_STATES))
      expect(eventLabel(type, {}), type).not.toBe(readable(type));
    expect(
      eventLabel('transaction.complete-ok', { transactionType: 'refund', amount: 5.5, currency: 'EUR' }),
    ).toBe('Refund succeeded — 5.50 EUR');
    expect(
      eventLabel('transaction.3d-pending', { transactionType: 'deposit', amount: 1000, currency: 'JPY' }),
    ).toBe('Payment waiting for 3-D Secure — 1000 JPY');
    expect(eventLabel('PAYOUT.RETURNED', {})).toBe('Payout returned by the bank');
    expect(eventLabel('disputeCreated', {})).toBe('Dispute opened');
    expect(eventLabel('something.new', null)).toBe('Something.new');
  });
});

describe('pages in words', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start();
  });
  afterAll(async () => {
    await h.close();
  });

  it('an order: the label as headline, the wire value beside it; the list filters by the wire value under a label', async () => {
    const merchant = await aMerchant(h);
    const order = await payments<{ data: { orderId: number; transactionId: number } }>(
      h,
      merchant,
      'POST',
      '/order',
      anOrder(await aCustomer(h, merchant)),
    );
    const operator = await ConsoleClient.operator(h);
    const page = await operator.get(`/console/payments/orders/${order.body.data.orderId}`);
    expect(page.text).toContain(
      '<span class="status tone-success" data-status="complete-ok" title="complete-ok">Succeeded</span> <code class="wire">complete-ok</code>',
    );
    expect(page.text).toContain('One-off purchase');
    const list = await operator.get('/console/payments/orders?status=complete-ok');
    expect(list.status).toBe(200);
    expect(list.text).toContain('<option value="complete-ok" selected>Succeeded</option>');
    expect(list.text).toContain('<option value="in-progress">In progress</option>');
    expect(list.text).toMatch(
      /<td data-label="Status"><span class="status tone-success" data-status="complete-ok" title="complete-ok">Succeeded<\/span><\/td>/,
    );
    const transaction = await operator.get(`/console/payments/transactions/${order.body.data.transactionId}`);
    expect(transaction.text).toContain('<code class="wire">deposit</code>');
    expect(transaction.text).toContain('>Payment</span>');
    // A decline's reason in words, the wire's reason beside it
    const declined = await payments<{ data: { transactionId: number } }>(
      h,
      merchant,
      'POST',
      '/order',
      anOrder(await aCustomer(h, merchant), { cardNumber: '4000000000009995' }),
    );
    const declinedPage = await operator.get(
      `/console/payments/transactions/${declined.body.data.transactionId}`,
    );
    expect(declinedPage.text).toContain(
      'Not enough funds</span> <code class="wire">insufficient_funds</code>',
    );
  });
});
