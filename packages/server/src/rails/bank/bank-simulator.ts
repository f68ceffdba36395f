// The sandbox's bank (docs/payouts.md, The bank rail): a payout is in transit as soon as it is made and
// paid on the next day of the sandbox clock; the sandbox routes and `tessera trigger` return or reject
// one, as a beneficiary's bank would.
import type { Clock } from '../../platform/clock/clock.ts';
import type { Db } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { addDays } from '../../platform/payouts/balance-transactions.ts';
import type { PayoutLifecycle } from '../../platform/payouts/payout-lifecycle.ts';
import type { BankRail } from './port.ts';

export class BankSimulator implements BankRail {
  readonly name = 'simulator';

  constructor(
    private readonly deps: { db: Db; transact: Transact; clock: Clock; lifecycle: PayoutLifecycle },
  ) {}

  async dispatch(): Promise<number> {
    const pending = await this.open('pending');
    const arrival = addDays(this.deps.clock.now(), 1).toISOString().slice(0, 10);
    for (const { id } of pending) {
      await this.deps.transact((tx) =>
        this.deps.lifecycle.step(tx, id, 'in_transit', { arrivalDate: arrival }),
      );
    }
    return pending.length;
  }

  async collect(): Promise<number> {
    const today = this.deps.clock.now().toISOString().slice(0, 10);
    const arrived = (await this.open('in_transit')).filter(
      (p) => p.arrival_date !== null && p.arrival_date <= today,
    );
    for (const { id } of arrived) await this.deps.transact((tx) => this.deps.lifecycle.step(tx, id, 'paid'));
    return arrived.length;
  }

  private open(status: 'pending' | 'in_transit') {
    return this.deps.db
      .selectFrom('payouts')
      .select(['id', 'arrival_date'])
      .where('status', '=', status)
      .orderBy('id')
      .limit(500)
      .execute();
  }
}
