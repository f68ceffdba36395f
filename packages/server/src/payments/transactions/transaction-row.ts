// A payments card transaction's record (the spec's transaction, docs/payments.md): its types, how a charge
// starts it, and the lifecycle of its status in one table.

import type { Selectable } from 'kysely';
import type { Tx } from '../../platform/db/database.ts';
import type {
  PaymentsCardMode,
  PaymentsOrderType,
  PaymentsTransactionStatus,
  PaymentsTransactionsTable,
} from '../../platform/db/schema.ts';
import { rowInsert } from '../../platform/db/statement-batch.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { AuthorizationAnswer, AuthorizationRequest } from '../../rails/card-network/port.ts';
import type { Instrument } from '../orders/payment-instrument.ts';
import type { CardAcceptor } from '../sites.ts';

export const NETWORK_OWNER = 'payments';

export type TransactionRow = Selectable<PaymentsTransactionsTable>;
/** A transaction with what the API answers of its order and customer (xMoney's transaction view) */
export type TransactionDetail = TransactionRow & {
  external_order_id: string | null;
  description: string | null;
  back_url: string | null;
  email: string | null;
};

export interface SplitEntry {
  toSite: number;
  amount: bigint;
  description?: string | undefined;
}

/** The customer behind a charge, as risk reads them (docs/risk.md) */
export interface Buyer {
  email: string | null;
  createdAt: Date;
}

export interface ChargeRequest {
  order: {
    id: number;
    merchant_id: number;
    site_id: number;
    customer_id: number;
    currency: string;
    split_schema: string | null;
    /** The buyer's IP as the order gave it, and the order's type: what risk rules read (docs/risk.md) */
    ip: string | null;
    order_type: PaymentsOrderType;
  };
  /** The customer as risk reads them, when the caller has them at hand (else they are read) */
  buyer?: Buyer;
  /** The site as the authorization names it: its name, category code and country */
  acceptor: CardAcceptor;
  type: 'deposit' | 'credit';
  mode: PaymentsCardMode;
  amount: bigint;
  instrument: Instrument;
  cardId: number | null;
  initiator: 'customer' | 'merchant';
  isSoftDeclineRetry: boolean;
  /** 3-D Secure required whatever the issuer would choose (a risk rule's `challenge`) */
  challengeRequested?: boolean;
}

/** A charge the network answered at once (authorizeAtOnce), to be staged with stageCharge. */
export interface ChargeDecided {
  answer: Extract<AuthorizationAnswer, { outcome: 'approved' | 'declined' }>;
  reference: string;
}

export interface TransactionFilter {
  orderId?: number;
  customerId?: number;
  email?: string;
  transactionMethod?: 'card' | 'wallet';
  currency?: string;
  amountFrom?: bigint;
  amountTo?: bigint;
  transactionType?: 'deposit' | 'refund' | 'credit' | 'chargeback' | 'representment';
  transactionStatus?: PaymentsTransactionStatus[];
  createdAtFrom?: Date;
  createdAtTo?: Date;
}

/** A charge's transaction before the network answers (both paths start from it). */
export function startedTransaction(
  r: ChargeRequest,
  networkReference: string,
  now: Date,
): Omit<TransactionRow, 'id' | 'captured_amount' | 'refunded_amount' | 'charged_back_amount' | 'is_3d'> {
  return {
    merchant_id: r.order.merchant_id,
    site_id: r.order.site_id,
    order_id: r.order.id,
    customer_id: r.order.customer_id,
    card_id: r.cardId,
    parent_id: null,
    type: r.type,
    status: 'start',
    method: 'card',
    mode: r.mode,
    initiator: r.initiator,
    amount: r.amount.toString(),
    currency: r.order.currency,
    card_brand: r.instrument.brand,
    card_bin: r.instrument.card.pan.slice(0, 6),
    card_last4: r.instrument.card.pan.slice(-4),
    card_holder_name: r.instrument.holderName,
    card_expiry: `${String(r.instrument.card.expiryMonth).padStart(2, '0')}/${String(r.instrument.card.expiryYear % 100).padStart(2, '0')}`,
    network_reference: networkReference,
    error_code: null,
    error_message: null,
    decline_reason: null,
    reason: null,
    message: null,
    auth_expires_at: null,
    created_at: now,
    updated_at: now,
  };
}

/** A transaction as chargeAtOnce writes it (the columns not named keep their defaults). */
export const insertTransaction = rowInsert<TransactionRow, keyof TransactionRow>('payments_transactions', [
  'id',
  'merchant_id',
  'site_id',
  'order_id',
  'customer_id',
  'card_id',
  'type',
  'status',
  'method',
  'mode',
  'initiator',
  'amount',
  'captured_amount',
  'currency',
  'card_brand',
  'card_bin',
  'card_last4',
  'card_holder_name',
  'card_expiry',
  'is_3d',
  'network_reference',
  'error_code',
  'error_message',
  'decline_reason',
  'auth_expires_at',
  'created_at',
  'updated_at',
]);

export function parseSplits(text: string): SplitEntry[] {
  return (JSON.parse(text) as { toSite: number; amount: string; description?: string }[]).map((s) => ({
    toSite: s.toSite,
    amount: BigInt(s.amount),
    description: s.description,
  }));
}

export function assetOf(currency: string) {
  const asset = findAsset(currency);
  if (!asset) throw new Error(`unknown currency ${currency}`);
  return asset;
}

/**
 * A deposit's status: from each, the statuses a step may lead to (docs/payments.md, Transactions). A
 * refund, a chargeback and a representment are transactions of their own, written in their final status
 * (refund-ok, charge-back, complete-ok); a deposit refunded in full becomes refund-ok.
 */
export const TRANSACTION_STEPS: Record<PaymentsTransactionStatus, readonly PaymentsTransactionStatus[]> = {
  start: ['3d-pending', 'in-progress', 'complete-ok', 'complete-failed'],
  '3d-pending': ['in-progress', 'complete-ok', 'complete-failed'],
  'in-progress': ['complete-ok', 'void-ok'],
  'complete-ok': ['refund-ok'],
  'refund-ok': [],
  'complete-failed': [],
  'void-ok': [],
  'cancel-ok': [],
  'charge-back': [],
};

/** What is left of a captured deposit to refund or charge back: captured, less refunds and chargebacks. */
export function leftOf(
  t: Pick<TransactionRow, 'captured_amount' | 'refunded_amount' | 'charged_back_amount'>,
): bigint {
  return BigInt(t.captured_amount) - BigInt(t.refunded_amount) - BigInt(t.charged_back_amount);
}

/** A transaction that follows a deposit on its order (a refund, a chargeback, a representment), in its final status. */
export function insertChild(
  tx: Tx,
  t: TransactionRow,
  child: {
    type: 'refund' | 'chargeback' | 'representment';
    status: PaymentsTransactionStatus;
    amount: bigint;
    reason: string | null;
    message: string | null;
    at: Date;
  },
): Promise<TransactionRow> {
  return tx
    .insertInto('payments_transactions')
    .values({
      merchant_id: t.merchant_id,
      site_id: t.site_id,
      order_id: t.order_id,
      customer_id: t.customer_id,
      card_id: t.card_id,
      parent_id: t.id,
      type: child.type,
      status: child.status,
      method: t.method,
      mode: t.mode,
      // a refund is the merchant's; a chargeback and its representment come from the cardholder's bank
      initiator: child.type === 'refund' ? 'merchant' : 'customer',
      amount: child.amount,
      currency: t.currency,
      card_brand: t.card_brand,
      card_bin: t.card_bin,
      card_last4: t.card_last4,
      card_holder_name: t.card_holder_name,
      card_expiry: t.card_expiry,
      network_reference: null,
      error_code: null,
      error_message: null,
      decline_reason: null,
      reason: child.reason,
      message: child.message,
      auth_expires_at: null,
      created_at: child.at,
      updated_at: child.at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The card network's authorization of a charge: the card, the amount, and the site as the card acceptor. */
export function authorizationRequest(
  r: ChargeRequest,
  reference: string,
): Omit<AuthorizationRequest, 'returnUrl'> {
  return {
    owner: NETWORK_OWNER,
    reference,
    capture: r.mode === 'authAndCapture',
    card: r.instrument.card,
    amount: r.amount,
    currency: r.order.currency,
    merchant: r.acceptor.name,
    merchantId: `site:${r.order.site_id}`,
    mcc: r.acceptor.mcc,
    merchantCountry: r.acceptor.country,
    kind: r.type === 'credit' ? 'credit' : 'purchase',
    initiator: r.initiator,
    isAuthenticated: r.instrument.isAuthenticated,
    isSoftDeclineRetry: r.isSoftDeclineRetry,
    ...(r.challengeRequested ? { challengeRequested: true } : {}),
  };
}
