// What reads answer for orders and transactions (the spec does not show these records: the service's
// names, docs/wire-compatibility.md statuses). Amounts are JSON numbers written from exact decimals (bounded to 12 digits).
import { z } from 'zod';
import { formatAmountIn } from '../../platform/money/amount.ts';
import type { OrderRow } from '../orders/orders-service.ts';
import type { TransactionRow } from '../transactions/transactions-service.ts';

const amountOf = (minor: string | bigint, currency: string) =>
  Number(formatAmountIn(BigInt(minor), currency));
const iso = (d: Date | null) => (d ? d.toISOString().replace('Z', '+00:00') : null);

export const orderView = z.object({
  id: z.number().int(),
  siteId: z.number().int(),
  customerId: z.number().int(),
  orderType: z.string(),
  orderStatus: z.string(),
  amount: z.number(),
  currency: z.string(),
  description: z.string().nullable(),
  externalOrderId: z.string().nullable(),
  externalCustomData: z.string().nullable(),
  cardTransactionMode: z.string(),
  transactionMethod: z.string(),
  cardId: z.number().int().nullable(),
  backUrl: z.string().nullable(),
  intervalType: z.string().nullable(),
  intervalValue: z.number().int().nullable(),
  trialAmount: z.number().nullable(),
  firstBillDate: z.string().nullable(),
  retryPayment: z.string().nullable(),
  nextBillDate: z.string().nullable(),
  nextDueDate: z.string().nullable().describe('nextBillDate, by the name the real service’s SDK reads'),
  invoiceEmail: z.string().nullable(),
  billedPeriods: z.number().int(),
  paymentLinkHash: z.string().nullable(),
  createdAt: z.string(),
  creationTimestamp: z.number().int(),
});

export function presentOrder(o: OrderRow): z.infer<typeof orderView> {
  return {
    id: o.id,
    siteId: o.site_id,
    customerId: o.customer_id,
    orderType: o.order_type,
    orderStatus: o.status,
    amount: amountOf(o.amount, o.currency),
    currency: o.currency,
    description: o.description,
    externalOrderId: o.external_order_id,
    externalCustomData: o.external_custom_data,
    cardTransactionMode: o.card_transaction_mode,
    transactionMethod: o.transaction_method,
    cardId: o.card_id,
    backUrl: o.back_url,
    intervalType: o.interval_type,
    intervalValue: o.interval_value,
    trialAmount: o.trial_amount === null ? null : amountOf(o.trial_amount, o.currency),
    firstBillDate: iso(o.first_bill_date),
    retryPayment: o.retry_payment?.length ? o.retry_payment.join(',') : null,
    nextBillDate: iso(o.next_bill_at),
    nextDueDate: iso(o.next_bill_at),
    invoiceEmail: o.invoice_email,
    billedPeriods: o.bills_done,
    paymentLinkHash: o.payment_link_hash,
    createdAt: iso(o.created_at) ?? '',
    creationTimestamp: Math.floor(o.created_at.getTime() / 1000),
  };
}

export const transactionView = z.object({
  id: z.number().int(),
  orderId: z.number().int(),
  customerId: z.number().int(),
  siteId: z.number().int(),
  cardId: z.number().int().nullable(),
  parentTransactionId: z.number().int().nullable(),
  transactionType: z.string(),
  transactionStatus: z.string(),
  transactionMethod: z.string(),
  cardTransactionMode: z.string(),
  amount: z.number(),
  capturedAmount: z.number(),
  refundedAmount: z.number(),
  currency: z.string(),
  cardBrand: z.string().nullable(),
  cardNumber: z.string().nullable(),
  is3d: z.number().int(),
  errorCode: z.number().int().nullable(),
  errorMessage: z.string().nullable(),
  reason: z.string().nullable(),
  message: z.string().nullable(),
  createdAt: z.string(),
  creationTimestamp: z.number().int(),
});

export function presentTransaction(t: TransactionRow): z.infer<typeof transactionView> {
  return {
    id: t.id,
    orderId: t.order_id,
    customerId: t.customer_id,
    siteId: t.site_id,
    cardId: t.card_id,
    parentTransactionId: t.parent_id,
    transactionType: t.type,
    transactionStatus: t.status,
    transactionMethod: t.method,
    cardTransactionMode: t.mode,
    amount: amountOf(t.amount, t.currency),
    capturedAmount: amountOf(t.captured_amount, t.currency),
    refundedAmount: amountOf(t.refunded_amount, t.currency),
    currency: t.currency,
    cardBrand: t.card_brand,
    cardNumber: t.card_bin && t.card_last4 ? `${t.card_bin}******${t.card_last4}` : null,
    is3d: t.is_3d ? 1 : 0,
    errorCode: t.error_code,
    errorMessage: t.error_message,
    reason: t.reason,
    message: t.message,
    createdAt: iso(t.created_at) ?? '',
    creationTimestamp: Math.floor(t.created_at.getTime() / 1000),
  };
}
