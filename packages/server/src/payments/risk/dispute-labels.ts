// The labels of a payments.charge backtest (docs/risk.md, Backtests): the merchant's disputes since the
// period's start, by transaction, fraud or not by the card scheme's reason code.
import type { Db } from '../../platform/db/database.ts';
import type { DisputeLabels } from '../../platform/risk/backtest.ts';
import { REASON_CODES } from '../disputes/dispute.ts';

/** The card schemes' reason codes of fraud disputes */
export const FRAUD_CODES = new Set(
  Object.values(REASON_CODES).flatMap((codes) =>
    Object.entries(codes).flatMap(([code, reason]) => (reason.kind === 'fraud' ? [code] : [])),
  ),
);

export const paymentsDisputeLabels: DisputeLabels = async (db: Db, tenant, since) => {
  const merchantId = Number(tenant.split(':')[1]);
  const rows = await db
    .selectFrom('payments_disputes')
    .select(['transaction_id', 'reason_code'])
    .where('merchant_id', '=', merchantId)
    .where('created_at', '>=', since)
    .execute();
  return new Map(
    rows.map((r) => [String(r.transaction_id), FRAUD_CODES.has(r.reason_code) ? 'fraud' : 'other']),
  );
};
