// The sandbox's bank (docs/payouts.md, The bank rail): a payout is in transit as soon as it is made and
// paid on the next day of the sandbox clock; the sandbox routes and `tessera trigger` pay, return or
// reject one, as a beneficiary's bank would. Payouts it sent carry no bank file; payouts sent as files
// before the operator switched to it still finish on the files: their bank's reports are read from the
// inbox while any is open.
import type { Clock } from '../../platform/clock/clock.ts';
import type { Db } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { addDays } from '../../platform/payouts/balance-transactions.ts';
import type { DebtorAccount } from '../../platform/payouts/money-out-config.ts';
import type { PayoutLifecycle } from '../../platform/payouts/payout-lifecycle.ts';
import type { BankInbox } from './bank-inbox.ts';
import type { BankRail } from './port.ts';
import { bookPayout } from './sandbox-booking.ts';

export interface SimulatedArrivalsDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  lifecycle: PayoutLifecycle;
}

/** Pays the payouts the simulator sent (no bank file) whose arrival day has come, on either rail. */
export async function arriveSimulated(deps: SimulatedArrivalsDeps): Promise<number> {
  const today = deps.clock.now().toISOString().slice(0, 10);
  const arrived = await deps.db
    .selectFrom('payouts')
    .select('id')
    .where('status', '=', 'in_transit')
    .where('bank_file_id', 'is', null)
    .where('arrival_date', '<=', today)
    .orderBy('id')
    .limit(500)
    .execute();
  for (const { id } of arrived) await deps.transact((tx) => deps.lifecycle.step(tx, id, 'paid'));
  return arrived.length;
}

export class BankSimulator implements BankRail {
  readonly name = 'simulator';

  constructor(
    private readonly deps: SimulatedArrivalsDeps & {
      /** The files rail's inbox, read while payouts sent as files are open */
      inbox: BankInbox;
      inboxDir: string;
      debtor: DebtorAccount;
    },
  ) {}

  book(payoutId: string): Promise<void> {
    return bookPayout(
      { ...this.deps, debtorIban: this.deps.debtor.iban, collect: () => this.collect() },
      payoutId,
    );
  }

  async dispatch(): Promise<number> {
    const pending = await this.deps.db
      .selectFrom('payouts')
      .select('id')
      .where('status', '=', 'pending')
      .orderBy('id')
      .limit(500)
      .execute();
    const arrival = addDays(this.deps.clock.now(), 1).toISOString().slice(0, 10);
    for (const { id } of pending) {
      await this.deps.transact((tx) =>
        this.deps.lifecycle.step(tx, id, 'in_transit', { arrivalDate: arrival }),
      );
    }
    return pending.length;
  }

  async collect(): Promise<number> {
    const arrived = await arriveSimulated(this.deps);
    const filesOpen = await this.deps.db
      .selectFrom('payouts')
      .select('id')
      .where('status', '=', 'in_transit')
      .where('bank_file_id', 'is not', null)
      .limit(1)
      .executeTakeFirst();
    return arrived + (filesOpen ? await this.deps.inbox.collect() : 0);
  }
}
