// What the payout triggers of the payments and crypto APIs share (docs/payouts.md, The bank rail): money
// a trigger just captured or settled for a site or store, taken through the settlement delay on the
// sandbox clock, a payout (the scheduled run's, or one on demand under a manual schedule) and the bank's
// steps to the status asked for. A tenant without a bank account gets the sandbox's sample IBAN.
import type { BankAccounts } from '../../platform/bank-accounts/bank-accounts.ts';
import type { Db } from '../../platform/db/database.ts';
import { runTransaction } from '../../platform/db/transact.ts';
import type { PayoutStatus } from '../../platform/payouts/payout-lifecycle.ts';
import { type Owner, ownerKey } from '../../platform/payouts/terms.ts';
import type { MoneyOutWithBank } from '../../rails/bank/port.ts';
import type { TriggerClock } from './trigger-context.ts';

export interface PayoutTriggerServices {
  db: Db;
  moneyOut: MoneyOutWithBank;
  bankAccounts: BankAccounts;
  clock: TriggerClock;
}

/** A valid sample IBAN for a tenant that has no bank account yet. */
const SANDBOX_IBAN = 'DE89370400440532013000';

/** The steps the bank takes a payout through to `to`, from in transit. */
const BANK_STEPS: Record<'paid' | 'returned' | 'failed', PayoutStatus[]> = {
  paid: ['paid'],
  returned: ['paid', 'returned'],
  failed: ['failed'],
};

/** Pays out the capture of `source` and takes the payout to `to`; answers the payout's id. */
export async function payoutOf(
  s: PayoutTriggerServices,
  owner: Owner,
  source: { type: string; id: string },
  to: keyof typeof BANK_STEPS,
): Promise<string> {
  const key = ownerKey(owner);
  const hasAccount = await s.db
    .selectFrom('bank_accounts')
    .select('owner')
    .where('owner', '=', key)
    .executeTakeFirst();
  if (!hasAccount) {
    await s.bankAccounts.put(s.db, owner, {
      iban: SANDBOX_IBAN,
      bic: undefined,
      holderName: 'Sandbox Merchant',
    });
  }
  const { schedule } = await s.moneyOut.terms.get(s.db, owner);
  await s.clock.advance(schedule.delayDays * 86_400 + 1);
  const paysIt = await s.db
    .selectFrom('balance_transactions')
    .select('payout_id')
    .where('source_type', '=', source.type)
    .where('source_id', '=', source.id)
    .where('type', '=', 'capture')
    .executeTakeFirst();
  const payoutId = paysIt?.payout_id ?? (await s.moneyOut.payouts.payNow(owner, { currency: 'EUR' })).id;
  await s.moneyOut.bank.dispatch();
  for (const step of BANK_STEPS[to]) {
    // Booked the way the rail books it (a camt.054 read from the inbox on the files rail).
    if (step === 'paid') await s.moneyOut.bank.book(payoutId);
    else {
      await runTransaction(s.db, (tx) =>
        s.moneyOut.lifecycle.step(tx, payoutId, step, { failureCode: 'AC04' }),
      );
    }
  }
  return payoutId;
}

/** The three payout triggers of an API, described once. */
export const PAYOUT_TRIGGER_STEPS = [
  [
    'paid',
    'paid out after the settlement delay and booked by the bank (sets a sample bank account when there is none)',
  ],
  [
    'returned',
    'paid out, then returned by the beneficiary’s bank (AC04, closed account): its amount is back in the balance',
  ],
  [
    'failed',
    'paid out, then rejected by the bank before it was paid (AC04): its amount is back in the balance',
  ],
] as const;
