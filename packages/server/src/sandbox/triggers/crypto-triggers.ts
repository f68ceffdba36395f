// Triggers of the crypto API's events, for a store: an order made as the API makes it, paid on the chain
// simulator in the store's first accepted currency, with time passing where confirmations or expiries
// need it; refunds proposed by the store and answered by the buyer as the sandbox routes do.
import type { OrdersService } from '../../crypto/orders/orders-service.ts';
import { assetOf } from '../../crypto/quotes/quotes-service.ts';
import type { RefundsService } from '../../crypto/refunds/refunds-service.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { notFound } from '../../platform/errors/domain-error.ts';
import { parseAmountField } from '../../platform/money/amount.ts';
import type { Store, StoresService } from '../../platform/tenants/stores-service.ts';
import { type ChainSandbox, simulatedAddress } from '../../rails/sandbox.ts';
import { PAYOUT_TRIGGER_STEPS, type PayoutTriggerServices, payoutOf } from './payout-trigger.ts';
import { type Trigger, triggerRef } from './trigger-context.ts';

export interface CryptoTriggerServices extends PayoutTriggerServices {
  transact: Transact;
  stores: StoresService;
  orders: OrdersService;
  refunds: RefundsService;
  chain: ChainSandbox;
}

type CryptoTrigger = Trigger<CryptoTriggerServices>;

/** Confirmations on every simulated network arrive within this (docs/crypto.md, Rails). */
const CONFIRMATION_SECONDS = 300;

async function storeOf(s: CryptoTriggerServices, storeId: string): Promise<Store> {
  try {
    return await s.stores.get(s.db, storeId);
  } catch {
    throw notFound('store');
  }
}

async function anOrder(s: CryptoTriggerServices, store: Store, total = '10.00') {
  return s.orders.create(store, {
    reference: triggerRef('trigger'),
    currency: 'EUR',
    total: parseAmountField(total, assetOf('EUR'), 'total'),
    details: null,
    returnUrl: 'https://sandbox.tessera.invalid/return',
    cancelUrl: null,
    callbackUrl: null,
    lineItems: [],
    customer: { email: 'buyer@sandbox.tessera.invalid', country: 'PT' },
    expiresAt: null,
    exchangeRateId: null,
  });
}

/** The buyer pays on chain: what is due, or this share of it (a partial payment). */
async function pay(s: CryptoTriggerServices, store: Store, orderId: string, share = 1) {
  const pair = store.currencies[0];
  if (!pair) throw notFound('an accepted currency of the store');
  const target = await s.orders.paymentTarget(orderId, { asset: pair.currency, network: pair.network });
  const due = target.cryptoDue > 0n ? target.cryptoDue : 10n ** BigInt(assetOf(pair.currency).exponent);
  const amount = share === 1 ? due : (due * BigInt(Math.round(share * 100))) / 100n;
  const transfer = await s.transact((tx) => s.chain.pay(tx, { address: target.address, amount }));
  return { pair, transfer };
}

async function aPaidOrder(s: CryptoTriggerServices, storeId: string) {
  const store = await storeOf(s, storeId);
  const order = await anOrder(s, store);
  await pay(s, store, order.id);
  await s.clock.advance(CONFIRMATION_SECONDS);
  const paid = await s.orders.get(store, order.id);
  if (!paid.payment) throw new Error('the trigger’s order was not paid');
  return { store, orderId: order.id, paymentId: paid.payment.id };
}

/** A paid order with a refund of 1.00 EUR proposed by the store: the ids of all three. */
async function aProposedRefund(s: CryptoTriggerServices, storeId: string) {
  const { store, orderId, paymentId } = await aPaidOrder(s, storeId);
  const { refund } = await s.refunds.propose(store, paymentId, {
    amount: parseAmountField('1.00', assetOf('EUR'), 'amount'),
    reason: 'sandbox trigger',
  });
  return { orderId, paymentId, refundId: refund.id };
}

/** The buyer accepts the payment's refund with an address of its network. */
async function accept(s: CryptoTriggerServices, paymentId: string) {
  await s.refunds.accept({ paymentId }, simulatedAddress(await s.refunds.paymentNetwork(paymentId)));
}

/** An order paid in full on chain, its transfer seen and not yet confirmed. */
async function aDetectedPayment(s: CryptoTriggerServices, storeId: string) {
  const store = await storeOf(s, storeId);
  const order = await anOrder(s, store);
  const { transfer } = await pay(s, store, order.id);
  return { orderId: order.id, transactionHash: transfer.id };
}

export const CRYPTO_TRIGGERS: Record<string, CryptoTrigger> = {
  ...Object.fromEntries(
    PAYOUT_TRIGGER_STEPS.map(([to, says]): [string, CryptoTrigger] => [
      `PAYOUT.${to.toUpperCase()}`,
      {
        api: 'crypto',
        description: `an order paid and settled in EUR, ${says}`,
        async run(s, storeId) {
          const { orderId, paymentId } = await aPaidOrder(s, storeId);
          const transfer = await s.db
            .selectFrom('crypto_deposits')
            .select('id')
            .where('order_id', '=', orderId)
            .executeTakeFirstOrThrow();
          const source = { type: 'crypto_transfer', id: transfer.id };
          const payoutId = await payoutOf(s, { kind: 'store', storeId }, source, to);
          return { orderId, paymentId, payoutId };
        },
      },
    ]),
  ),
  'ORDER.PAYMENT.DETECTED': {
    api: 'crypto',
    description: 'an order paid on chain, the transfer seen and not yet confirmed',
    async run(s, storeId) {
      const { orderId } = await aDetectedPayment(s, storeId);
      return { orderId };
    },
  },
  'ORDER.PAYMENT.RECEIVED': {
    api: 'crypto',
    description: 'an order paid in full and confirmed (the sandbox clock moves on 5 minutes)',
    async run(s, storeId) {
      const { orderId, paymentId } = await aPaidOrder(s, storeId);
      return { orderId, paymentId };
    },
  },
  'ORDER.PAYMENT.PARTIAL': {
    api: 'crypto',
    description: 'an order paid half, confirmed (the sandbox clock moves on 5 minutes)',
    async run(s, storeId) {
      const store = await storeOf(s, storeId);
      const order = await anOrder(s, store);
      await pay(s, store, order.id, 0.5);
      await s.clock.advance(CONFIRMATION_SECONDS);
      return { orderId: order.id };
    },
  },
  'ORDER.PAYMENT.LATE': {
    api: 'crypto',
    description: 'a paid order that receives another transfer after it ended (the clock moves on 10 minutes)',
    async run(s, storeId) {
      const { store, orderId, paymentId } = await aPaidOrder(s, storeId);
      await pay(s, store, orderId);
      await s.clock.advance(CONFIRMATION_SECONDS);
      return { orderId, paymentId };
    },
  },
  'ORDER.PAYMENT.REVERTED': {
    api: 'crypto',
    description: 'an order paid on chain, then a reorg drops the block holding the unconfirmed transfer',
    async run(s, storeId) {
      const { orderId, transactionHash } = await aDetectedPayment(s, storeId);
      await s.transact((tx) => s.chain.reorg(tx, { transactionHash, reinclude: false }));
      return { orderId };
    },
  },
  'ORDER.PAYMENT.CANCELLED': {
    api: 'crypto',
    description: 'an order the buyer cancels on the payment page before paying',
    async run(s, storeId) {
      const store = await storeOf(s, storeId);
      const order = await anOrder(s, store);
      await s.orders.cancelByBuyer(order.id);
      return { orderId: order.id };
    },
  },
  'ORDER.REFUND.PROPOSED': {
    api: 'crypto',
    description: 'a paid order, then a refund of 1.00 EUR proposed by the store',
    run: aProposedRefund,
  },
  'ORDER.REFUND.REJECTED': {
    api: 'crypto',
    description: 'a proposed refund the buyer rejects',
    async run(s, storeId) {
      const made = await aProposedRefund(s, storeId);
      await s.refunds.reject({ paymentId: made.paymentId });
      return made;
    },
  },
  'ORDER.REFUND.ACCEPTED': {
    api: 'crypto',
    description: 'a proposed refund the buyer accepts with an address of the payment’s network',
    async run(s, storeId) {
      const made = await aProposedRefund(s, storeId);
      await accept(s, made.paymentId);
      return made;
    },
  },
  'ORDER.REFUND.COMPLETED': {
    api: 'crypto',
    description: 'an accepted refund paid out on chain and confirmed (the clock moves on 5 minutes)',
    async run(s, storeId) {
      const made = await aProposedRefund(s, storeId);
      await accept(s, made.paymentId);
      await s.clock.advance(CONFIRMATION_SECONDS);
      return made;
    },
  },
  'ORDER.REFUND.EXPIRED': {
    api: 'crypto',
    description: 'a proposed refund nobody answers for 30 days (the sandbox clock moves on 30 days)',
    async run(s, storeId) {
      const made = await aProposedRefund(s, storeId);
      await s.clock.advance(30 * 24 * 3600 + 60);
      return made;
    },
  },
};
