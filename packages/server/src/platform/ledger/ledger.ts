// The double-entry ledger (docs/architecture.md, Ledger): the only code that writes balances. Every movement is
// a balanced transaction (per asset its entries sum to zero); holds are two-phase; bounded accounts
// never go below zero. Bounded accounts are locked in id order so concurrent transactions cannot deadlock;
// unbounded ones (a network's receivable, the platform's revenue) are never locked or updated by a posting:
// they take append-only deltas that the ledger-rollup sweep adds to their rows (migration 0034), so no
// row is written by every tenant's payments. A pure credit to a bounded account cannot break its bound, so it
// takes no lock either: it waits in ledger_account_credits until a debit that needs it, or the sweep, folds
// it in under the account's lock (migration 0039). Every operation is idempotent by its operation id.
import { sql } from 'kysely';
import type { Executor, Tx } from '../db/database.ts';
import { preparedStatement } from '../db/prepared.ts';
import type { StatementBatch } from '../db/statement-batch.ts';
import { DomainError } from '../errors/domain-error.ts';
import { newId } from '../ids.ts';
import { LedgerAccounts } from './ledger-accounts.ts';
import type {
  BalanceChange,
  HoldInput,
  LedgerTransaction,
  Leg,
  PostOperation,
  TransferInput,
} from './ledger-types.ts';
import {
  assertPositive,
  hashRequest,
  holdOperation,
  insufficientFunds,
  transferOperation,
} from './post-operations.ts';
import { planRows, stageRows } from './posting-rows.ts';

export type * from './ledger-types.ts';
export { insufficientFunds, ledgerRefusal } from './post-operations.ts';

export class Ledger extends LedgerAccounts {
  /** Posts a balanced multi-leg transaction at once, inside the caller's business transaction. */
  async transfer(tx: Tx, input: TransferInput): Promise<LedgerTransaction> {
    return this.post(tx, transferOperation(input));
  }

  /**
   * A transfer whose debits come from a balance split into shards (systemAccounts): each debit names the
   * shards it may draw on and takes from the fullest first. Every account is locked in id order before
   * the amounts are chosen, as ledger_post locks them, so this cannot deadlock with a posting. Refused
   * (insufficient funds, nothing written) when the shards together fall short.
   */
  async transferFromShards(
    tx: Tx,
    input: {
      operationId: string;
      debits: { shards: readonly string[]; amount: bigint }[];
      credits: Leg[];
      metadata?: Record<string, unknown>;
    },
  ): Promise<LedgerTransaction> {
    const ids = [
      ...new Set([...input.debits.flatMap((d) => d.shards), ...input.credits.map((c) => c.accountId)]),
    ];
    await lockBounded(tx, ids);
    const { rows } = await sql<{ id: string; available: string }>`
      SELECT id, (posted - pending_debits)::text AS available FROM ledger_balances
      WHERE id = ANY(${ids}::text[])`.execute(tx);
    const available = new Map(rows.map((row) => [row.id, BigInt(row.available)]));
    const legs: Leg[] = [...input.credits];
    for (const debit of input.debits) {
      let remaining = debit.amount;
      const fullestFirst = [...debit.shards].sort((a, b) => {
        const [x, y] = [available.get(a) ?? 0n, available.get(b) ?? 0n];
        return x === y ? 0 : x > y ? -1 : 1;
      });
      for (const shard of fullestFirst) {
        if (remaining <= 0n) break;
        const taken = min(remaining, available.get(shard) ?? 0n);
        if (taken <= 0n) continue;
        legs.push({ accountId: shard, amount: -taken });
        available.set(shard, (available.get(shard) ?? 0n) - taken);
        remaining -= taken;
      }
      if (remaining > 0n) throw insufficientFunds(debit.shards[0] ?? '');
    }
    return this.transfer(tx, { operationId: input.operationId, legs, metadata: input.metadata });
  }

  /** Reserves funds: the debit account's available balance drops now, its posted balance when the hold posts. */
  async hold(tx: Tx, input: HoldInput): Promise<LedgerTransaction> {
    return this.post(tx, holdOperation(input));
  }

  /**
   * Adds the transfer to a batch of its business step's writes (platform/db/statement-batch.ts): it is
   * written with them or, refused, nothing of the batch is (`ledgerRefusal` reads the batch's error).
   * Written as its rows where it needs no fold and no refusal (posting-rows.ts), else by ledger_post_strict.
   * Answers the ledger transaction's id.
   */
  stageTransfer(batch: StatementBatch, input: TransferInput): string {
    return this.stage(batch, transferOperation(input));
  }

  /** A hold added to a batch, as stageTransfer; answers the hold's id. */
  stageHold(batch: StatementBatch, input: HoldInput): string {
    return this.stage(batch, holdOperation(input));
  }

  /**
   * Settles a hold for its amount or less; the rest returns to the debit account's available balance.
   * With `aboveHold`, for more than the hold (a clearing within its tolerance): the excess comes from the
   * debit account's available balance, refused as insufficient funds when that cannot cover it.
   */
  async postHold(
    tx: Tx,
    input: {
      operationId: string;
      holdId: string;
      amount?: bigint;
      aboveHold?: boolean;
      metadata?: Record<string, unknown>;
    },
  ): Promise<LedgerTransaction> {
    const hold = await this.lockHold(tx, input.holdId);
    if (hold.status !== 'pending') {
      const replay = await this.findOperation(tx, input.operationId);
      if (replay?.holdId === input.holdId) return replay;
      throw new DomainError('invalid_state', `the hold is ${hold.status}`, {
        details: { status: hold.status },
      });
    }
    const amount = input.amount ?? hold.amount;
    assertPositive(amount);
    if (amount > hold.amount && !input.aboveHold) {
      throw new DomainError('validation_failed', 'a hold posts for its amount or less', {
        field: 'amount',
        details: { heldAmount: hold.amount.toString() },
      });
    }
    const legs: Leg[] = [
      { accountId: hold.debitAccountId, amount: -amount },
      { accountId: hold.creditAccountId, amount },
    ];
    return this.post(tx, {
      operationId: input.operationId,
      kind: 'hold_post',
      status: 'posted',
      legs,
      changes: new Map([
        [hold.debitAccountId, { posted: -amount, pendingDebits: -hold.amount, pendingCredits: 0n }],
        [hold.creditAccountId, { posted: amount, pendingDebits: 0n, pendingCredits: -hold.amount }],
      ]),
      requestHash: hashRequest('hold_post', legs, input.holdId),
      holdId: input.holdId,
      metadata: input.metadata,
    });
  }

  /** Releases a hold without moving money (reversal, decline). Repeating it changes nothing. */
  async voidHold(tx: Tx, holdId: string): Promise<void> {
    await this.releaseHold(tx, holdId, 'voided');
  }

  /** Lapses a hold whose time is up (the owning domain's expiry sweep calls this). Repeating it changes nothing. */
  async expireHold(tx: Tx, holdId: string): Promise<void> {
    await this.releaseHold(tx, holdId, 'expired');
  }

  /**
   * Adds the deltas of unbounded accounts (migration 0034) to their rows, up to `limit` at a time until
   * none is left; the ledger-rollup sweep runs it. Answers how many deltas it moved.
   */
  async rollUp(db: Executor, limit = 10_000): Promise<number> {
    let total = 0;
    for (;;) {
      const { rows } = await sql<{ moved: number }>`SELECT moved FROM ledger_rollup(${limit})`.execute(db);
      const moved = rows[0]?.moved ?? 0;
      total += moved;
      if (moved < limit) return total;
    }
  }

  async getTransaction(db: Executor, id: string): Promise<LedgerTransaction | undefined> {
    const row = await db
      .selectFrom('ledger_transactions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) return undefined;
    const legs = await db
      .selectFrom('ledger_entries')
      .select(['account_id', 'amount'])
      .where('transaction_id', '=', id)
      .orderBy('amount')
      .orderBy('account_id')
      .execute();
    return {
      id: row.id,
      operationId: row.operation_id,
      kind: row.kind,
      status: row.status,
      asset: row.asset,
      holdId: row.hold_id,
      expiresAt: row.expires_at,
      metadata: row.metadata,
      legs: legs.map((l) => ({ accountId: l.account_id, amount: BigInt(l.amount) })),
      isReplay: false,
    };
  }

  /**
   * The one write path for new ledger transactions: the ledger_post function (migration 0002) locks the
   * accounts in id order, checks bounds and writes transaction, balances and entries in one round trip.
   * A concurrent duplicate of the operation waits on the account locks, then finds the first and replays.
   */
  private async post(tx: Tx, op: PostOperation): Promise<LedgerTransaction> {
    const id = newId('ledgerTransaction');
    const { rows } = await tx.executeQuery<{
      outcome: string;
      transaction_id: string | null;
      asset: string | null;
      detail: string | null;
    }>(
      preparedStatement('ledger_post', `SELECT * FROM ledger_post(${PLACEHOLDERS})`, this.parameters(id, op)),
    );
    const result = rows[0];
    switch (result?.outcome) {
      case 'posted':
        return {
          id,
          operationId: op.operationId,
          kind: op.kind,
          status: op.status,
          asset: result.asset ?? '',
          holdId: op.holdId ?? null,
          expiresAt: op.expiresAt ?? null,
          metadata: op.metadata ?? {},
          legs: op.legs,
          isReplay: false,
        };
      case 'replay':
        return this.replay(tx, result.transaction_id as string);
      case 'mismatch':
        throw new DomainError(
          'conflict',
          `operation ${op.operationId} was already used for a different ledger operation`,
        );
      case 'insufficient_funds':
        throw insufficientFunds(result.detail ?? '');
      case 'asset_mismatch':
        throw new DomainError('validation_failed', 'all accounts of a ledger transaction hold one asset');
      case 'not_found':
        throw new DomainError('not_found', `ledger account ${result.detail} not found`);
      default:
        throw new Error(`ledger_post answered ${result?.outcome}`);
    }
  }

  private stage(batch: StatementBatch, op: PostOperation): string {
    const id = newId('ledgerTransaction');
    const strict = { sql: STRICT_POST, parameters: this.parameters(id, op), returns: true };
    const plan = planRows(op, this.accountFacts);
    if (plan) stageRows(batch, { id, op, plan, now: this.now(), strict });
    else batch.add(strict);
    return id;
  }

  /** ledger_post's arguments (migration 0002): the accounts' balance changes and the legs. */
  private parameters(id: string, op: PostOperation): unknown[] {
    if (op.operationId.length === 0 || op.operationId.length > 200) {
      throw new DomainError('validation_failed', 'operation ids are 1 to 200 characters');
    }
    const accountIds = [...op.changes.keys()];
    const deltas = (pick: (c: BalanceChange) => bigint) =>
      accountIds.map((a) => pick(op.changes.get(a) as BalanceChange).toString());
    return [
      id,
      op.operationId,
      op.requestHash,
      op.kind,
      op.status,
      op.holdId ?? null,
      op.expiresAt ?? null,
      JSON.stringify(op.metadata ?? {}),
      this.now(),
      accountIds,
      deltas((c) => c.posted),
      deltas((c) => c.pendingDebits),
      deltas((c) => c.pendingCredits),
      op.legs.map((l) => l.accountId),
      op.legs.map((l) => l.amount.toString()),
    ];
  }

  private async replay(db: Executor, transactionId: string): Promise<LedgerTransaction> {
    const found = await this.getTransaction(db, transactionId);
    if (!found) throw new Error(`ledger transaction ${transactionId} vanished`);
    return { ...found, isReplay: true };
  }

  private async findOperation(db: Executor, operationId: string): Promise<LedgerTransaction | undefined> {
    const row = await db
      .selectFrom('ledger_transactions')
      .select('id')
      .where('operation_id', '=', operationId)
      .executeTakeFirst();
    const found = row && (await this.getTransaction(db, row.id));
    return found ? { ...found, isReplay: true } : undefined;
  }

  private async releaseHold(tx: Tx, holdId: string, status: 'voided' | 'expired'): Promise<void> {
    const hold = await this.lockHold(tx, holdId);
    if (hold.status !== 'pending') return;
    // Releasing only lowers pending amounts, so no bound can break; the locks still go in id order,
    // and an unbounded account takes a delta instead (migration 0034), as in ledger_post.
    await lockBounded(tx, [hold.debitAccountId, hold.creditAccountId]);
    const amount = hold.amount.toString();
    await sql`
      WITH changes (id, pd, pc) AS (
        VALUES (${hold.debitAccountId}::text, ${amount}::numeric, 0::numeric),
               (${hold.creditAccountId}::text, 0::numeric, ${amount}::numeric)
      ), bounded AS (
        UPDATE ledger_accounts a SET pending_debits = a.pending_debits - c.pd, pending_credits = a.pending_credits - c.pc
        FROM changes c WHERE a.id = c.id AND a.is_bounded
      ), unbounded AS (
        INSERT INTO ledger_account_deltas (account_id, posted, pending_debits, pending_credits)
        SELECT c.id, 0, -c.pd, -c.pc FROM changes c JOIN ledger_accounts a ON a.id = c.id WHERE NOT a.is_bounded
      )
      UPDATE ledger_transactions SET status = ${status}, resolved_at = ${this.now()} WHERE id = ${holdId}`.execute(
      tx,
    );
  }

  /** Locks the hold row, so a post racing a void or an expiry has exactly one winner. */
  private async lockHold(
    tx: Tx,
    holdId: string,
  ): Promise<{ status: string; amount: bigint; debitAccountId: string; creditAccountId: string }> {
    const { rows } = await sql<{ kind: string; status: string; account_id: string; amount: string }>`
      SELECT t.kind, t.status, e.account_id, e.amount::text
      FROM (SELECT id, kind, status FROM ledger_transactions WHERE id = ${holdId} FOR UPDATE) t
      JOIN ledger_entries e ON e.transaction_id = t.id`.execute(tx);
    const debit = rows.find((r) => BigInt(r.amount) < 0n);
    const credit = rows.find((r) => BigInt(r.amount) > 0n);
    if (!debit || !credit || debit.kind !== 'hold') throw new DomainError('not_found', 'hold not found');
    return {
      status: debit.status,
      amount: BigInt(credit.amount),
      debitAccountId: debit.account_id,
      creditAccountId: credit.account_id,
    };
  }
}

/** The placeholders of ledger_post's fifteen arguments. */
const PLACEHOLDERS = Array.from({ length: 15 }, (_, i) => `$${i + 1}`).join(', ');
const STRICT_POST = `SELECT transaction_id FROM ledger_post_strict(${PLACEHOLDERS})`;

/**
 * Locks the bounded ones of these accounts, in id order, and folds their waiting credits into their rows
 * (ledger_lock, migration 0039); unbounded accounts are never locked.
 */
export async function lockBounded(tx: Tx, ids: string[]): Promise<void> {
  await sql`SELECT ledger_lock(${ids}::text[])`.execute(tx);
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
