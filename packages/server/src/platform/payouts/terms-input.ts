// A fee schedule and a payout schedule as the operator gives them (docs/payouts.md), whether through the
// admin API, the console or `tessera admin`: checked once here, naming the field, and turned into what
// TermsStore keeps.
import { z } from 'zod';
import {
  type FeeSchedule,
  PAYOUT_INTERVALS,
  type PayoutSchedule,
  parseFixedFees,
  WEEKDAYS,
} from './terms.ts';

export const amountText = z.string().regex(/^\d{1,9}(\.\d{1,8})?$/, 'must be an amount like 0.25');
const fixedField = z.record(z.string().regex(/^[A-Za-z]{3}$/, 'must be a currency code'), amountText);
const bpsField = z.number().int().min(0).max(10_000);

export const pricingInput = z.object({
  percentBps: bpsField,
  fixed: fixedField.default({}),
  brands: z
    .partialRecord(
      z.enum(['visa', 'mastercard', 'amex', 'maestro', 'discover']),
      z.object({ percentBps: bpsField, fixed: fixedField.default({}) }),
    )
    .default({}),
  refundFees: z.boolean().default(false),
});

/** A percentage with at most two decimals ("10", "2.5", 7.25), as basis points. */
const percentField = z
  .union([z.number(), z.string()])
  .transform(String)
  .pipe(z.string().regex(/^\d{1,3}(\.\d{1,2})?$/, 'must be a percentage with at most two decimals'))
  .transform((text) => {
    const [whole = '0', fraction = ''] = text.split('.');
    return Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
  })
  .pipe(z.number().max(10_000, 'must be at most 100'));

export const scheduleInput = z.object({
  interval: z.enum(PAYOUT_INTERVALS),
  weeklyAnchor: z.enum(WEEKDAYS).default('monday'),
  monthlyAnchor: z.number().int().min(1).max(31).default(1),
  minimum: amountText.default('0.01'),
  delayDays: z.number().int().min(0).max(60).default(2),
  reservePercent: percentField.default(0),
  reserveDays: z.number().int().min(0).max(365).default(0),
});

/** The checked pricing as a fee schedule; a fixed amount in an unknown currency is refused naming it. */
export function toFeeSchedule(input: z.output<typeof pricingInput>): FeeSchedule {
  return {
    percentBps: input.percentBps,
    fixed: parseFixedFees(input.fixed, 'fixed'),
    brands: Object.fromEntries(
      Object.entries(input.brands).flatMap(([brand, rate]) =>
        rate
          ? [
              [
                brand,
                { percentBps: rate.percentBps, fixed: parseFixedFees(rate.fixed, `brands.${brand}.fixed`) },
              ],
            ]
          : [],
      ),
    ),
    refundFees: input.refundFees,
  };
}

export function toPayoutSchedule(input: z.output<typeof scheduleInput>): PayoutSchedule {
  const { reservePercent, ...rest } = input;
  return { ...rest, reserveBps: reservePercent };
}
