// A payout as every API shows it (docs/payouts.md, Payouts): amounts as decimal strings, the bank
// account masked, the owner as siteId or storeId.
import type { Selectable } from 'kysely';
import type { PayoutsTable } from '../db/schema.ts';
import { formatAmountIn } from '../money/amount.ts';
import { parseOwnerKey } from './terms.ts';

export type PayoutRow = Selectable<PayoutsTable>;

export interface PayoutView {
  id: string;
  status: PayoutRow['status'];
  amount: string;
  currency: string;
  siteId?: number;
  storeId?: string;
  /** The day the money is expected (in transit) or was booked (paid) */
  arrivalDate: string | null;
  bankAccount: { iban: string; bic: string | null; holderName: string };
  /** Whether its report lists every balance transaction it pays (false: an amount chosen by hand) */
  itemized: boolean;
  failureCode: string | null;
  createdAt: string;
}

export function payoutView(row: PayoutRow): PayoutView {
  const owner = parseOwnerKey(row.owner);
  return {
    id: row.id,
    status: row.status,
    amount: formatAmountIn(BigInt(row.amount), row.currency),
    currency: row.currency,
    ...(owner.kind === 'site' ? { siteId: owner.siteId } : { storeId: owner.storeId }),
    arrivalDate: row.arrival_date,
    bankAccount: { iban: row.iban_masked, bic: row.bic, holderName: row.holder_name },
    itemized: row.itemized,
    failureCode: row.failure_code,
    createdAt: row.created_at.toISOString(),
  };
}
