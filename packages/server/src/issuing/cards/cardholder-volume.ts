// Unusual volume, for a cardholder (docs/compliance.md, Monitoring): a cardholder's day (UTC) of approved
// card payments in one currency over FACTOR times their average day of the 90 before — their own baseline —
// and at least MINIMUM major units, once they have 30 days of history (the tenants' side of the scenario
// is platform/compliance/unusual-volume.ts, with the same TESSERA_AML_UNUSUAL_VOLUME). Each whole day is
// summed once into issuing_cardholder_daily_spend (migration 0072: a row per cardholder, currency and day
// with payments) from the day's transactions by their creation index, and judged in the same transaction
// against the rows of the 90 days before — so a year of history is at most 90 small rows a cardholder,
// and nothing is written on an authorization's path. An alert holds nothing until the case is confirmed.
import { sql } from 'kysely';
import type { AmlSettings } from '../../platform/compliance/aml-scenarios.ts';
import { judgeSlices, type ScenarioSweepDeps, wholeDays } from '../../platform/compliance/scenario-runs.ts';
import { BASELINE_DAYS, HISTORY_DAYS, overBaseline } from '../../platform/compliance/unusual-volume.ts';
import { formatAmount } from '../../platform/money/amount.ts';

/** Days of rollup kept: the baseline's 90 and a margin */
const KEPT_DAYS = 120;

export function cardholderVolumeSweep(
  deps: ScenarioSweepDeps<NonNullable<AmlSettings['unusualVolume']>>,
): () => Promise<number> {
  return async () => {
    const settings = deps.settings;
    if (!settings) return 0;
    const days = wholeDays(deps.clock.now());
    return judgeSlices(deps.db, 'unusual_volume:cardholders', days, async (tx, from, to) => {
      const day = from.toISOString().slice(0, 10);
      await sql`
        INSERT INTO issuing_cardholder_daily_spend (customer_id, currency, day, partner_id, spent, payments)
        SELECT customer_id, currency, ${day}::date, min(partner_id), sum(coalesce(settled_amount, amount)), count(*)
        FROM issuing_transactions
        WHERE created_at >= ${from} AND created_at < ${to}
          AND type = 'card_payment' AND status IN ('authorized', 'settled')
        GROUP BY customer_id, currency
        ON CONFLICT (customer_id, currency, day) DO UPDATE
          SET spent = excluded.spent, payments = excluded.payments`.execute(tx);
      await sql`DELETE FROM issuing_cardholder_daily_spend WHERE day < ${day}::date - ${KEPT_DAYS}::int`.execute(
        tx,
      );
      const { rows } = await sql<{
        customer_id: string;
        partner_id: string;
        currency: string;
        spent: string;
        total: string;
        first: string;
      }>`
        SELECT d.customer_id, d.partner_id, d.currency, d.spent, b.total, b.first::text AS first
        FROM issuing_cardholder_daily_spend d
        CROSS JOIN LATERAL (
          SELECT coalesce(sum(p.spent), 0) AS total, min(p.day) AS first FROM issuing_cardholder_daily_spend p
          WHERE p.customer_id = d.customer_id AND p.currency = d.currency
            AND p.day >= ${day}::date - ${BASELINE_DAYS}::int AND p.day < ${day}::date) b
        WHERE d.day = ${day}::date AND b.first <= ${day}::date - ${HISTORY_DAYS}::int
          -- Only the days over FACTOR times the average come back (the minimum is the currency's, judged below)
          AND d.spent * least(${BASELINE_DAYS}::int, ${day}::date - b.first) > b.total * ${settings.factor}`.execute(
        tx,
      );
      let raised = 0;
      for (const r of rows) {
        const over = overBaseline(day, r.currency, r.spent, r, settings);
        if (!over) continue;
        const { asset, volume, average, days: history } = over;
        const fresh = await deps.cases.raiseScenario(tx, {
          subject: `customer:${r.customer_id}`,
          tenant: `partner:${r.partner_id}`,
          scenario: 'unusual_volume',
          key: `unusual_volume:customer:${r.customer_id}:${r.currency}:${day}`,
          evidence: {
            summary: `${formatAmount(volume, asset)} ${r.currency} spent by card on ${day}, against an average day of ${formatAmount(average, asset)} over the ${history} before`,
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
