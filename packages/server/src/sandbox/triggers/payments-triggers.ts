// Triggers of the payments API's IPNs, for a site: a customer and an order made as the API makes them,
// paid with the sandbox's test cards (README), then captured, refunded, voided or canceled as the API
// would. Each IPN type is `transaction.<status>` or `order.<status>`.
import type { GivenInstrument } from '../../payments/orders/payment-instrument.ts';
import type { PaymentsServices } from '../../payments/payments-services.ts';
import { loadMerchantScope, type MerchantScope } from '../../payments/sites.ts';
import { cardBrand } from '../../platform/cards/card-number.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { ClientAmount } from '../../platform/money/amount.ts';
import type { RiskReviews } from '../../platform/risk/reviews.ts';
import { PAYOUT_TRIGGER_STEPS, type PayoutTriggerServices, payoutOf } from './payout-trigger.ts';
import { type Trigger, triggerRef } from './trigger-context.ts';

export interface PaymentsTriggerServices extends PayoutTriggerServices {
  payments: PaymentsServices;
  /** A review's outcome, decided as a person would (docs/risk.md, Reviews) */
  reviews: Pick<RiskReviews, 'decide'>;
}

type PaymentsTrigger = Trigger<PaymentsTriggerServices>;

/** A test card as the API's edge would read it: the catalog's numbers are valid, three years ahead. */
function testCard(pan: string): GivenInstrument {
  return {
    card: { pan, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvv: '123' },
    brand: cardBrand(pan),
    kind: 'card',
    source: 'new',
    storedCardId: undefined,
    holderName: 'Sandbox Buyer',
    holderCountry: 'RO',
    holderState: null,
    isAuthenticated: false,
  };
}

async function siteScope(s: PaymentsTriggerServices, siteId: string): Promise<MerchantScope> {
  const site = /^\d{1,10}$/.test(siteId)
    ? await s.db
        .selectFrom('sites')
        .select(['id', 'merchant_id'])
        .where('id', '=', Number(siteId))
        .executeTakeFirst()
    : undefined;
  if (!site) throw notFound('site');
  return { ...(await loadMerchantScope(s.db, site.merchant_id)), siteIds: [site.id] };
}

/** An order paid with this card; a decline is an answer here, not an error. */
async function anOrder(
  s: PaymentsTriggerServices,
  siteId: string,
  card: string,
  mode: 'authAndCapture' | 'auth' = 'authAndCapture',
  email = 'buyer@sandbox.tessera.invalid',
) {
  const merchant = await siteScope(s, siteId);
  const customer = await s.payments.customers.create(merchant, {
    identifier: triggerRef('trigger'),
    email,
  });
  try {
    const charged = await s.payments.orders.create(merchant, {
      amount: ClientAmount.read('10.00'),
      currency: 'EUR',
      orderType: 'purchase',
      customerId: customer.id,
      externalOrderId: triggerRef('trigger'),
      description: 'Sandbox trigger',
      cardTransactionMode: mode,
      instrument: testCard(card),
    });
    return { merchant, orderId: charged.order.id, transactionId: charged.transaction.id };
  } catch (err) {
    const data =
      err instanceof DomainError
        ? (err.details?.data as { orderId?: number; transactionId?: number })
        : undefined;
    if (err instanceof DomainError && err.status === 402 && data?.orderId && data.transactionId) {
      return { merchant, orderId: data.orderId, transactionId: data.transactionId };
    }
    throw err;
  }
}

const ids = (made: { orderId: number; transactionId: number }) => ({
  orderId: String(made.orderId),
  transactionId: String(made.transactionId),
});

/**
 * A purchase a rule held for review (the sandbox's test email risk-review@example.com holds it, whatever
 * the rules), then decided as a person deciding its review would: approved it is captured, refused voided.
 */
async function aReviewDecided(s: PaymentsTriggerServices, siteId: string, approved: boolean) {
  const made = await anOrder(s, siteId, '4111111111111111', 'authAndCapture', 'risk-review@example.com');
  const review = await s.db
    .selectFrom('risk_reviews')
    .select('id')
    .where('object_id', '=', String(made.transactionId))
    .where('decision_point', '=', 'payments.charge')
    .executeTakeFirstOrThrow();
  await s.reviews.decide(review.id, approved, 'sandbox trigger');
  return { ...ids(made), reviewId: review.id };
}

export const PAYMENTS_TRIGGERS: Record<string, PaymentsTrigger> = {
  ...Object.fromEntries(
    PAYOUT_TRIGGER_STEPS.map(([to, says]): [string, PaymentsTrigger] => [
      `payout.${to}`,
      {
        api: 'payments',
        description: `a purchase captured, ${says}`,
        async run(s, siteId) {
          const made = await anOrder(s, siteId, '4111111111111111');
          const owner = { kind: 'site' as const, siteId: Number(siteId) };
          const source = { type: 'transaction', id: String(made.transactionId) };
          return { ...ids(made), payoutId: await payoutOf(s, owner, source, to) };
        },
      },
    ]),
  ),
  'transaction.complete-ok': {
    api: 'payments',
    description: 'a purchase paid and captured (test card 4111 1111 1111 1111)',
    run: async (s, siteId) => ids(await anOrder(s, siteId, '4111111111111111')),
  },
  'transaction.complete-failed': {
    api: 'payments',
    description: 'a purchase declined by the issuer (test card 4000 0000 0000 0002)',
    run: async (s, siteId) => ids(await anOrder(s, siteId, '4000000000000002')),
  },
  'transaction.in-progress': {
    api: 'payments',
    description: 'an authorization approved and not captured (cardTransactionMode auth)',
    run: async (s, siteId) => ids(await anOrder(s, siteId, '4111111111111111', 'auth')),
  },
  'transaction.3d-pending': {
    api: 'payments',
    description: 'a purchase waiting for the buyer’s 3-D Secure challenge (test card 4000 0000 0000 3220)',
    run: async (s, siteId) => ids(await anOrder(s, siteId, '4000000000003220')),
  },
  'transaction.start': {
    api: 'payments',
    description:
      'a purchase whose outcome the acquirer did not answer in time (test card 4000 0000 0000 0119)',
    run: async (s, siteId) => ids(await anOrder(s, siteId, '4000000000000119')),
  },
  'transaction.refund-ok': {
    api: 'payments',
    description: 'a captured purchase refunded in full',
    async run(s, siteId) {
      const made = await anOrder(s, siteId, '4111111111111111');
      const refund = await s.payments.transactions.refund(made.merchant, made.transactionId, {
        reason: 'sandbox trigger',
      });
      return { ...ids(made), refundTransactionId: String(refund.id) };
    },
  },
  'transaction.charge-back': {
    api: 'payments',
    description:
      'a captured purchase charged back by the card network (Visa 13.1, not received): a dispute to answer',
    async run(s, siteId) {
      const made = await anOrder(s, siteId, '4111111111111111');
      const dispute = await s.payments.disputes.raise(made.transactionId, { reasonCode: '13.1' });
      return {
        ...ids(made),
        disputeId: String(dispute.id),
        chargebackTransactionId: String(dispute.chargeback_transaction_id),
      };
    },
  },
  'transaction.void-ok': {
    api: 'payments',
    description: 'an authorization voided before capture',
    async run(s, siteId) {
      const made = await anOrder(s, siteId, '4111111111111111', 'auth');
      await s.payments.transactions.refund(made.merchant, made.transactionId, { reason: 'sandbox trigger' });
      return ids(made);
    },
  },
  'review.approved': {
    api: 'payments',
    description:
      'a purchase held for review by a risk rule (test email risk-review@example.com), approved: captured',
    produces: 'transaction.complete-ok',
    run: (s, siteId) => aReviewDecided(s, siteId, true),
  },
  'review.refused': {
    api: 'payments',
    description:
      'a purchase held for review by a risk rule (test email risk-review@example.com), refused: voided',
    produces: 'transaction.void-ok',
    run: (s, siteId) => aReviewDecided(s, siteId, false),
  },
  'order.canceled': {
    api: 'payments',
    description: 'an order with no payment (its card declined) canceled by the merchant',
    async run(s, siteId) {
      const made = await anOrder(s, siteId, '4000000000000002');
      await s.payments.orders.cancel(made.merchant, made.orderId, { reason: 'sandbox trigger' });
      return ids(made);
    },
  },
};
