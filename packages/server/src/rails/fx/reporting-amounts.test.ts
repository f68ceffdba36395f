// ReportingAmounts (docs/risk.md, Reporting currency): exact conversion at the rates read at start, 0 for an
// asset the rail cannot price, and a reporting currency it cannot price refused at start.
import { describe, expect, it } from 'vitest';
import type { Executor } from '../../platform/db/database.ts';
import { RATE_SCALE } from '../../platform/money/rates.ts';
import type { FxRates } from './port.ts';
import { ReportingAmounts } from './reporting-amounts.ts';

/** A rail pricing EUR, USD (1 USD = 0.92 EUR) and BTC (50,000 EUR), into EUR only */
function rail(): FxRates {
  return {
    supports: (c) => ['EUR', 'USD', 'BTC'].includes(c),
    async rate(_db, from, to) {
      if (to !== 'EUR') throw new Error('only into EUR');
      return from === 'USD' ? (92n * RATE_SCALE) / 100n : from === 'BTC' ? 50_000n * RATE_SCALE : RATE_SCALE;
    },
  };
}
const logger = { warn: () => undefined };
const db = {} as Executor;

describe('amounts in the reporting currency', () => {
  it('converts at the rates read at start, rounding down; an unpriced asset is 0', async () => {
    const amounts = new ReportingAmounts({ fx: rail(), db, currency: 'EUR', logger });
    await amounts.start();
    amounts.stop();
    expect(amounts.amountIn(10_000n, 'USD')).toBe(9_200n);
    expect(amounts.amountIn(333n, 'USD')).toBe(306n);
    expect(amounts.amountIn(1_234n, 'EUR')).toBe(1_234n);
    // 0.001 BTC (100,000 satoshi) at 50,000 EUR
    expect(amounts.amountIn(100_000n, 'BTC')).toBe(5_000n);
    expect(amounts.amountIn(10_000n, 'RON')).toBe(0n);
    expect(amounts.amountIn(10_000n, 'NOPE')).toBe(0n);
  });

  it('refuses a reporting currency the rail cannot price, naming the setting', () => {
    expect(() => new ReportingAmounts({ fx: rail(), db, currency: 'RON', logger })).toThrow(
      /TESSERA_REPORTING_CURRENCY: the FX rail cannot price RON/,
    );
    expect(() => new ReportingAmounts({ fx: rail(), db, currency: 'XYZ', logger })).toThrow(
      /TESSERA_REPORTING_CURRENCY/,
    );
  });
});
