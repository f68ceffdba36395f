// Exchange rates as exact integers: a rate is "units of `to` per one unit of `from`" scaled by 10^18,
// so conversions between minor units are integer arithmetic with an explicit rounding direction.
import type { Asset } from './assets.ts';

export const RATE_SCALE = 10n ** 18n;

/** "61234.5" → 61234500000000000000000n. Refuses anything but a plain positive decimal. */
export function parseRate(text: string): bigint | undefined {
  const match = /^(\d{1,20})(?:\.(\d{1,18}))?$/.exec(text.trim());
  if (!match) return undefined;
  const [, whole = '0', fraction = ''] = match;
  const scaled = BigInt(whole) * RATE_SCALE + BigInt(fraction.padEnd(18, '0'));
  return scaled > 0n ? scaled : undefined;
}

/** 61234500000000000000000n → "61234.5": shortest exact text. */
export function formatRate(rateE18: bigint): string {
  const whole = rateE18 / RATE_SCALE;
  const fraction = (rateE18 % RATE_SCALE).toString().padStart(18, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole.toString();
}

/** The rate the other way round (to → from), rounded down at the 18th decimal. */
export function invertRate(rateE18: bigint): bigint {
  return (RATE_SCALE * RATE_SCALE) / rateE18;
}

/**
 * Converts minor units of `from` into minor units of `to` at a rate (to per from). `up` rounds in the
 * payer's disfavour (what a buyer must send); `down` in the payee's (what a transfer is worth), so an
 * amount converted up and back down never comes out short.
 */
export function convert(
  amount: bigint,
  from: Asset,
  to: Asset,
  rateE18: bigint,
  rounding: 'up' | 'down',
): bigint {
  return divide(
    amount * rateE18 * 10n ** BigInt(to.exponent),
    10n ** BigInt(from.exponent) * RATE_SCALE,
    rounding,
  );
}

/** convert() the other way at the same rate (to per from): minor units of `to` into minor units of `from`. */
export function convertBack(
  amount: bigint,
  to: Asset,
  from: Asset,
  rateE18: bigint,
  rounding: 'up' | 'down',
): bigint {
  return divide(
    amount * RATE_SCALE * 10n ** BigInt(from.exponent),
    10n ** BigInt(to.exponent) * rateE18,
    rounding,
  );
}

function divide(numerator: bigint, denominator: bigint, rounding: 'up' | 'down'): bigint {
  const quotient = numerator / denominator;
  return rounding === 'up' && quotient * denominator < numerator ? quotient + 1n : quotient;
}
