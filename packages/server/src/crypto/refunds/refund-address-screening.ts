// A refund's address screened against OFAC's digital-currency addresses (docs/compliance.md, Monitoring):
// an address OFAC lists as a sanctioned person's receives nothing. The acceptance is refused (the refund
// stays proposed, for another address) and the attempt is an alert for the compliance officer, committed
// before the refusal is answered. The alert's subject is the address: a confirmed case holds no store.
import type { Compliance } from '../../platform/compliance/compliance.ts';
import { entrySummary } from '../../platform/compliance/screening-index.ts';
import type { Db, Tx } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';

export async function refuseListedAddress(
  deps: { db: Db; transact: Transact; compliance: Pick<Compliance, 'sanctions' | 'cases'> },
  address: string,
  refundOf: (tx: Tx) => Promise<{ id: string; storeId: string; asset: string; network: string }>,
): Promise<void> {
  const { sanctions, cases } = deps.compliance;
  const listed = await sanctions.screenAddress(deps.db, address);
  if (listed.length === 0) return;
  await deps.transact(async (tx) => {
    const refund = await refundOf(tx);
    await cases.raiseScenario(tx, {
      subject: `crypto_address:${address}`,
      tenant: `store:${refund.storeId}`,
      scenario: 'refund_to_listed_address',
      key: `refund_to_listed_address:${refund.id}:${address}`,
      evidence: {
        summary: `a refund in ${refund.asset} asked to be paid to ${address}, which OFAC lists`,
        address,
        network: refund.network,
        refundId: refund.id,
        entries: listed.map((entry) => entrySummary(entry)),
      },
    });
  });
  throw new DomainError('forbidden', 'this address cannot receive a refund; give another one', {
    field: 'address',
    details: { reason: 'address_refused' },
  });
}
