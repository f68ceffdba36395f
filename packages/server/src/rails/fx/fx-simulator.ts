// The FX rail's simulator: deterministic rates that move with the (sandbox) clock, and operator-pinned
// overrides (POST /sandbox/fx/rates), so a test can predict or fix every price it meets.
import type { Clock } from '../../platform/clock/clock.ts';
import type { Executor } from '../../platform/db/database.ts';
import { invertRate, RATE_SCALE } from '../../platform/money/rates.ts';
import type { FxRates } from './port.ts';

/** Reference prices in US dollars, scaled by 10^6: the middle of each simulated price's swing. */
export const REFERENCE_USD_PRICES: Readonly<Record<string, bigint>> = {
  BTC: 60_000_000_000n,
  ETH: 3_000_000_000n,
  USDC: 1_000_000n,
  USDT: 1_000_000n,
  USD: 1_000_000n,
  EUR: 1_087_000n,
  GBP: 1_266_000n,
  CHF: 1_136_000n,
  RON: 218_500n,
  PLN: 253_000n,
};

/**
 * How far each price swings around its reference (parts per million) and over what period (seconds):
 * a sine of the clock, so the same instant always has the same price. Stablecoins and fiat stand still.
 */
export const PRICE_MOVEMENT: Readonly<Record<string, { amplitudePpm: number; periodSeconds: number }>> = {
  BTC: { amplitudePpm: 20_000, periodSeconds: 6 * 3600 },
  ETH: { amplitudePpm: 30_000, periodSeconds: 4 * 3600 },
};

export class FxSimulator implements FxRates {
  constructor(private readonly clock: Clock) {}

  supports(currency: string): boolean {
    return currency in REFERENCE_USD_PRICES;
  }

  async rate(db: Executor, from: string, to: string): Promise<bigint> {
    if (from === to) return RATE_SCALE;
    const pinned = await db
      .selectFrom('fx_rate_overrides')
      .select(['from_currency', 'rate_e18'])
      .where((eb) =>
        eb.or([
          eb.and([eb('from_currency', '=', from), eb('to_currency', '=', to)]),
          eb.and([eb('from_currency', '=', to), eb('to_currency', '=', from)]),
        ]),
      )
      .execute();
    const direct = pinned.find((r) => r.from_currency === from);
    if (direct) return BigInt(direct.rate_e18);
    const reverse = pinned[0];
    if (reverse) return invertRate(BigInt(reverse.rate_e18));
    return (this.usdPrice(from) * RATE_SCALE) / this.usdPrice(to);
  }

  /** Pins a pair's rate (both directions), or with null lets it float again. */
  async pin(db: Executor, from: string, to: string, rateE18: bigint | null): Promise<void> {
    await db
      .deleteFrom('fx_rate_overrides')
      .where((eb) =>
        eb.or([
          eb.and([eb('from_currency', '=', from), eb('to_currency', '=', to)]),
          eb.and([eb('from_currency', '=', to), eb('to_currency', '=', from)]),
        ]),
      )
      .execute();
    if (rateE18 === null) return;
    await db
      .insertInto('fx_rate_overrides')
      .values({ from_currency: from, to_currency: to, rate_e18: rateE18, updated_at: this.clock.now() })
      .execute();
  }

  private usdPrice(currency: string): bigint {
    const reference = REFERENCE_USD_PRICES[currency];
    if (reference === undefined) throw new Error(`the FX simulator has no price for ${currency}`);
    const movement = PRICE_MOVEMENT[currency];
    if (!movement) return reference;
    const seconds = this.clock.now().getTime() / 1000;
    // The sine is not money: it only picks a whole number of ppm, applied exactly.
    const ppm = Math.round(
      movement.amplitudePpm * Math.sin((2 * Math.PI * seconds) / movement.periodSeconds),
    );
    return (reference * BigInt(1_000_000 + ppm)) / 1_000_000n;
  }
}
