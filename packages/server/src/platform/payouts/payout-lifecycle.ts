// A payout's lifecycle (docs/payouts.md, Payouts) in one table: which step leads where, and what it does
// to the money. Each step is one database transaction: the status, the ledger move, the balance
// transaction that gives a failed or returned payout back to the tenant, and the event.
import type { Clock } from '../clock/clock.ts';
import type { Tx } from '../db/database.ts';
import type { PayoutsTable } from '../db/schema.ts';
import { DomainError } from '../errors/domain-error.ts';
import type { Outbox } from '../events/outbox.ts';
import type { Ledger } from '../ledger/ledger.ts';
import { balanceAccounts, payoutAccounts } from './balance-accounts.ts';
import { balanceTransaction, insertBalanceTransactions } from './balance-transactions.ts';
import { publishPayoutEvent } from './payout-events.ts';
import { type PayoutRow, payoutView } from './payout-view.ts';
import { parseOwnerKey } from './terms.ts';

export type PayoutStatus = PayoutsTable['status'];

/** Where the money sits while a payout is in each status. */
type Place = 'inTransit' | 'paidOut' | 'tenant';

/** The steps: from → to, and where the money goes. */
const STEPS: Record<PayoutStatus, Partial<Record<PayoutStatus, { from: Place; to: Place }>>> = {
  // Held by a risk rule for a person (docs/risk.md, Reviews): released, or refused (the money back).
  held: {
    pending: { from: 'inTransit', to: 'inTransit' },
    failed: { from: 'inTransit', to: 'tenant' },
  },
  // Sent to the bank (the simulator at once; a file once it is in the outbox).
  pending: {
    in_transit: { from: 'inTransit', to: 'inTransit' },
    failed: { from: 'inTransit', to: 'tenant' },
  },
  in_transit: {
    // The bank booked it (a statement line, or the simulator's next day).
    paid: { from: 'inTransit', to: 'paidOut' },
    // The bank refused it (pain.002 RJCT) before paying.
    failed: { from: 'inTransit', to: 'tenant' },
    // Returned by the beneficiary's bank before we saw the booking.
    returned: { from: 'inTransit', to: 'tenant' },
  },
  paid: { returned: { from: 'paidOut', to: 'tenant' } },
  failed: {},
  returned: {},
};

export class PayoutLifecycle {
  constructor(private readonly deps: { ledger: Ledger; outbox: Outbox; clock: Clock }) {}

  /**
   * Moves the payout on to `to`, inside the caller's transaction. Answers false, changing nothing, when
   * it is already there (a statement read twice); refuses a step the table does not have.
   */
  async step(
    tx: Tx,
    payoutId: string,
    to: PayoutStatus,
    detail: { failureCode?: string; arrivalDate?: string } = {},
  ): Promise<boolean> {
    const payout = await tx
      .selectFrom('payouts')
      .selectAll()
      .where('id', '=', payoutId)
      .forUpdate()
      .executeTakeFirst();
    if (!payout) throw new DomainError('not_found', 'payout not found');
    if (payout.status === to) return false;
    const step = STEPS[payout.status][to];
    if (!step) {
      throw new DomainError('invalid_state', `a ${payout.status} payout cannot become ${to}`, {
        details: { status: payout.status },
      });
    }
    await this.move(tx, payout, step.from, step.to);
    const now = this.deps.clock.now();
    const updated = await tx
      .updateTable('payouts')
      .set({
        status: to,
        updated_at: now,
        ...(detail.failureCode !== undefined ? { failure_code: detail.failureCode } : {}),
        ...(detail.arrivalDate !== undefined ? { arrival_date: detail.arrivalDate } : {}),
      })
      .where('id', '=', payoutId)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (step.to === 'tenant') {
      await insertBalanceTransactions(tx, [
        balanceTransaction({
          owner: parseOwnerKey(payout.owner),
          currency: payout.currency,
          type: 'payout_return',
          source: { type: 'payout', id: payout.id },
          gross: BigInt(payout.amount),
          at: now,
        }),
      ]);
    }
    // A held payout let go is `payout.released`: `pending` is what every payout is when created.
    const type = payout.status === 'held' && to === 'pending' ? 'payout.released' : `payout.${to}`;
    await publishPayoutEvent(this.deps.outbox, tx, type, payoutView(updated as PayoutRow));
    return true;
  }

  private async move(tx: Tx, payout: PayoutRow, from: Place, to: Place): Promise<void> {
    if (from === to) return;
    const amount = BigInt(payout.amount);
    const accounts = await payoutAccounts(this.deps.ledger, tx, payout.currency);
    const owner = parseOwnerKey(payout.owner);
    const accountOf = async (place: Place) =>
      place === 'tenant'
        ? ((await balanceAccounts(this.deps.ledger, tx, owner, payout.currency))[0] as string)
        : accounts[place];
    await this.deps.ledger.transfer(tx, {
      operationId: `payout:${payout.id}:${from}->${to}`,
      legs: [
        { accountId: await accountOf(from), amount: -amount },
        { accountId: await accountOf(to), amount },
      ],
      metadata: { payoutId: payout.id },
    });
  }
}
