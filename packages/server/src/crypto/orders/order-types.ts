// What crypto orders are made of, as the services and the wire read them: an order, its deposits, its
// payment and the option the buyer picked; and the limits of an order's life.
import type { CryptoLineItem, CryptoOrderCustomer, CryptoOrderStatus } from '../../platform/db/schema.ts';
import type { Quote } from '../quotes/quotes-service.ts';

/** How long a buyer has to pay when the store does not say (BTCPay Server's default is 15 minutes) */
export const DEFAULT_ORDER_TTL_SECONDS = 15 * 60;
export const MIN_ORDER_TTL_SECONDS = 5 * 60;
export const MAX_ORDER_TTL_SECONDS = 7 * 24 * 3600;
export const ORDER_REFERENCE = 'crypto-order';
/** Spec refund rule 4: payments older than this are not refundable */
export const REFUND_AGE_LIMIT_MONTHS = 3;

export interface OrderInput {
  reference: string;
  currency: string;
  total: bigint;
  details: Record<string, string> | null;
  returnUrl: string;
  cancelUrl: string | null;
  callbackUrl: string | null;
  lineItems: CryptoLineItem[];
  customer: CryptoOrderCustomer;
  expiresAt: Date | null;
  exchangeRateId: string | null;
}

export interface Deposit {
  transactionHash: string;
  asset: string;
  network: string;
  amount: bigint;
  rateE18: bigint;
  fiatValue: bigint;
  requoted: boolean;
  late: boolean;
  offramp: boolean;
  /** `reverted`: the block that held it was replaced (a reorg) and no block holds it now */
  status: 'detected' | 'confirmed' | 'reverted';
  /** How many times a block included it (more than one after a reorg) */
  inclusions: number;
  confirmations: number;
  confirmationsRequired: number;
  detectedAt: Date;
  confirmedAt: Date | null;
}

export interface Payment {
  id: string;
  currency: string;
  total: bigint;
  asset: string;
  network: string;
  cryptoAmount: bigint;
  rateE18: bigint;
  offramp: boolean;
  createdAt: Date;
}

export interface PaymentOption {
  asset: string;
  network: string;
  address: string;
  quote: Quote;
  /** What the buyer still has to send, at the quote */
  cryptoDue: bigint;
}

export interface Order {
  id: string;
  storeId: string;
  reference: string;
  status: CryptoOrderStatus;
  currency: string;
  total: bigint;
  details: Record<string, string> | null;
  lineItems: CryptoLineItem[];
  customer: CryptoOrderCustomer;
  returnUrl: string;
  cancelUrl: string | null;
  callbackUrl: string | null;
  paymentLocked: boolean;
  /** Held by a risk rule for a person: not payable until approved (docs/risk.md, crypto.order) */
  inReview: boolean;
  payAsset: string | null;
  payNetwork: string | null;
  depositAddress: string | null;
  quoteId: string | null;
  expiresAt: Date;
  createdAt: Date;
  updatedAt: Date;
  redirectUrl: string;
  /** Confirmed value, detected-but-unconfirmed value, still due, paid beyond the total */
  amounts: { paid: bigint; pending: bigint; due: bigint; over: bigint };
  deposits: Deposit[];
  payment: Payment | null;
}
