// Topups watched for money laundering patterns (docs/compliance.md, Monitoring): as each topup completes,
// in its transaction, the cardholder's recent completed topups are judged by the structuring scenario
// (platform/compliance/aml-scenarios.ts); a pattern met raises an alert in the cardholder's case, once.
import type { Clock } from '../../platform/clock/clock.ts';
import { type StructuringSettings, structuringMet } from '../../platform/compliance/aml-scenarios.ts';
import type { ComplianceCases } from '../../platform/compliance/compliance-cases.ts';
import type { Tx } from '../../platform/db/database.ts';
import { formatAmount } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';

export class TopupMonitoring {
  constructor(
    private readonly deps: {
      clock: Clock;
      cases: Pick<ComplianceCases, 'raiseScenario'>;
      structuring: StructuringSettings | undefined;
    },
  ) {}

  /** A topup completed: the cardholder's topups of the window judged, in its transaction */
  async completed(
    tx: Tx,
    topup: { customer_id: string; partner_id: string; currency: string },
  ): Promise<void> {
    const settings = this.deps.structuring;
    const asset = findAsset(topup.currency);
    if (!settings || !asset) return;
    const now = this.deps.clock.now();
    const since = new Date(now.getTime() - settings.windowHours * 3_600_000);
    const rows = await tx
      .selectFrom('issuing_topups')
      .select(['id', 'amount', 'completed_at'])
      .where('customer_id', '=', topup.customer_id)
      .where('currency', '=', asset.code)
      .where('status', '=', 'completed')
      .where('completed_at', '>', since)
      // Topups completed at one instant in the order made (seq), so the run's first — its key — is stable
      .orderBy('completed_at')
      .orderBy('seq')
      .execute();
    const met = structuringMet(
      settings,
      asset,
      rows.map((r) => ({ id: r.id, amount: BigInt(r.amount), at: r.completed_at as Date })),
      now,
    );
    if (!met) return;
    await this.deps.cases.raiseScenario(tx, {
      subject: `customer:${topup.customer_id}`,
      tenant: `partner:${topup.partner_id}`,
      scenario: 'structuring',
      // The first topup of the run: more of the same run add nothing; a new run is a new alert
      key: `structuring:customer:${topup.customer_id}:${met[0]?.id}`,
      evidence: {
        summary: `${met.length} topups of ${asset.code} just under ${settings.threshold} within ${settings.windowHours} h`,
        parameters: { ...settings, threshold: settings.threshold.toString() },
        topups: met.map((m) => ({
          id: m.id,
          amount: formatAmount(m.amount, asset),
          completedAt: m.at.toISOString(),
        })),
      },
    });
  }
}
