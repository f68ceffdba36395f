// A payout's events (docs/payouts.md, Payouts): in the tenant's event log and to its webhook endpoint, in
// its API's own event shape; the payout's id is named at the top (payoutId, payout_id), so the event is
// found by it. Payments sites receive them as IPNs (the JSON carries `type` and `payout`);
// crypto stores as their webhooks (`event_type` PAYOUT.<STATUS>, the payout as `resource`).
import type { Executor } from '../db/database.ts';
import type { Outbox } from '../events/outbox.ts';
import type { PayoutView } from './payout-view.ts';

export async function publishPayoutEvent(
  outbox: Outbox,
  tx: Executor,
  type: string,
  payout: PayoutView,
): Promise<void> {
  if (payout.siteId !== undefined) {
    await outbox.publish(tx, {
      api: 'payments',
      tenantId: String(payout.siteId),
      type,
      body: (eventId, createdAt) => ({
        eventId,
        type,
        payoutId: payout.id,
        siteId: payout.siteId,
        timestamp: Math.floor(createdAt.getTime() / 1000),
        payout,
      }),
    });
    return;
  }
  const eventType = type.toUpperCase();
  await outbox.publish(tx, {
    api: 'crypto',
    tenantId: payout.storeId as string,
    type: eventType,
    body: (eventId) => ({
      event_id: eventId,
      event_type: eventType,
      payout_id: payout.id,
      resource: payout,
      state: payout.status,
    }),
  });
}
