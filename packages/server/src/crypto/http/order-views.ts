// A crypto order and its payment as the wire shows them (JSON:API resources, docs/wire-compatibility.md):
// their schemas for the OpenAPI document, and the presenters that fill them.

import { z } from 'zod';
import { CRYPTO_ORDER_STATUSES as ORDER_STATUSES } from '../../platform/db/schema.ts';
import { formatRate } from '../../platform/money/rates.ts';
import type { Order } from '../orders/orders-service.ts';
import { money, moneyOf } from './jsonapi.ts';

const transferView = z.object({
  transaction_hash: z.string(),
  currency: z.string(),
  blockchain: z.string(),
  amount: z.string(),
  value: money,
  rate: z.string(),
  status: z.enum(['detected', 'confirmed', 'reverted']),
  confirmations: z.number(),
  confirmations_required: z.number(),
  late: z.boolean(),
  requoted: z.boolean(),
  offramp: z.boolean(),
  detected_at: z.string(),
  confirmed_at: z.string().nullable(),
});

const lineItemView = z.record(z.string(), z.union([z.string(), z.number()]));

// The real service's OrderView (as its client libraries read it) also repeats the id and names the line
// items `items`, the store `merchant_uuid` and the amount details `pricing_details`; both spellings are
// answered.
export const orderResource = z.object({
  type: z.literal('orders'),
  id: z.string(),
  attributes: z.object({
    id: z.string(),
    merchant_uuid: z.string(),
    status: z.enum(ORDER_STATUSES),
    reference: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    expires_at: z.string(),
    total_amount: money,
    amount_details: z.record(z.string(), z.string()).nullable(),
    pricing_details: z.record(z.string(), money),
    settlement_amount: money.nullable(),
    amount_paid: money,
    amount_pending: money,
    amount_due: money,
    amount_over: money,
    payment_uuid: z.string().nullable(),
    refundable: z.boolean(),
    payment_currency: z.object({ currency: z.string(), blockchain: z.string() }).nullable(),
    deposit_address: z.string().nullable(),
    transfers: z.array(transferView),
    redirect_url: z.string(),
    return_urls: z.object({
      return_url: z.string(),
      cancel_url: z.string().nullable(),
      callback_url: z.string().nullable(),
    }),
    customer: z.record(z.string(), z.string()),
    line_items: z.array(lineItemView),
    items: z.array(lineItemView),
  }),
  relationships: z
    .object({
      payments: z.object({ data: z.array(z.object({ type: z.literal('payments'), id: z.string() })) }),
    })
    .optional(),
});

export const paymentResource = z.object({
  type: z.literal('payments'),
  id: z.string(),
  attributes: z.object({
    total_amount: money,
    crypto_amount: z.object({ currency: z.string(), blockchain: z.string(), value: z.string() }),
    rate: z.string(),
    offramp: z.boolean(),
    created_at: z.string(),
  }),
});

export function presentOrder(order: Order, refundable: boolean) {
  const m = (minor: bigint) => moneyOf(minor, order.currency);
  return {
    type: 'orders' as const,
    id: order.id,
    attributes: {
      id: order.id,
      merchant_uuid: order.storeId,
      status: order.status,
      reference: order.reference,
      created_at: order.createdAt.toISOString(),
      updated_at: order.updatedAt.toISOString(),
      expires_at: order.expiresAt.toISOString(),
      total_amount: m(order.total),
      amount_details: order.details,
      pricing_details: Object.fromEntries(
        Object.entries(order.details ?? {}).map(([name, value]) => [
          name,
          { currency: order.currency, value },
        ]),
      ),
      settlement_amount: order.payment ? m(order.payment.total) : null,
      amount_paid: m(order.amounts.paid),
      amount_pending: m(order.amounts.pending),
      amount_due: m(order.amounts.due),
      amount_over: m(order.amounts.over),
      payment_uuid: order.payment?.id ?? null,
      refundable,
      payment_currency:
        order.payAsset && order.payNetwork
          ? { currency: order.payAsset, blockchain: order.payNetwork }
          : null,
      deposit_address: order.depositAddress,
      transfers: order.deposits.map((d) => ({
        transaction_hash: d.transactionHash,
        currency: d.asset,
        blockchain: d.network,
        amount: moneyOf(d.amount, d.asset).value,
        value: m(d.fiatValue),
        rate: formatRate(d.rateE18),
        status: d.status,
        confirmations: d.confirmations,
        confirmations_required: d.confirmationsRequired,
        late: d.late,
        requoted: d.requoted,
        offramp: d.offramp,
        detected_at: d.detectedAt.toISOString(),
        confirmed_at: d.confirmedAt?.toISOString() ?? null,
      })),
      redirect_url: order.redirectUrl,
      return_urls: {
        return_url: order.returnUrl,
        cancel_url: order.cancelUrl,
        callback_url: order.callbackUrl,
      },
      customer: { ...order.customer },
      line_items: order.lineItems.map((item) => ({ ...item })),
      items: order.lineItems.map((item) => ({ ...item })),
    },
  };
}

export function presentPayment(order: Order) {
  const p = order.payment;
  if (!p) return [];
  return [
    {
      type: 'payments' as const,
      id: p.id,
      attributes: {
        total_amount: moneyOf(p.total, p.currency),
        crypto_amount: {
          currency: p.asset,
          blockchain: p.network,
          value: moneyOf(p.cryptoAmount, p.asset).value,
        },
        rate: formatRate(p.rateE18),
        offramp: p.offramp,
        created_at: p.createdAt.toISOString(),
      },
    },
  ];
}
