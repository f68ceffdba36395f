// The IPN (docs/wire-compatibility.md, Payments): on every order and transaction status change, the site's IPN URL gets
// a form POST whose `opensslResult` is this JSON encrypted under the site's IPN secret (the payments
// channel of the delivery engine encrypts and retries). `externalCustomData` travels unchanged, and
// again as `customData` and `customFields`, the names the real service's SDK reads (an object when it
// is a JSON object, else the text as given).
import type { Executor } from '../../platform/db/database.ts';
import type { StatementBatch } from '../../platform/db/statement-batch.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';
import type { OrderRow } from '../orders/order-row.ts';
import { FAILURES, type FailureReason } from '../transactions/decline-codes.ts';
import type { TransactionRow } from '../transactions/transactions-service.ts';

export async function publishIpn(
  outbox: Outbox,
  tx: Executor,
  input: { order: OrderRow; transaction?: TransactionRow },
): Promise<void> {
  const identifier = await identifierOf(tx, input.order.customer_id);
  await outbox.publish(tx, ipnEvent({ ...input, identifier }));
}

/** The IPN added to a batch of its business step's writes (Outbox.stage); the customer's identifier is known. */
export function stageIpn(
  outbox: Outbox,
  batch: StatementBatch,
  db: Executor,
  input: { order: OrderRow; transaction?: TransactionRow; identifier: string },
) {
  return outbox.stage(batch, db, ipnEvent(input));
}

function ipnEvent(input: { order: OrderRow; transaction?: TransactionRow | undefined; identifier: string }) {
  const { order, transaction: t, identifier } = input;
  return {
    api: 'payments' as const,
    tenantId: String(order.site_id),
    type: t ? `transaction.${t.status}` : `order.${order.status}`,
    body: (eventId: string, createdAt: Date) => ({
      eventId,
      ...paymentResult(order, t, identifier, createdAt),
    }),
  };
}

/**
 * What the site is told of an order and (when one changed) its transaction: the IPN's JSON, and the
 * result the hosted checkout hands the browser back to backUrl with.
 */
export function paymentResult(order: OrderRow, t: TransactionRow | undefined, identifier: string, at: Date) {
  return {
    // `status` is the transaction's when a transaction changed, else the order's.
    status: t ? t.status : order.status,
    orderStatus: order.status,
    orderType: order.order_type,
    orderId: order.id,
    externalOrderId: order.external_order_id,
    siteId: order.site_id,
    customerId: order.customer_id,
    identifier,
    externalCustomData: order.external_custom_data,
    customData: customDataOf(order.external_custom_data),
    customFields: customDataOf(order.external_custom_data),
    timestamp: Math.floor(at.getTime() / 1000),
    ...(t
      ? {
          transactionId: t.id,
          transactionStatus: t.status,
          transactionType: t.type,
          transactionMethod: t.method,
          // A captured deposit reports what was captured (a partial capture is less than authorized).
          amount: Number(
            formatAmountIn(
              t.type === 'deposit' && BigInt(t.captured_amount) > 0n
                ? BigInt(t.captured_amount)
                : BigInt(t.amount),
              t.currency,
            ),
          ),
          currency: t.currency,
          cardId: t.card_id,
          ...(t.parent_id ? { parentTransactionId: t.parent_id } : {}),
          ...(t.decline_reason
            ? {
                errors: [
                  {
                    code: FAILURES[t.decline_reason as FailureReason]?.code ?? 810,
                    message: t.error_message ?? 'declined',
                  },
                ],
              }
            : {}),
        }
      : {
          amount: Number(formatAmountIn(BigInt(order.amount), order.currency)),
          currency: order.currency,
          cardId: order.card_id,
        }),
  };
}

export async function identifierOf(tx: Executor, customerId: number): Promise<string> {
  const customer = await tx
    .selectFrom('payments_customers')
    .select('identifier')
    .where('id', '=', customerId)
    .executeTakeFirstOrThrow();
  return customer.identifier;
}

function customDataOf(text: string | null): unknown {
  if (text === null) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : text;
  } catch {
    return text;
  }
}
