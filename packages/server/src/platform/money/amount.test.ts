import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors/domain-error.ts';
import {
  AmountError,
  ClientAmount,
  formatAmount,
  MAX_INTEGER_DIGITS,
  parseAmount,
  toOnChainUnits,
} from './amount.ts';
import { type Asset, findAsset, findNetwork, isFiat, listAssets } from './assets.ts';

const asset = (code: string): Asset => {
  const found = findAsset(code);
  if (!found) throw new Error(`no asset ${code}`);
  return found;
};
const EUR = asset('EUR');
const JPY = asset('JPY');
const KWD = asset('KWD');
const BTC = asset('BTC');
const ETH = asset('ETH');

const problemOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    if (err instanceof AmountError) return err.problem;
    throw err;
  }
  return undefined;
};

describe('asset registry', () => {
  it('knows ISO 4217 exponents, not display digits', () => {
    expect([EUR, JPY, KWD, asset('CLF'), asset('HUF'), asset('ISK')].map((a) => a.exponent)).toEqual([
      2, 0, 3, 4, 2, 0,
    ]);
    expect(isFiat('USD')).toBe(true);
    expect(findAsset('ABC')).toBeUndefined();
    expect(findAsset('eur')).toBeUndefined();
  });

  it('knows crypto assets, their decimals and networks', () => {
    expect([BTC, ETH, asset('USDC'), asset('USDT')].map((a) => a.exponent)).toEqual([8, 18, 6, 6]);
    expect(findNetwork('USDC', 'ETH')?.onChainDecimals).toBe(6);
    expect(findNetwork('USDT', 'BSC')?.onChainDecimals).toBe(18);
    expect(findNetwork('BTC', 'ETH')).toBeUndefined();
    expect(listAssets('crypto').map((a) => a.code)).toEqual(['BTC', 'ETH', 'USDC', 'USDT']);
    expect(listAssets('fiat').length).toBeGreaterThan(150);
  });
});

describe('parseAmount', () => {
  it('parses decimal text exactly into minor units', () => {
    expect(parseAmount('10.90', EUR)).toBe(1090n);
    expect(parseAmount('10.9', EUR)).toBe(1090n);
    expect(parseAmount('0.01', EUR)).toBe(1n);
    expect(parseAmount('1000', JPY)).toBe(1000n);
    expect(parseAmount('1.234', KWD)).toBe(1234n);
    expect(parseAmount('0.00000001', BTC)).toBe(1n);
    expect(parseAmount('1.000000000000000001', ETH)).toBe(1_000_000_000_000_000_001n);
    expect(parseAmount('007.50', EUR)).toBe(750n);
    expect(parseAmount('10.900', EUR)).toBe(1090n);
  });

  it('reads a JSON number through its decimal text, never through float arithmetic', () => {
    expect(parseAmount(0.1, EUR)).toBe(10n);
    expect(parseAmount(19.99, EUR)).toBe(1999n);
    expect(parseAmount(1.15, EUR)).toBe(115n);
  });

  it('refuses too many decimals, negatives, zero, absurd values and non-decimals', () => {
    expect(problemOf(() => parseAmount('10.001', EUR))).toBe('too_many_decimals');
    expect(problemOf(() => parseAmount('1.5', JPY))).toBe('too_many_decimals');
    expect(problemOf(() => parseAmount('-1.00', EUR))).toBe('negative');
    expect(problemOf(() => parseAmount('0', EUR))).toBe('zero');
    expect(parseAmount('0.00', EUR, { allowZero: true })).toBe(0n);
    expect(problemOf(() => parseAmount('1'.repeat(MAX_INTEGER_DIGITS + 1), EUR))).toBe('too_large');
    for (const text of ['', ' ', '1e3', '1,00', '.5', '5.', '+1', '0x10', 'NaN', '1 000', '١٢']) {
      expect(
        problemOf(() => parseAmount(text, EUR)),
        text,
      ).toBe('not_a_decimal');
    }
    expect(problemOf(() => parseAmount(1e21, EUR))).toBe('not_a_decimal');
    expect(problemOf(() => parseAmount(Number.NaN, EUR))).toBe('not_a_decimal');
    expect(problemOf(() => parseAmount(1e-7, BTC))).toBe('not_a_decimal');
  });
});

describe('formatAmount', () => {
  it('renders fiat with exactly its exponent digits, crypto in its precision without trailing zeros', () => {
    expect(formatAmount(1090n, EUR)).toBe('10.90');
    expect(formatAmount(5n, EUR)).toBe('0.05');
    expect(formatAmount(1000n, JPY)).toBe('1000');
    expect(formatAmount(-150n, EUR)).toBe('-1.50');
    expect(formatAmount(1n, ETH)).toBe('0.000000000000000001');
    expect(formatAmount(5_000_000_000_000_000n, ETH)).toBe('0.005');
    expect(formatAmount(2n * 10n ** 18n, ETH)).toBe('2');
    expect(formatAmount(0n, ETH)).toBe('0');
  });

  it('converts to on-chain units of the network', () => {
    expect(toOnChainUnits(1_500_000n, asset('USDT'), findNetwork('USDT', 'BSC') as never)).toBe(
      1_500_000_000_000_000_000n,
    );
    expect(toOnChainUnits(1_500_000n, asset('USDT'), findNetwork('USDT', 'TRON') as never)).toBe(1_500_000n);
  });
});

describe('properties', () => {
  const assets = fc.constantFrom(EUR, JPY, KWD, BTC, ETH, asset('CLF'), asset('USDC'));
  const maxMinor = (a: Asset) => 10n ** BigInt(MAX_INTEGER_DIGITS + a.exponent) - 1n;

  it('format then parse is the identity on every representable amount', () => {
    fc.assert(
      fc.property(
        assets.chain((a) => fc.tuple(fc.constant(a), fc.bigInt({ min: 1n, max: maxMinor(a) }))),
        ([a, minor]) => {
          expect(parseAmount(formatAmount(minor, a), a)).toBe(minor);
        },
      ),
    );
  });

  it('parse then format normalises without changing the value', () => {
    fc.assert(
      fc.property(
        assets,
        fc.stringMatching(/^[0-9]{1,15}$/),
        fc.stringMatching(/^[0-9]{0,18}$/),
        (a, integer, fraction) => {
          const text = fraction ? `${integer}.${fraction}` : integer;
          let minor: bigint;
          try {
            minor = parseAmount(text, a, { allowZero: true });
          } catch (err) {
            // Only a fraction longer than the exponent may be refused.
            expect((err as AmountError).problem).toBe('too_many_decimals');
            expect(fraction.replace(/0+$/, '').length).toBeGreaterThan(a.exponent);
            return;
          }
          const [wholeOut = '', fractionOut = ''] = formatAmount(minor, a).split('.');
          expect(BigInt(wholeOut)).toBe(BigInt(integer));
          expect(fractionOut.replace(/0+$/, '')).toBe(fraction.replace(/0+$/, ''));
        },
      ),
    );
  });

  it('never accepts a negative amount', () => {
    fc.assert(
      fc.property(assets, fc.bigInt({ min: 1n, max: 10n ** 20n }), (a, minor) => {
        expect(() => parseAmount(`-${formatAmount(minor, a)}`, a)).toThrow(AmountError);
      }),
    );
  });
});

describe('ClientAmount', () => {
  const refusal = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      if (err instanceof DomainError) return { field: err.field, message: err.message };
      throw err;
    }
    return undefined;
  };

  it('reads the text once at the edge and converts it once its asset is known', () => {
    const amount = ClientAmount.read('10.90', 'amount');
    expect(amount.in(EUR)).toBe(1090n);
    expect(amount.in(KWD)).toBe(10_900n);
    expect(ClientAmount.read(19.99).in(EUR)).toBe(1999n);
  });

  it('names its field: a bad text at the edge, what the asset cannot hold when converted', () => {
    expect(refusal(() => ClientAmount.read('1e3', 'trialAmount'))).toEqual({
      field: 'trialAmount',
      message: '"1e3" is not a decimal amount',
    });
    const split = ClientAmount.read('1.5', 'splitSchema.0.amount');
    expect(refusal(() => split.in(JPY))).toEqual({
      field: 'splitSchema.0.amount',
      message: 'JPY amounts have no decimals',
    });
    expect(refusal(() => ClientAmount.read('0.00').in(EUR))?.message).toBe(
      'the amount must be greater than zero',
    );
  });

  it('refuses exactly what parseAmount refuses, in the same words', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 24 }), fc.stringMatching(/^-?\d{1,17}(\.\d{0,20})?$/)),
        fc.constantFrom(EUR, JPY, KWD, BTC, ETH),
        (text, a) => {
          let direct: string | bigint;
          try {
            direct = parseAmount(text, a);
          } catch (err) {
            direct = (err as AmountError).message;
          }
          let edge: string | bigint;
          try {
            edge = ClientAmount.read(text).in(a);
          } catch (err) {
            edge = (err as DomainError).message;
          }
          expect(edge).toEqual(direct);
        },
      ),
    );
  });

  it('takes a stored amount as if a client wrote it (a link keeps its value in a new currency)', () => {
    expect(ClientAmount.fromMinor(1050n, EUR).in(asset('USD'))).toBe(1050n);
    expect(refusal(() => ClientAmount.fromMinor(1050n, EUR).in(JPY))?.message).toBe(
      'JPY amounts have no decimals',
    );
  });
});
