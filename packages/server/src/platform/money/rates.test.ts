// Exact rate arithmetic: what a buyer is asked to send (rounded up) is always worth at least the amount
// due when valued back (rounded down), for any rate and any pair of exponents.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findAsset } from './assets.ts';
import { convert, convertBack, formatRate, invertRate, parseRate, RATE_SCALE } from './rates.ts';

const asset = (code: string) => {
  const a = findAsset(code);
  if (!a) throw new Error(code);
  return a;
};

describe('rates', () => {
  it('parse and format exactly', () => {
    expect(parseRate('61234.5')).toBe(61_234n * RATE_SCALE + RATE_SCALE / 2n);
    expect(formatRate(parseRate('0.000000000000000001') ?? 0n)).toBe('0.000000000000000001');
    expect(formatRate(3n * RATE_SCALE)).toBe('3');
    for (const bad of ['0', '-1', '1e5', 'abc', '1.0000000000000000001'])
      expect(parseRate(bad)).toBeUndefined();
    expect(invertRate(4n * RATE_SCALE)).toBe(RATE_SCALE / 4n);
  });

  it('a crypto amount due, converted up, is worth at least the fiat due converted back down', () => {
    const pairs = [
      ['EUR', 'BTC'],
      ['EUR', 'ETH'],
      ['USD', 'USDC'],
      ['GBP', 'USDT'],
    ] as const;
    fc.assert(
      fc.property(
        fc.constantFrom(...pairs),
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.bigInt({ min: 10n ** 12n, max: 10n ** 24n }),
        ([fiatCode, cryptoCode], due, rate) => {
          const fiat = asset(fiatCode);
          const crypto = asset(cryptoCode);
          const send = convertBack(due, fiat, crypto, rate, 'up');
          expect(convert(send, crypto, fiat, rate, 'down')).toBeGreaterThanOrEqual(due);
        },
      ),
    );
  });
});
