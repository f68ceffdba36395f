// A tenant a compliance case holds (docs/compliance.md, Holds): its payouts are made `held` while it is
// (payouts-service.ts), each recorded with the case. Nothing is stopped when the hold is placed: a pending
// payout is already on its way to the bank. Clearing the case releases each held payout that no risk
// review still holds; the review decides that one.
import type { HoldKind } from '../compliance/compliance-holds.ts';
import type { PayoutLifecycle } from './payout-lifecycle.ts';

export function payoutHolds(lifecycle: PayoutLifecycle): HoldKind {
  return {
    place: async () => [],
    release: async (tx, object) => {
      if (object.kind !== 'payout') return;
      const review = await tx
        .selectFrom('risk_reviews')
        .select('id')
        .where('decision_point', '=', 'payout')
        .where('object_id', '=', object.id)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (review) return;
      const payout = await tx
        .selectFrom('payouts')
        .select('status')
        .where('id', '=', object.id)
        .executeTakeFirst();
      if (payout?.status === 'held') await lifecycle.step(tx, object.id, 'pending');
    },
  };
}
