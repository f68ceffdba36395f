// Rapid movement (docs/compliance.md, Monitoring): a completed topup of which PERCENT or more was spent by
// card within HOURS of its completion — money that only passes through the account. A sweep judges each
// topup once its window has closed, an hour of completions a round (platform/compliance/scenario-runs.ts);
// a topup met raises an alert in the cardholder's case, which holds nothing until it is confirmed.
import { sql } from 'kysely';
import type { AmlSettings } from '../../platform/compliance/aml-scenarios.ts';
import { judgeSlices, type ScenarioSweepDeps } from '../../platform/compliance/scenario-runs.ts';
import { ownedBy } from '../../platform/db/owner-hash.ts';
import { formatAmount } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';

const HOUR_MS = 3_600_000;

export function rapidMovementSweep(
  deps: ScenarioSweepDeps<NonNullable<AmlSettings['rapidMovement']>>,
): () => Promise<number> {
  return async () => {
    const settings = deps.settings;
    if (!settings) return 0;
    const end = new Date(deps.clock.now().getTime() - settings.hours * HOUR_MS);
    const slice = { start: new Date(end.getTime() - 24 * HOUR_MS), end, maxMs: HOUR_MS };
    return judgeSlices(deps.db, 'rapid_movement', slice, async (tx, from, to) => {
      // Each topup of the slice with what its cardholder spent by card in its currency within the window
      const { rows } = await sql<{
        id: string;
        customer_id: string;
        partner_id: string;
        currency: string;
        amount: string;
        completed_at: Date;
        spent: string;
      }>`
        SELECT t.id, t.customer_id, t.partner_id, t.currency, t.amount, t.completed_at,
          (SELECT coalesce(sum(coalesce(x.settled_amount, x.amount)), 0) FROM issuing_transactions x
            WHERE ${ownedBy('x.customer_id', sql.ref('t.customer_id'))} AND x.currency = t.currency AND x.type = 'card_payment'
              AND x.status IN ('authorized', 'settled') AND x.created_at >= t.completed_at
              AND x.created_at < t.completed_at + make_interval(hours => ${settings.hours})) AS spent
        FROM issuing_topups t
        WHERE t.status = 'completed' AND t.completed_at > ${from} AND t.completed_at <= ${to}`.execute(tx);
      let raised = 0;
      for (const t of rows) {
        const amount = BigInt(t.amount);
        const spent = BigInt(t.spent);
        const asset = findAsset(t.currency);
        if (!asset || amount <= 0n || spent * 100n < amount * BigInt(settings.percent)) continue;
        const fresh = await deps.cases.raiseScenario(tx, {
          subject: `customer:${t.customer_id}`,
          tenant: `partner:${t.partner_id}`,
          scenario: 'rapid_movement',
          key: `rapid_movement:topup:${t.id}`,
          evidence: {
            summary: `${formatAmount(spent, asset)} of a ${formatAmount(amount, asset)} ${asset.code} topup spent by card within ${settings.hours} h`,
            parameters: settings,
            topup: {
              id: t.id,
              amount: formatAmount(amount, asset),
              completedAt: t.completed_at.toISOString(),
            },
            spent: formatAmount(spent, asset),
          },
        });
        if (fresh) raised++;
      }
      return raised;
    });
  };
}
