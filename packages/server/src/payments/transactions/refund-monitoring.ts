// Refunds over captures (docs/compliance.md, Monitoring): a merchant whose refunds and card credits over
// DAYS exceed what it captured in them, with at least COUNT of them — money sent to cards that did not
// pay it (a refund cannot exceed its own charge, so this is old sales refunded while nothing new is sold,
// or credits to cards the merchant never charged). A sweep judges each whole UTC day once it is over
// (platform/compliance/scenario-runs.ts); a merchant and currency meeting it raise an alert in the
// merchant's case at most once per DAYS.
import { sql } from 'kysely';
import type { AmlSettings } from '../../platform/compliance/aml-scenarios.ts';
import { judgeSlices, type ScenarioSweepDeps, wholeDays } from '../../platform/compliance/scenario-runs.ts';
import { formatAmount } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';

const DAY_MS = 86_400_000;

export function refundsOverCapturesSweep(
  deps: ScenarioSweepDeps<NonNullable<AmlSettings['refundsOverCaptures']>>,
): () => Promise<number> {
  return async () => {
    const settings = deps.settings;
    if (!settings) return 0;
    const slices = wholeDays(deps.clock.now());
    return judgeSlices(deps.db, 'refunds_over_captures', slices, async (tx, _from, to) => {
      const since = new Date(to.getTime() - settings.days * DAY_MS);
      const { rows } = await sql<{
        merchant_id: number;
        currency: string;
        captured: string | null;
        refunded: string;
        refunds: string;
      }>`
        SELECT merchant_id, currency,
          sum(captured_amount) FILTER (WHERE type = 'deposit') AS captured,
          sum(amount) FILTER (WHERE type IN ('refund', 'credit')) AS refunded,
          count(*) FILTER (WHERE type IN ('refund', 'credit')) AS refunds
        FROM payments_transactions
        WHERE created_at >= ${since} AND created_at < ${to}
          AND (type = 'deposit' OR (type IN ('refund', 'credit') AND status IN ('refund-ok', 'complete-ok')))
        GROUP BY merchant_id, currency
        HAVING count(*) FILTER (WHERE type IN ('refund', 'credit')) >= ${settings.count}
          AND sum(amount) FILTER (WHERE type IN ('refund', 'credit'))
            > coalesce(sum(captured_amount) FILTER (WHERE type = 'deposit'), 0)`.execute(tx);
      let raised = 0;
      // At most once per period of DAYS, whichever day of it the pattern is first seen
      const period = Math.floor(to.getTime() / DAY_MS / settings.days);
      for (const r of rows) {
        const asset = findAsset(r.currency);
        if (!asset) continue;
        const fresh = await deps.cases.raiseScenario(tx, {
          subject: `merchant:${r.merchant_id}`,
          tenant: `merchant:${r.merchant_id}`,
          scenario: 'refunds_over_captures',
          key: `refunds_over_captures:merchant:${r.merchant_id}:${r.currency}:${period}`,
          evidence: {
            summary: `${r.refunds} refunds and credits of ${formatAmount(BigInt(r.refunded), asset)} ${r.currency} over ${settings.days} days, against ${formatAmount(BigInt(r.captured ?? '0'), asset)} ${r.currency} captured`,
            parameters: settings,
            window: { from: since.toISOString(), to: to.toISOString() },
          },
        });
        if (fresh) raised++;
      }
      return raised;
    });
  };
}
