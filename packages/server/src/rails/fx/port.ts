// The FX rail: the price of one currency in another, now. Quotes built on it are the caller's business.
import type { Executor } from '../../platform/db/database.ts';

export interface FxRates {
  /** Units of `to` per one unit of `from`, scaled by 10^18 (platform/money/rates.ts) */
  rate(db: Executor, from: string, to: string): Promise<bigint>;
  /** Whether this rail can price the currency at all */
  supports(currency: string): boolean;
}
