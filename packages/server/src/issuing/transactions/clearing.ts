// Clearing of an authorization (docs/issuing.md, Clearing): the network's clearings, each part posted
// from the hold (the rest kept held until a final part or the hold's expiry), above the authorized amount
// within a tolerance, or after the hold lapsed (late presentment); reversals, whole or partial; the
// hold's lapse. Force posts, refunds and credits are unheld-postings.ts. Each step is one database
// transaction: the record, the ledger move and the events.
import type { Clock } from '../../platform/clock/clock.ts';
import type { Db, Tx } from '../../platform/db/database.ts';
import type { IssuingTransactionStatus } from '../../platform/db/schema.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { uuidv7 } from '../../platform/ids.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import { type ClientAmount, formatAmountIn } from '../../platform/money/amount.ts';
import {
  assertStep,
  assetOf,
  clearingCeiling,
  clearingDeclined,
  declinedWhenShort,
  type IssuingTransaction,
  stateError,
} from './transaction.ts';
import type { TransactionRecords } from './transaction-records.ts';

type TransactionRow = Awaited<ReturnType<TransactionRecords['lock']>>;

export interface ClearingDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  ledger: Ledger;
  records: TransactionRecords;
  /** How far above the authorized amount its clearings may post together, in percent (default 20) */
  tolerancePercent: number;
}

export class Clearing {
  constructor(private readonly deps: ClearingDeps) {}

  /**
   * One clearing of a payment: its amount (default: what is still held), final unless `final` is false.
   * A final part releases what is left of the hold; a part that is not final keeps it held for the next.
   */
  async clear(
    transactionId: string,
    input: { amount?: ClientAmount | undefined; final?: boolean | undefined } = {},
  ): Promise<IssuingTransaction> {
    return this.deps.transact(async (tx) => {
      const t = await this.deps.records.lock(tx, transactionId);
      assertClearable(t);
      const amount = input.amount === undefined ? whatIsLeft(t) : input.amount.in(assetOf(t.currency));
      await this.clearRow(tx, t, amount, input.final ?? true);
      return this.deps.records.get(tx, t.id);
    });
  }

  /** A reversal of the authorization: all that is still held, or `amount` of it (the rest stays held). */
  async reverse(transactionId: string, given?: ClientAmount): Promise<IssuingTransaction> {
    return this.deps.transact(async (tx) => {
      const t = await this.deps.records.lock(tx, transactionId);
      if (t.status !== 'authorized') throw stateError('reverse', t.status);
      const amount = given === undefined ? null : given.in(assetOf(t.currency));
      await this.reverseRow(tx, t, amount);
      return this.deps.records.get(tx, t.id);
    });
  }

  /** Clearing (final) or reversal asked by the card network for an on-us payment, in the caller's transaction. */
  async settleFromNetwork(tx: Tx, networkReference: string, amount: bigint | null): Promise<void> {
    const row = await tx
      .selectFrom('issuing_transactions')
      .select('id')
      .where('network_reference', '=', networkReference)
      .executeTakeFirst();
    if (!row) throw notFound('transaction');
    const t = await this.deps.records.lock(tx, row.id);
    if (amount === null) await this.reverseRow(tx, t, null);
    else await this.clearRow(tx, t, amount, true);
  }

  /** Sweep: authorization holds that were never cleared in full lapse and give the rest of the funds back. */
  async expireHolds(): Promise<number> {
    const due = await this.deps.db
      .selectFrom('issuing_transactions')
      .select('id')
      .where('status', '=', 'authorized')
      .where('hold_expires_at', '<=', this.deps.clock.now())
      .limit(200)
      .execute();
    return transactEach(this.deps.transact, due, async (tx, row) => {
      const t = await tx
        .selectFrom('issuing_transactions')
        .selectAll()
        .where('id', '=', row.id)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (t?.status !== 'authorized') return false;
      if (t.hold_id) await this.deps.ledger.expireHold(tx, t.hold_id);
      await this.update(tx, t, 'expired', { held_amount: '0' });
      return true;
    });
  }

  // Internals ------------------------------------------------------------------------------------------

  private async clearRow(tx: Tx, t: TransactionRow, amount: bigint, final: boolean): Promise<void> {
    const held = BigInt(t.held_amount ?? 0);
    const settled = BigInt(t.settled_amount ?? 0);
    const late = t.status === 'expired';
    assertClearable(t);
    const ceiling = clearingCeiling(BigInt(t.amount), this.deps.tolerancePercent);
    if (settled + amount > ceiling) {
      throw clearingDeclined(
        'over_tolerance',
        `the clearings of this payment may post at most ${formatAmountIn(ceiling, t.currency)} in all`,
        {
          maxAmount: formatAmountIn(ceiling - settled, t.currency),
        },
      );
    }
    const operation =
      t.clearing_count === 0 ? `issuing-clear:${t.id}` : `issuing-clear:${t.id}:${t.clearing_count}`;
    const rest = final || amount >= held ? 0n : held - amount;
    await declinedWhenShort(
      late || !t.hold_id
        ? // Late presentment: the hold is gone, so the account pays from what is available now.
          this.deps.records.payNetwork(
            tx,
            { id: t.id, currency: t.currency, ledgerAccountId: await this.ledgerAccountOf(tx, t) },
            amount,
            operation,
          )
        : this.deps.ledger.postHold(tx, {
            operationId: operation,
            holdId: t.hold_id,
            amount,
            aboveHold: true,
            metadata: { transactionId: t.id, part: t.clearing_count + 1 },
          }),
    );
    const holdId = rest > 0n ? await this.holdAgain(tx, t, rest) : t.hold_id;
    const now = this.deps.clock.now();
    await this.update(tx, t, rest > 0n ? 'authorized' : 'settled', {
      settled_amount: (settled + amount).toString(),
      settled_at: now,
      held_amount: rest.toString(),
      hold_id: holdId,
      clearing_count: t.clearing_count + 1,
    });
    await this.deps.records.event(tx, owner(t), 'transactionSettled', { transactionId: t.id });
  }

  private async reverseRow(tx: Tx, t: TransactionRow, amount: bigint | null): Promise<void> {
    if (t.status !== 'authorized') throw stateError('reverse', t.status);
    const held = BigInt(t.held_amount ?? 0);
    if (amount !== null && amount > held) {
      throw new DomainError(
        'validation_failed',
        `a reversal is at most what is still held (${formatAmountIn(held, t.currency)})`,
        {
          field: 'amount',
        },
      );
    }
    if (t.hold_id) await this.deps.ledger.voidHold(tx, t.hold_id);
    const rest = amount === null ? 0n : held - amount;
    if (rest > 0n) {
      // A partial reversal: the rest stays held for the clearings to come.
      await this.update(tx, t, 'authorized', {
        held_amount: rest.toString(),
        hold_id: await this.holdAgain(tx, t, rest),
      });
      return;
    }
    // Nothing left held: parts already cleared make it settled, else it is reversed.
    await this.update(tx, t, t.settled_amount === null ? 'reversed' : 'settled', { held_amount: '0' });
  }

  /** Holds `amount` again until the original hold's expiry (what is left after a part or a partial reversal). */
  private async holdAgain(tx: Tx, t: TransactionRow, amount: bigint): Promise<string> {
    const hold = await this.deps.ledger.hold(tx, {
      operationId: `issuing-hold:${t.id}:${uuidv7()}`,
      debitAccountId: await this.ledgerAccountOf(tx, t),
      creditAccountId: await this.deps.records.settlementAccount(tx, t.currency, t.id),
      amount,
      ...(t.hold_expires_at ? { expiresAt: t.hold_expires_at } : {}),
      metadata: { transactionId: t.id },
    });
    return hold.id;
  }

  /**
   * Moves the record to `status` with the columns given. A change of status the spec has no event for
   * (reversed, expired, settled by releasing the rest of a partly cleared hold) sends
   * transactionStatusChanged; a clearing's own transactionSettled is sent by the clearing.
   */
  private async update(
    tx: Tx,
    t: TransactionRow,
    status: IssuingTransactionStatus,
    columns: {
      settled_amount?: string;
      settled_at?: Date;
      held_amount?: string;
      hold_id?: string | null;
      clearing_count?: number;
    },
  ): Promise<void> {
    assertStep(status === 'expired' ? 'expire' : 'change', t.status, status);
    await tx
      .updateTable('issuing_transactions')
      .set({ ...columns, status, updated_at: this.deps.clock.now() })
      .where('id', '=', t.id)
      .execute();
    const clearing = columns.settled_amount !== undefined;
    if (status !== t.status && !clearing) {
      await this.deps.records.event(tx, owner(t), 'transactionStatusChanged', {
        transactionId: t.id,
        status,
      });
    }
  }

  private async ledgerAccountOf(tx: Tx, t: TransactionRow): Promise<string> {
    const row = await tx
      .selectFrom('issuing_accounts')
      .select('ledger_account_id')
      .where('id', '=', t.account_id)
      .executeTakeFirstOrThrow();
    return row.ledger_account_id;
  }
}

function owner(t: TransactionRow) {
  return { customerId: t.customer_id, partnerId: t.partner_id };
}

/** Clearings come for card payments still held (authorized) or whose hold lapsed (late presentment). */
function assertClearable(t: TransactionRow): void {
  if (t.type !== 'card_payment' || (t.status !== 'authorized' && t.status !== 'expired')) {
    throw stateError('clear', t.status);
  }
}

/** A clearing without an amount: what is still held, or else what the authorization has not yet cleared. */
function whatIsLeft(t: TransactionRow): bigint {
  const held = BigInt(t.held_amount ?? 0);
  const left = held > 0n ? held : BigInt(t.amount) - BigInt(t.settled_amount ?? 0);
  if (left <= 0n)
    throw new DomainError('validation_failed', 'amount is required: nothing is left to clear', {
      field: 'amount',
    });
  return left;
}
