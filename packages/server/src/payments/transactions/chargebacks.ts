// Chargebacks and representments as transactions of the order (docs/payments.md, Disputes; the xMoney
// wire's transactionType chargeback / representment): the network takes a captured deposit's money back,
// or gives it back when the merchant wins. Each in the caller's database transaction, with the sites'
// money and the orders module told (the IPN).
import type { Clock } from '../../platform/clock/clock.ts';
import type { Tx } from '../../platform/db/database.ts';
import type { SiteMoney } from './site-money.ts';
import { insertChild, type TransactionRow } from './transaction-row.ts';
import type { TransactionWrites } from './transaction-writes.ts';

export class Chargebacks {
  constructor(private readonly deps: { clock: Clock; money: SiteMoney; writes: TransactionWrites }) {}

  /** The network takes `amount` of the deposit back, and the platform charges `fee`; answers what the site could not cover. */
  async chargeBack(
    tx: Tx,
    t: TransactionRow,
    amount: bigint,
    fee: bigint,
    reason: string,
  ): Promise<{ chargeback: TransactionRow; uncovered: bigint; feeCharged: bigint }> {
    const chargeback = await insertChild(tx, t, {
      type: 'chargeback',
      status: 'charge-back',
      amount,
      reason,
      message: null,
      at: this.deps.clock.now(),
    });
    await this.addChargedBack(tx, t, amount);
    const { uncovered, feeCharged } = await this.deps.money.chargeback(tx, t, chargeback, amount, fee);
    await this.deps.writes.onChange(tx, chargeback);
    return { chargeback, uncovered, feeCharged };
  }

  /** A won dispute: the network pays `amount` back (what the site did not cover repaid to the platform first). */
  async represent(
    tx: Tx,
    t: TransactionRow,
    amount: bigint,
    uncovered: bigint,
    reason: string,
  ): Promise<TransactionRow> {
    const representment = await insertChild(tx, t, {
      type: 'representment',
      status: 'complete-ok',
      amount,
      reason,
      message: null,
      at: this.deps.clock.now(),
    });
    await this.addChargedBack(tx, t, -amount);
    await this.deps.money.representment(tx, t, representment, amount, uncovered);
    await this.deps.writes.onChange(tx, representment);
    return representment;
  }

  private async addChargedBack(tx: Tx, t: TransactionRow, delta: bigint): Promise<void> {
    await tx
      .updateTable('payments_transactions')
      .set((eb) => ({
        charged_back_amount: eb('charged_back_amount', '+', delta.toString()),
        updated_at: this.deps.clock.now(),
      }))
      .where('id', '=', t.id)
      .execute();
  }
}
