// A new order's terms, checked as its payment would check them: the site, the currency and amounts, the
// card mode, a recurring order's schedule and retries, split payments and level 3 data.
import type { PaymentsCardMode } from '../../platform/db/schema.ts';
import { validationFailed } from '../../platform/errors/domain-error.ts';
import type { Asset } from '../../platform/money/assets.ts';
import { boundedAmount } from '../order-amounts.ts';
import type { MerchantScope } from '../sites.ts';
import { siteOf } from '../sites.ts';
import { parseDuration } from './durations.ts';
import { fiatAsset, type RecurringTerms } from './order-records.ts';
import type { CreateOrderCommand, OrderTermsCommand } from './order-types.ts';

const MAX_RETRIES = 10;

/**
 * The order's terms, checked as a payment would check them, without its customer or card: what the
 * hosted checkout asks before it shows the card page, so a request the payment would refuse is
 * refused before the buyer types a card.
 */
export function checkOrderTerms(merchant: MerchantScope, input: OrderTermsCommand, now: Date) {
  const siteId = siteOf(merchant, input.siteId);
  const asset = fiatAsset(input.currency);
  const amount = boundedAmount(input.amount, asset);
  const mode = input.cardTransactionMode ?? (input.orderType === 'credit' ? 'credit' : 'authAndCapture');
  if ((mode === 'credit') !== (input.orderType === 'credit')) {
    throw validationFailed(
      'cardTransactionMode',
      'credit orders use cardTransactionMode=credit, and only they do',
    );
  }
  if (input.transactionMethod === 'wallet') {
    throw validationFailed(
      'transactionMethod',
      'Tessera has no stored-value wallet: pay by card (wallet payloads included)',
    );
  }
  const recurring = input.orderType === 'recurring' ? recurringTerms(input, asset, now) : undefined;
  if (recurring && mode !== 'authAndCapture') {
    throw validationFailed('cardTransactionMode', 'recurring orders capture each bill: use authAndCapture');
  }
  const splits = input.splitSchema ? checkSplits(merchant, input.splitSchema, asset, amount) : undefined;
  return { siteId, asset, amount, mode, recurring, splits };
}

function recurringTerms(input: OrderTermsCommand, asset: Asset, now: Date): RecurringTerms {
  if (!input.intervalType)
    throw validationFailed('intervalType', 'intervalType is required for recurring orders');
  if (!input.intervalValue)
    throw validationFailed('intervalValue', 'intervalValue is required for recurring orders');
  if (input.intervalValue > (input.intervalType === 'day' ? 366 : 24)) {
    throw validationFailed('intervalValue', 'intervalValue is at most 366 days or 24 months');
  }
  const trialAmount = input.trialAmount === undefined ? undefined : boundedAmount(input.trialAmount, asset);
  let firstBillDate: Date | undefined;
  if (input.firstBillDate !== undefined) {
    if (trialAmount === undefined) {
      throw validationFailed('trialAmount', 'firstBillDate requires a trialAmount greater than 0');
    }
    firstBillDate = input.firstBillDate;
    if (firstBillDate <= now) throw validationFailed('firstBillDate', 'firstBillDate must be in the future');
  }
  const retries = (input.retryPayment ?? '')
    .split(',')
    .map((d) => d.trim())
    .filter((d) => d !== '');
  if (retries.length > MAX_RETRIES) throw validationFailed('retryPayment', `at most ${MAX_RETRIES} retries`);
  for (const retry of retries) {
    if (!parseDuration(retry)) {
      throw validationFailed(
        'retryPayment',
        `"${retry.slice(0, 20)}" is not an ISO 8601 duration such as P1D`,
      );
    }
  }
  return {
    intervalType: input.intervalType,
    intervalValue: input.intervalValue,
    trialAmount,
    firstBillDate,
    retries,
  };
}

/** Whether an order can be charged at once (createAtOnce): a plain purchase with a card given in the request. */
export function isChargedAtOnce(input: CreateOrderCommand, mode: PaymentsCardMode): boolean {
  return (
    input.orderType === 'purchase' &&
    (mode === 'authAndCapture' || mode === 'auth') &&
    input.instrument.source !== 'stored' &&
    !input.saveCard &&
    input.paymentLinkHash === undefined &&
    input.checkout === undefined &&
    input.checkoutAttempt === undefined &&
    // An invoice is mail written in the capture's transaction: the general path sends it.
    input.invoiceEmail === undefined &&
    !input.cardVerification
  );
}

function checkSplits(
  merchant: MerchantScope,
  schema: NonNullable<OrderTermsCommand['splitSchema']>,
  asset: Asset,
  amount: bigint,
) {
  const field = 'transactionOption.splitPayment.splitSchema';
  if (schema.length === 0) throw validationFailed(field, 'splitSchema needs at least one entry');
  const splits = schema.map((entry, i) => {
    if (!merchant.siteIds.includes(entry.toSite)) {
      throw validationFailed(`${field}.${i}.toSite`, 'toSite is not one of your sites');
    }
    return {
      toSite: entry.toSite,
      amount: entry.amount.in(asset).toString(),
      ...(entry.description ? { description: entry.description } : {}),
    };
  });
  const total = splits.reduce((sum, s) => sum + BigInt(s.amount), 0n);
  if (total !== amount) throw validationFailed(field, 'the split amounts must add up to the order amount');
  return splits;
}
