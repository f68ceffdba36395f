// Unusual volume (docs/compliance.md, Monitoring): a merchant's or a store's day (UTC) of succeeded
// payments over FACTOR times its average day of the 90 before — its own baseline — and at least MINIMUM
// major units, once it has 30 days of history. Read from the console's daily rollup (console_daily_figures,
// migration 0035: one row per tenant, day and currency), so a year of payments costs a few rows a tenant;
// a day is judged once the rollup holds it (scenario-runs.ts), and raises at most one alert per tenant,
// currency and day.
import { sql } from 'kysely';
import { formatAmount } from '../money/amount.ts';
import { type Asset, findAsset } from '../money/assets.ts';
import type { AmlSettings } from './aml-scenarios.ts';
import { judgeSlices, type ScenarioSweepDeps, wholeDays } from './scenario-runs.ts';

const DAY_MS = 86_400_000;
/** The days a baseline averages, and the history a subject needs before it is judged */
export const BASELINE_DAYS = 90;
export const HISTORY_DAYS = 30;
/** The rollup's API → the subject a case holds */
const SUBJECT_KIND: Record<string, string> = { payments: 'merchant', crypto: 'store' };

export function unusualVolumeSweep(
  deps: ScenarioSweepDeps<NonNullable<AmlSettings['unusualVolume']>>,
): () => Promise<number> {
  return async () => {
    const settings = deps.settings;
    if (!settings) return 0;
    return judgeSlices(deps.db, 'unusual_volume', wholeDays(deps.clock.now()), async (tx, from) => {
      const day = from.toISOString().slice(0, 10);
      const counted = await sql`SELECT 1 FROM console_daily_figures_days WHERE day = ${day}::date`.execute(
        tx,
      );
      if (counted.rows.length === 0) return 'not_yet';
      const { rows } = await sql<{
        api: string;
        tenant_id: string;
        currency: string;
        volume: string;
        total: string;
        first: string;
      }>`
        SELECT d.api, d.tenant_id, d.currency, d.volume, b.total, b.first::text AS first
        FROM console_daily_figures d
        CROSS JOIN LATERAL (
          SELECT coalesce(sum(p.volume), 0) AS total, min(p.day) AS first FROM console_daily_figures p
          WHERE p.api = d.api AND p.tenant_id = d.tenant_id AND p.currency = d.currency
            AND p.day >= ${day}::date - ${BASELINE_DAYS}::int AND p.day < ${day}::date) b
        WHERE d.day = ${day}::date AND d.api IN ('payments', 'crypto')
          AND b.first <= ${day}::date - ${HISTORY_DAYS}::int`.execute(tx);
      let raised = 0;
      for (const r of rows) {
        const over = overBaseline(day, r.currency, r.volume, r, settings);
        if (!over) continue;
        const { asset, volume, average, days } = over;
        const subject = `${SUBJECT_KIND[r.api]}:${r.tenant_id}`;
        const fresh = await deps.cases.raiseScenario(tx, {
          subject,
          tenant: subject,
          scenario: 'unusual_volume',
          key: `unusual_volume:${subject}:${r.currency}:${day}`,
          evidence: {
            summary: `${formatAmount(volume, asset)} ${r.currency} on ${day}, against an average day of ${formatAmount(average, asset)} over the ${days} before`,
            parameters: settings,
            day,
          },
        });
        if (fresh) raised++;
      }
      return raised;
    });
  };
}

/**
 * A day's volume judged against the subject's own baseline (the rows of the 90 days before: their total
 * and first day): over it when at least MINIMUM and over FACTOR times the average day, counted since the
 * first day within the 90 (a subject of 40 days is judged on its 40). Undefined when not over.
 */
export function overBaseline(
  day: string,
  currency: string,
  volumeText: string,
  baseline: { total: string; first: string },
  settings: NonNullable<AmlSettings['unusualVolume']>,
): { asset: Asset; volume: bigint; average: bigint; days: bigint } | undefined {
  const asset = findAsset(currency);
  if (!asset) return undefined;
  const volume = BigInt(volumeText);
  const days = BigInt(
    Math.min(BASELINE_DAYS, Math.round((Date.parse(day) - Date.parse(baseline.first)) / DAY_MS)),
  );
  const total = BigInt(baseline.total);
  const minimum = BigInt(settings.minimum) * 10n ** BigInt(asset.exponent);
  if (days <= 0n || volume < minimum || volume * days <= total * BigInt(settings.factor)) return undefined;
  return { asset, volume, average: total / days, days };
}
