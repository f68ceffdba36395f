// The fee rule and the schedule's days (docs/payouts.md, Pricing and Payouts), as pure functions.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { paysOn } from './payout-run.ts';
import { type FeeSchedule, feeFor, type PayoutSchedule, shareOf } from './terms.ts';

const fees = (percentBps: number, fixed: bigint, brands: FeeSchedule['brands'] = {}): FeeSchedule => ({
  percentBps,
  fixed: { EUR: fixed },
  brands,
  refundFees: false,
});

describe('feeFor', () => {
  it('rounds the percentage half up to the minor unit, then adds the fixed part', () => {
    expect(feeFor(fees(140, 25n), 10_00n, 'EUR')).toBe(14n + 25n);
    // 1.4 % of 10.37 is 14.518 cents: 15; of 10.35, 14.49: 14; 1.5 % of 3.00 is 4.5: 5
    expect(feeFor(fees(140, 0n), 10_37n, 'EUR')).toBe(15n);
    expect(feeFor(fees(140, 0n), 10_35n, 'EUR')).toBe(14n);
    expect(feeFor(fees(150, 0n), 300n, 'EUR')).toBe(5n); // 4.5 cents, half up
    expect(feeFor(fees(140, 25n), 10_00n, 'USD')).toBe(14n); // no fixed fee in USD
  });

  it('uses a card brand’s own rate, and never takes more than the amount', () => {
    const schedule = fees(100, 10n, { amex: { percentBps: 290, fixed: { EUR: 30n } } });
    expect(feeFor(schedule, 100_00n, 'EUR', 'AMEX')).toBe(290n + 30n);
    expect(feeFor(schedule, 100_00n, 'EUR', 'visa')).toBe(100n + 10n);
    expect(feeFor(schedule, 5n, 'EUR')).toBe(5n);
  });

  it('is exact for any amount and rate: between the rounded-down and rounded-up percentage, capped', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 15n }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.bigInt({ min: 0n, max: 10_000n }),
        (amount, bps, fixed) => {
          const fee = feeFor(fees(bps, fixed), amount, 'EUR');
          const exact = amount * BigInt(bps);
          const low = exact / 10_000n + fixed;
          const high = (exact + 9_999n) / 10_000n + fixed;
          expect(fee).toBeLessThanOrEqual(amount);
          if (fee < amount) {
            expect(fee >= low && fee <= high).toBe(true);
            // half up: the remainder decides
            expect(fee - fixed).toBe((exact * 2n + 10_000n) / 20_000n);
          }
        },
      ),
    );
  });

  it('holds back a reserve rounded down', () => {
    expect(shareOf(98_90n, 1_000)).toBe(9_89n);
    expect(shareOf(99n, 1_000)).toBe(9n);
  });
});

describe('paysOn', () => {
  const schedule = (over: Partial<PayoutSchedule>): PayoutSchedule => ({
    interval: 'daily',
    weeklyAnchor: 'monday',
    monthlyAnchor: 1,
    minimum: '0.01',
    delayDays: 2,
    reserveBps: 0,
    reserveDays: 0,
    ...over,
  });
  it('pays daily every day, weekly on its weekday, monthly on its day or the month’s last, manual never', () => {
    const friday = new Date('2026-11-27T10:00:00Z');
    expect(paysOn(schedule({}), friday)).toBe(true);
    expect(paysOn(schedule({ interval: 'weekly', weeklyAnchor: 'friday' }), friday)).toBe(true);
    expect(paysOn(schedule({ interval: 'weekly', weeklyAnchor: 'monday' }), friday)).toBe(false);
    expect(
      paysOn(schedule({ interval: 'weekly', weeklyAnchor: 'sunday' }), new Date('2026-11-29T23:59:59Z')),
    ).toBe(true);
    expect(paysOn(schedule({ interval: 'monthly', monthlyAnchor: 27 }), friday)).toBe(true);
    // The 31st pays on a 30-day month's last day, and February's.
    expect(
      paysOn(schedule({ interval: 'monthly', monthlyAnchor: 31 }), new Date('2026-11-30T08:00:00Z')),
    ).toBe(true);
    expect(
      paysOn(schedule({ interval: 'monthly', monthlyAnchor: 31 }), new Date('2027-02-28T08:00:00Z')),
    ).toBe(true);
    expect(
      paysOn(schedule({ interval: 'monthly', monthlyAnchor: 31 }), new Date('2026-11-29T08:00:00Z')),
    ).toBe(false);
    expect(paysOn(schedule({ interval: 'manual' }), friday)).toBe(false);
  });
});
