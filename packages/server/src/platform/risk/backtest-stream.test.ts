import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Earliest, inTimeOrder, type Judged } from './backtest-stream.ts';

const signal = (atUs: number, id: bigint): Judged => ({
  id: id.toString(),
  objectId: `o${id}`,
  atUs,
  amount: '100',
  currency: 'EUR',
  verdict: true,
});

describe('a backtest’s sample from signals streamed in no order', () => {
  it('keeps the earliest, by time and then id, whatever the order they come in', () => {
    fc.assert(
      fc.property(
        // Few instants, so that many signals share one; ids of different lengths (9 before 10)
        fc.uniqueArray(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.bigInt({ min: 1n, max: 120n })), {
          selector: ([, id]) => id,
          maxLength: 60,
        }),
        fc.integer({ min: 1, max: 8 }),
        (drawn, size) => {
          const signals = drawn.map(([at, id]) => signal(1_700_000_000_000_000 + at, id));
          const sample = new Earliest(size);
          for (const s of signals) sample.offer(s);
          const expected = [...signals]
            .sort((a, b) => a.atUs - b.atUs || Number(BigInt(a.id) - BigInt(b.id)))
            .slice(0, size);
          expect(sample.signals.map((s) => s.id)).toEqual(expected.map((s) => s.id));
        },
      ),
    );
    expect(inTimeOrder(signal(1, 9n), signal(1, 10n))).toBeLessThan(0);
  });
});
