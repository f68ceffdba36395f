// A request's unit of work (docs/architecture.md, Idempotency keys and units of work): one transaction for
// the length of a keyed request, lazy until it writes, and the connection handed to code inside it.
// The driver that routes queries to it is connection-scope.ts.
import { CompiledQuery, type DatabaseConnection, type QueryResult } from 'kysely';
import type { PooledConnection } from './pooled-connection.ts';

/** Where a unit takes its connection from, and how its work is entered into its scope (the driver). */
export interface UnitConnections {
  acquirePooled(): Promise<PooledConnection>;
  enter<T>(unit: UnitOfWork, work: () => Promise<T>): Promise<T>;
}

/** The step of a transaction that is its lazy unit's whole transaction */
export const WHOLE_UNIT = '';

/**
 * What a unit does when it opens its transaction (the key's lock and check): `begin` sends BEGIN and
 * one more statement (values written in with `literal`) in one round trip and answers that statement's
 * rows; it throws to refuse.
 */
export type OnOpen = (
  begin: (statement: string) => Promise<Record<string, unknown>[]>,
  literal: (value: string) => string,
) => Promise<void>;

/**
 * One transaction for the length of a request, opened only when the request first writes (a lazy unit,
 * `beginLazily`): reads before that run on the pool as they would without a unit, and a one-statement
 * write (`deferBatch`) waits to be sent with the key's answer as one statement at `commitWith`. So a
 * keyed request costs the round trips of an unkeyed one where it writes in one statement. `run` executes
 * code whose queries land on this unit; `finish` commits or rolls back and gives the connection back.
 */
export class UnitOfWork {
  readonly kind = 'unit';
  private owned: PooledConnection | undefined;
  private readonly borrowed = new BorrowedConnection(this);
  private savepoints = 0;
  private state: 'new' | 'lazy' | 'open' | 'finished' = 'new';
  private onOpen: OnOpen | undefined;
  /** A one-statement write waiting for the answer (lazy units only) */
  private deferred: DeferredBatch | undefined;
  /** Whether a write that its statement may refuse (`refusedBy`) may wait for the answer too */
  private defersRefusable = false;
  /** In registration order; a rollback to a savepoint drops what was registered after it */
  private readonly afterCommit: (() => void)[] = [];
  private readonly committedTasks: (() => Promise<void>)[] = [];
  /** Per savepoint: how many callbacks and tasks were registered when it was made */
  private readonly marks = new Map<string, { callbacks: number; tasks: number }>();
  /** What was registered when the transaction opened: a rollback of all of it drops what came after */
  private openedMark = { callbacks: 0, tasks: 0 };

  constructor(private readonly driver: UnitConnections) {}

  /** Not finished: it may still write and commit. */
  get isActive(): boolean {
    return this.state === 'open' || this.state === 'lazy';
  }

  async begin(): Promise<void> {
    this.state = 'lazy';
    await this.open();
  }

  /**
   * Starts the unit without a transaction; `onOpen` (else a plain BEGIN) runs when the transaction opens.
   * With `defersRefusable`, a write that its own statement may refuse waits for the commit too (the
   * request can run again if it is refused there: see DeferredWriteRefused).
   */
  beginLazily(onOpen?: OnOpen, options: { defersRefusable?: boolean } = {}): void {
    this.state = 'lazy';
    this.onOpen = onOpen;
    this.defersRefusable = options.defersRefusable ?? false;
  }

  /** Opens the transaction of a lazy unit: BEGIN, then onOpen; a refusal leaves it lazy. */
  async open(): Promise<void> {
    if (this.state !== 'lazy') return;
    const connection = await this.driver.acquirePooled();
    this.owned = connection;
    this.state = 'open';
    this.openedMark = { callbacks: this.afterCommit.length, tasks: this.committedTasks.length };
    try {
      if (this.onOpen) {
        await this.onOpen(
          (statement) => connection.script(`begin;\n${statement}`),
          (value) => connection.literal(value),
        );
      } else {
        await connection.executeQuery(CompiledQuery.raw('begin'));
      }
      const deferred = this.deferred;
      this.deferred = undefined;
      if (deferred) await sendRefusable(deferred, (query) => connection.executeQuery(query));
    } catch (err) {
      await this.rollbackAll();
      throw err;
    }
  }

  /**
   * Rolls the whole transaction back and returns to the lazy state: what a failed first step leaves
   * (nothing of the unit was written before it, so nothing is lost that a savepoint would have kept).
   */
  async rollbackAll(): Promise<void> {
    const connection = this.owned;
    this.owned = undefined;
    this.deferred = undefined;
    if (this.state === 'open') this.state = 'lazy';
    this.afterCommit.length = this.openedMark.callbacks;
    this.committedTasks.length = this.openedMark.tasks;
    if (!connection) return;
    try {
      await connection.executeQuery(CompiledQuery.raw('rollback'));
      connection.release();
    } catch (err) {
      connection.release(err as Error);
    }
  }

  /**
   * Keeps a one-statement write for the commit, where it is sent with the key's answer; answers false
   * (run it now) unless the unit is lazy and holds nothing else.
   */
  deferBatch(batch: DeferredBatch): boolean {
    if (this.state !== 'lazy' || this.deferred) return false;
    if (batch.refusedBy && !this.defersRefusable) return false;
    this.deferred = batch;
    return true;
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    return this.driver.enter(this, work);
  }

  /** Runs once the unit has committed (a worker to wake, say). */
  onCommit(callback: () => void): void {
    this.afterCommit.push(callback);
  }

  /** Runs once the unit has committed, and the unit's commit waits for it (see whenCommitted). */
  onCommitWait(task: () => Promise<void>): void {
    this.committedTasks.push(task);
  }

  /** The connection handed to code inside the unit; none once it has finished. */
  connection(): DatabaseConnection | undefined {
    return this.isActive ? this.borrowed : undefined;
  }

  /** A statement on the unit's transaction, which opens first if the unit is lazy. */
  async execute<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.state === 'lazy') await this.open();
    if (this.state !== 'open' || !this.owned) throw new Error('the unit of work is not open');
    return this.owned.executeQuery<R>(query);
  }

  /** A read of a lazy unit, on a pooled connection of its own (nothing of the unit is written yet). */
  async readOutside<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const connection = await this.driver.acquirePooled();
    try {
      const result = await connection.executeQuery<R>(query);
      connection.release();
      return result;
    } catch (err) {
      connection.release();
      throw err;
    }
  }

  get isLazy(): boolean {
    return this.state === 'lazy';
  }

  /** A one-statement write is waiting for the commit. */
  get hasDeferred(): boolean {
    return this.deferred !== undefined;
  }

  /**
   * Commits with one last statement (the key's answer): a lazy unit sends it alone or as one statement
   * with its deferred write, on its own (autocommit); an open one sends it in its transaction, then
   * COMMIT. Throws, with nothing of the unit committed, when the statement fails: DeferredWriteRefused
   * when the deferred write was refused (its answer, made before it ran, does not hold).
   */
  async commitWith(last: StatementPart): Promise<void> {
    if (this.state === 'lazy') {
      const deferred = this.deferred;
      this.deferred = undefined;
      const connection = await this.driver.acquirePooled();
      try {
        const run = (query: CompiledQuery) => connection.executeQuery(query);
        if (deferred) await sendRefusable(deferred, run, last);
        else await run(CompiledQuery.raw(last.sql, [...last.parameters]));
        connection.release();
      } catch (err) {
        connection.release();
        this.state = 'finished';
        throw err;
      }
      this.state = 'finished';
      await this.runCommitted();
      return;
    }
    if (this.state !== 'open' || !this.owned) throw new Error('the unit of work is not open');
    const connection = this.owned;
    try {
      // The last statement and COMMIT in one round trip; a failed statement skips the COMMIT.
      await connection.script(`${inlined(last, (value) => connection.literal(value))};\ncommit`);
    } catch (err) {
      await this.finish('rollback');
      throw err;
    }
    this.state = 'finished';
    this.owned = undefined;
    connection.release();
    await this.runCommitted();
  }

  /** Ends the unit: commit or roll back, then give the connection back. Safe to call twice. */
  async finish(outcome: 'commit' | 'rollback'): Promise<void> {
    if (this.state === 'finished') return;
    const connection = this.owned;
    if (outcome === 'commit' && this.deferred) throw new Error('a deferred write commits with commitWith');
    this.state = 'finished';
    this.owned = undefined;
    this.deferred = undefined;
    if (!connection) {
      // A lazy unit wrote nothing: there is nothing to commit, and what waited for a commit may run.
      if (outcome === 'commit') await this.runCommitted();
      return;
    }
    try {
      await connection.executeQuery(CompiledQuery.raw(outcome));
    } catch (err) {
      // A connection that failed to end its transaction is never reused; the server rolls back when
      // it goes. A failed commit must reach the caller: nothing was stored.
      connection.release(err as Error);
      if (outcome === 'commit') throw err;
      return;
    }
    connection.release();
    if (outcome === 'commit') await this.runCommitted();
  }

  private async runCommitted(): Promise<void> {
    for (const callback of new Set(this.afterCommit)) callback();
    // Best effort: the unit is committed whatever a task meets (a task reports its own failures).
    for (const task of this.committedTasks) await task().catch(() => undefined);
  }

  /** A transaction inside the unit is a savepoint; its rollback undoes only what it did. */
  async savepoint(): Promise<string> {
    const name = `unit_step_${++this.savepoints}`;
    await this.execute(CompiledQuery.raw(`savepoint ${name}`));
    this.marks.set(name, { callbacks: this.afterCommit.length, tasks: this.committedTasks.length });
    return name;
  }

  /**
   * Undoes what the savepoint's step did, and forgets what that step asked to run after the commit: a
   * callback registered there (a cache of rows it wrote, say) must not run for rows that are gone.
   */
  async rollbackTo(name: string): Promise<void> {
    await this.execute(CompiledQuery.raw(`rollback to savepoint ${name}`));
    const mark = this.marks.get(name);
    if (mark) {
      this.afterCommit.length = mark.callbacks;
      this.committedTasks.length = mark.tasks;
    }
  }
}

/** A batch of one business step's writes kept by a lazy unit (platform/db/statement-batch.ts). */
export interface DeferredBatch {
  /** Sends the batch, with `last` as one more part of the same statement when given. */
  send(execute: (query: CompiledQuery) => Promise<QueryResult<unknown>>, last?: StatementPart): Promise<void>;
  /**
   * For a write that its own statement may refuse (a ledger bound, a status checked in it): whether an
   * error is that refusal. Its step answered as if it would not be refused.
   */
  refusedBy?: (err: unknown) => boolean;
}

/**
 * A deferred write was refused when it was sent (`DeferredBatch.refusedBy`), at the commit or when a
 * later statement opened the unit: nothing of the unit is written, and what the request did after the
 * write assumed it would not be refused. The request runs again in a unit that sends such a write when
 * it is made, so the refusal is met where the code handles it (a decline recorded, say).
 */
export class DeferredWriteRefused extends Error {
  constructor(readonly refusal: unknown) {
    super('the deferred write was refused when it was sent', { cause: refusal });
    this.name = 'DeferredWriteRefused';
  }
}

/** Sends a deferred write; its refusal (`refusedBy`) is thrown as DeferredWriteRefused. */
async function sendRefusable(
  deferred: DeferredBatch,
  execute: (query: CompiledQuery) => Promise<QueryResult<unknown>>,
  last?: StatementPart,
): Promise<void> {
  try {
    await deferred.send(execute, last);
  } catch (err) {
    throw deferred.refusedBy?.(err) ? new DeferredWriteRefused(err) : err;
  }
}

/** A statement with its parameters written in as literals, for a script of several statements. */
function inlined(part: StatementPart, literal: (value: string) => string): string {
  return part.sql.replace(/\$(\d+)/g, (_, n: string) => {
    const value = part.parameters[Number(n) - 1];
    if (value === null || value === undefined) return 'NULL';
    // bytea's hex input form (a stored answer: idempotency-store.ts)
    if (Buffer.isBuffer(value)) return literal(`\\x${value.toString('hex')}`);
    return literal(value instanceof Date ? value.toISOString() : String(value));
  });
}

/** One statement with $1… placeholders and its parameters (as statement-batch.ts's parts). */
export interface StatementPart {
  sql: string;
  parameters: readonly unknown[];
}

const READ_ONLY = /^\s*select\b/i;
/** A SELECT that writes or locks (a ledger posting, a row lock, an advisory lock) is not a plain read. */
const WRITES_IN_A_SELECT = /\bledger_post|\bfor\s+(no\s+key\s+)?update\b|\bfor\s+(key\s+)?share\b|advisory/i;

function isPlainRead(sql: string): boolean {
  return READ_ONLY.test(sql) && !WRITES_IN_A_SELECT.test(sql);
}

/** The unit's connection as handed to code inside it: releasing it does nothing. */
export class BorrowedConnection implements DatabaseConnection {
  /** Savepoints of transactions begun on this connection, innermost last */
  readonly steps: string[] = [];

  constructor(readonly unit: UnitOfWork) {}

  /**
   * Code written for autocommit may catch a failed write (a unique violation answered as a 409) and
   * go on querying. In one transaction that failure would abort everything after it, so a write outside
   * any step runs in its own savepoint: it applies whole or not at all, as it would on its own.
   */
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.steps.length > 0) return this.unit.execute<R>(query);
    const isRead = isPlainRead(query.sql);
    // Nothing written yet: a read needs no transaction, and a failed first write is undone by rolling
    // the whole transaction back (no savepoint needed for it).
    if (this.unit.isLazy) {
      // A read after a deferred write must see it: the unit opens and sends the write first.
      if (isRead && !this.unit.hasDeferred) return this.unit.readOutside<R>(query);
      try {
        return await this.unit.execute<R>(query);
      } catch (err) {
        await this.unit.rollbackAll();
        throw err;
      }
    }
    if (isRead) return this.unit.execute<R>(query);
    const step = await this.unit.savepoint();
    try {
      return await this.unit.execute<R>(query);
    } catch (err) {
      await this.unit.rollbackTo(step);
      throw err;
    }
  }

  // biome-ignore lint/correctness/useYield: the interface requires the method; nothing streams here
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported');
  }
}
