// An order's row: read, locked for its owner, changed; a new row as both creation paths write it; the
// status its own payment gives it; when its next bill falls; and a decline as the error the caller sees.
import type { CompiledQuery } from 'kysely';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Tx } from '../../platform/db/database.ts';
import { preparedByText, preparedStatement } from '../../platform/db/prepared.ts';
import type {
  PaymentsCardMode,
  PaymentsOrderStatus,
  PaymentsTransactionStatus,
} from '../../platform/db/schema.ts';
import { rowInsert } from '../../platform/db/statement-batch.ts';
import { DomainError, notFound, validationFailed } from '../../platform/errors/domain-error.ts';
import { type Asset, findAsset } from '../../platform/money/assets.ts';
import type { VelocityFeature } from '../../platform/risk/decision-points.ts';
import { type Velocity, type VelocityProbe, velocityColumns } from '../../platform/risk/velocity.ts';
import type { MerchantScope } from '../sites.ts';
import { FAILURES, type FailureReason } from '../transactions/decline-codes.ts';
import type { OrderRow } from './order-row.ts';
import type { ChargeResult, CreateOrderCommand } from './order-types.ts';
import { billTime } from './schedule.ts';

export class OrderRecords {
  constructor(private readonly clock: Clock) {}

  async orderRow(tx: Tx, id: number): Promise<OrderRow> {
    return (await tx
      .selectFrom('payments_orders')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow()) as OrderRow;
  }

  async lockOwned(tx: Tx, merchant: MerchantScope, id: number): Promise<OrderRow> {
    const order = await tx
      .selectFrom('payments_orders')
      .selectAll()
      .where('id', '=', id)
      .where('merchant_id', '=', merchant.merchantId)
      .where('site_id', 'in', merchant.siteIds)
      .forUpdate()
      .executeTakeFirst();
    if (!order) throw notFound('order');
    return order as OrderRow;
  }

  async setOrder(tx: Tx, id: number, patch: Partial<OrderRow>): Promise<OrderRow> {
    return tx
      .updateTable('payments_orders')
      .set({ ...patch, updated_at: this.clock.now() } as never)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }
}

/** The status an order takes after its own payment's transaction took `status` (undefined: unchanged). */
export function orderStatusAfter(
  order: OrderRow,
  status: PaymentsTransactionStatus,
): PaymentsOrderStatus | undefined {
  switch (status) {
    case 'complete-ok':
      // A recurring order is billed on; a managed one waits for the merchant's rebills.
      return order.order_type === 'recurring' || order.order_type === 'managed'
        ? 'in-progress'
        : 'complete-ok';
    case 'in-progress':
    case '3d-pending':
    case 'start':
      return 'in-progress';
    case 'complete-failed':
      return 'complete-failed';
    case 'void-ok':
      // A card verification ends with its authorization voided: that is its success.
      return order.card_verification ? 'complete-ok' : 'complete-failed';
    default:
      return undefined;
  }
}

export type RecurringTerms = {
  intervalType: CreateOrderCommand['intervalType'];
  intervalValue: CreateOrderCommand['intervalValue'];
  trialAmount: bigint | undefined;
  firstBillDate: Date | undefined;
  retries: string[];
};

/** A new order as it is inserted, before its payment decides its status (both paths write this). */
export function newOrderRow(
  merchantId: number,
  siteId: number,
  input: CreateOrderCommand,
  plan: { asset: Asset; amount: bigint; mode: PaymentsCardMode; splits: unknown[] | undefined; now: Date },
  recurring?: RecurringTerms,
): Omit<OrderRow, 'id'> {
  return {
    merchant_id: merchantId,
    site_id: siteId,
    customer_id: input.customerId,
    order_type: input.orderType,
    status: 'start',
    amount: plan.amount.toString(),
    currency: plan.asset.code,
    description: input.description ?? null,
    external_order_id: input.externalOrderId ?? null,
    external_custom_data: input.externalCustomData ?? null,
    card_transaction_mode: plan.mode,
    transaction_method: 'card',
    card_id: null,
    back_url: input.backUrl ?? null,
    invoice_email: input.invoiceEmail ?? null,
    ip: input.ip ?? null,
    level3_data: input.level3Data ?? null,
    split_schema: plan.splits ? JSON.stringify(plan.splits) : null,
    interval_type: recurring?.intervalType ?? null,
    interval_value: recurring?.intervalValue ?? null,
    trial_amount: recurring?.trialAmount?.toString() ?? null,
    first_bill_date: recurring?.firstBillDate ?? null,
    retry_payment: recurring?.retries ?? null,
    anchor_at: null,
    bills_done: 0,
    retries_done: 0,
    next_bill_at: null,
    payment_link_hash: input.paymentLinkHash ?? null,
    checkout: input.checkout ?? null,
    card_verification: input.cardVerification ?? false,
    checkout_attempt: input.checkoutAttempt ?? null,
    cancel_reason: null,
    created_at: plan.now,
    updated_at: plan.now,
  };
}

/** The order as createAtOnce writes it (the columns not named keep their defaults). */
export const insertOrder = rowInsert<OrderRow, keyof OrderRow>('payments_orders', [
  'id',
  'merchant_id',
  'site_id',
  'customer_id',
  'order_type',
  'status',
  'amount',
  'currency',
  'description',
  'external_order_id',
  'external_custom_data',
  'card_transaction_mode',
  'transaction_method',
  'back_url',
  'invoice_email',
  'ip',
  'level3_data',
  'split_schema',
  'created_at',
  'updated_at',
]);

/**
 * The one read of a one-statement order: its customer (on the order's site, not deleted), the ids of the
 * order and its transaction, and the velocity its merchant's risk rules read (docs/risk.md), if any.
 */
const customerAndIdsText = (velocity: string) => `
  SELECT c.identifier, c.email, c.created_at, nextval('payments_orders_id_seq')::int AS order_id,
    nextval('payments_transactions_id_seq')::int AS transaction_id${velocity}
  FROM payments_customers c
  WHERE c.id = $1 AND c.merchant_id = $2 AND c.site_id = $3 AND c.deleted_at IS NULL`;
const SELECT_CUSTOMER_AND_IDS = customerAndIdsText('');

export interface CustomerAndIds {
  identifier: string;
  email: string | null;
  created_at: Date;
  order_id: number;
  transaction_id: number;
}

export function customerAndIds(
  ids: [customerId: number, merchantId: number, siteId: number],
  velocity?: { probe: VelocityProbe; features: readonly VelocityFeature[] },
): { query: CompiledQuery; velocityOf(row: object): Velocity | undefined } {
  const counted = velocity && velocityColumns(velocity.probe, velocity.features, ids.length + 1);
  if (!counted || counted.sql === '') {
    return {
      query: preparedStatement('payments_order_customer_and_ids', SELECT_CUSTOMER_AND_IDS, ids),
      velocityOf: (row) => counted?.read(row),
    };
  }
  return {
    query: preparedByText('payments_order_customer_and_ids', customerAndIdsText(`, ${counted.sql}`), [
      ...ids,
      ...counted.parameters,
    ]),
    velocityOf: (row) => counted.read(row),
  };
}

/** The k-th scheduled bill: at firstBillDate and every interval after, else one interval after the first payment. */
export function nextBill(order: OrderRow, anchor: Date, billsDone: number): Date {
  const offset = order.first_bill_date ? 0 : 1;
  return billTime(anchor, order.interval_type ?? 'month', order.interval_value ?? 1, billsDone + offset);
}

export function fiatAsset(code: string): Asset {
  const asset = findAsset(code);
  if (asset?.kind !== 'fiat') throw validationFailed('currency', 'currency must be an ISO 4217 code');
  return asset;
}

export function declined(result: ChargeResult): DomainError {
  const t = result.transaction;
  const failure = FAILURES[(t.decline_reason ?? 'generic') as FailureReason] ?? FAILURES.generic;
  return new DomainError('payment_declined', failure.message, {
    details: {
      systemCode: failure.code,
      data: { orderId: result.order.id, transactionId: t.id, transactionStatus: t.status },
    },
  });
}
