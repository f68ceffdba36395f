// A crypto payment's sender screened against OFAC's digital-currency addresses (docs/compliance.md,
// Monitoring: crypto from a listed address). The chain has already moved the money and nothing sends it
// back, so the order is credited as any other; what a sanctioned person's money must not do is leave. In
// the transaction that records the deposit, the store's case gets an alert with the list entries as
// evidence and holds the store at once (its payouts are held as they are made), as a sanctions match
// does: an asset freeze does not wait for a person. A person clears the case (the address was someone
// else's, the list changed) or confirms it; the store is never told why its payouts wait.
import type { Compliance } from '../../platform/compliance/compliance.ts';
import { entrySummary } from '../../platform/compliance/screening-index.ts';
import type { Tx } from '../../platform/db/database.ts';
import type { ChainTransfer } from '../../rails/chain/port.ts';

export async function screenPayer(
  compliance: Pick<Compliance, 'sanctions' | 'cases'>,
  tx: Tx,
  order: { id: string; storeId: string },
  transfer: ChainTransfer,
): Promise<void> {
  if (!transfer.sender) return;
  const listed = await compliance.sanctions.screenAddress(tx, transfer.sender);
  if (listed.length === 0) return;
  const store = `store:${order.storeId}`;
  await compliance.cases.raiseScenario(tx, {
    subject: store,
    tenant: store,
    scenario: 'payment_from_listed_address',
    key: `payment_from_listed_address:${transfer.network}:${transfer.id}`,
    hold: true,
    evidence: {
      summary: `${transfer.asset} paid to order ${order.id} from ${transfer.sender}, which OFAC lists`,
      address: transfer.sender,
      network: transfer.network,
      transactionHash: transfer.id,
      orderId: order.id,
      entries: listed.map((entry) => entrySummary(entry)),
    },
  });
}
