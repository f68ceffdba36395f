// What the orders' services take and answer: a new order's terms, a charge's result, a list's filter; and
// what they are built from.

import type { Clock } from '../../platform/clock/clock.ts';
import type { BusinessProfiles } from '../../platform/compliance/business-profiles.ts';
import type { Db } from '../../platform/db/database.ts';
import type { PaymentsCardMode, PaymentsOrderStatus, PaymentsOrderType } from '../../platform/db/schema.ts';
import type { Transact } from '../../platform/db/transact.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import type { ClientAmount } from '../../platform/money/amount.ts';
import type { ChallengeRedirect } from '../../rails/card-network/port.ts';
import type { Notifier } from '../../rails/notifier/port.ts';
import type { StoredCardsService } from '../cards/stored-cards-service.ts';
import type { PaymentLinksService } from '../links/payment-links-service.ts';
import type { ChargeRisk } from '../risk/charge-risk.ts';
import type { PaymentTransactionsService, TransactionRow } from '../transactions/transactions-service.ts';
import type { OrderRow } from './order-row.ts';
import type { InstrumentCommand } from './payment-instrument.ts';

/**
 * A new order's terms as the edge read them (the API's body, a hosted checkout's signed request, a
 * payment link): amounts are exact decimals for the order's currency, level3Data is checked JSON text.
 */
export interface OrderTermsCommand {
  amount: ClientAmount;
  currency: string;
  orderType: PaymentsOrderType;
  siteId?: number | undefined;
  description?: string | undefined;
  externalOrderId?: string | undefined;
  intervalType?: 'day' | 'month' | undefined;
  intervalValue?: number | undefined;
  retryPayment?: string | undefined;
  trialAmount?: ClientAmount | undefined;
  firstBillDate?: Date | undefined;
  backUrl?: string | undefined;
  transactionMethod?: 'card' | 'wallet' | undefined;
  cardTransactionMode?: PaymentsCardMode | undefined;
  saveCard?: boolean | undefined;
  invoiceEmail?: string | undefined;
  ip?: string | undefined;
  externalCustomData?: string | undefined;
  /** JSON text, checked at the edge; stored as sent */
  level3Data?: string | undefined;
  isSoftDecline?: boolean | undefined;
  splitSchema?: { toSite: number; amount: ClientAmount; description?: string | undefined }[] | undefined;
  /** Set by the hosted checkout: the payment link the order came from */
  paymentLinkHash?: string | undefined;
  /** Set by the hosted checkout form (or its embedded form) the order came from */
  checkout?: 'hosted' | 'embedded' | undefined;
  /** A card-save checkout: the authorization only proves the card and is voided once approved */
  cardVerification?: boolean | undefined;
  /** The hosted checkout page's one-time attempt id (unique per site) */
  checkoutAttempt?: string | undefined;
}

/** POST /order: the terms, the customer and what pays. */
export interface CreateOrderCommand extends OrderTermsCommand {
  customerId: number;
  instrument: InstrumentCommand;
}

export interface ChargeResult {
  order: OrderRow;
  transaction: TransactionRow;
  cardId: number | null;
  redirect?: ChallengeRedirect;
}

export interface OrderFilter {
  externalOrderId?: string;
  customerId?: number;
  orderType?: PaymentsOrderType;
  orderStatus?: PaymentsOrderStatus;
  createdAtFrom?: Date;
  createdAtTo?: Date;
}

export interface OrdersDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  outbox: Outbox;
  cards: StoredCardsService;
  transactions: PaymentTransactionsService;
  links: PaymentLinksService;
  /** Where the invoice of an order with an invoiceEmail goes */
  notifier: Notifier;
  /** The payments.charge decision point (its signal is staged with a one-statement order) */
  risk: ChargeRisk;
  /** Common orders are written in one statement (createAtOnce); false runs every order the general way */
  oneStatementWrites: boolean;
  /** TESSERA_ONBOARDING_REQUIRED=charges: no charge before the merchant's profile is approved */
  onboarding: Pick<BusinessProfiles, 'refuseChargeUnlessApproved'>;
}
