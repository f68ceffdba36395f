// Amounts in the platform's reporting currency (TESSERA_REPORTING_CURRENCY), for risk rules that compare
// money across currencies (docs/risk.md, Reporting currency): each asset's rate into it is read from the
// FX rail at start and then every minute in the background, so a conversion on a write path is arithmetic,
// never a read. An asset the rail cannot price converts to 0.
import type { Logger } from 'pino';
import type { Executor } from '../../platform/db/database.ts';
import { findAsset, knownAsset, listAssets } from '../../platform/money/assets.ts';
import { convert } from '../../platform/money/rates.ts';
import type { FxRates } from './port.ts';

const REFRESH_MS = 60_000;

export class ReportingAmounts {
  private rates = new Map<string, bigint>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: { fx: FxRates; db: Executor; currency: string; logger: Pick<Logger, 'warn'> },
  ) {
    if (!findAsset(deps.currency) || !deps.fx.supports(deps.currency)) {
      throw new Error(`TESSERA_REPORTING_CURRENCY: the FX rail cannot price ${deps.currency}`);
    }
  }

  get currency(): string {
    return this.deps.currency;
  }

  /** Reads every rate once, then keeps them a minute old at most. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Minor units of `currency` in minor units of the reporting currency, rounded down; 0 when unpriced. */
  amountIn(amount: bigint, currency: string): bigint {
    const rate = this.rates.get(currency);
    const from = findAsset(currency);
    if (rate === undefined || !from) return 0n;
    return convert(amount, from, knownAsset(this.deps.currency), rate, 'down');
  }

  private async refresh(): Promise<void> {
    const { fx, db, currency } = this.deps;
    const next = new Map<string, bigint>();
    for (const asset of listAssets()) {
      if (!fx.supports(asset.code)) continue;
      try {
        next.set(asset.code, await fx.rate(db, asset.code, currency));
      } catch (err) {
        // A rate the rail cannot give now keeps its last value.
        const last = this.rates.get(asset.code);
        if (last !== undefined) next.set(asset.code, last);
        this.deps.logger.warn({ err, asset: asset.code }, 'reporting currency: no rate');
      }
    }
    this.rates = next;
  }
}
