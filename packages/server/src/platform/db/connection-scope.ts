// Which database connection a piece of work runs on. Two rules keep the pool from deadlocking and make
// an HTTP request one unit of work:
// - A transaction holds one connection; code running inside it that asks the pool for another (a query
//   on `db` instead of `tx`) could wait forever once every connection is held by such a transaction.
//   That is a programming error: it throws in tests and the sandbox, and is logged in production.
// - A unit of work (an HTTP request with an Idempotency-Key) holds one connection in one open
//   transaction from start to answer. Every query and transaction inside it runs on that connection,
//   transactions as savepoints, so the business effect, its events and the key's stored answer commit
//   together or not at all.
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type pg from 'pg';
import { statementName } from './prepared.ts';

interface TransactionScope {
  kind: 'transaction';
  /** The connection of the transaction this async flow runs in */
  owned: PooledConnection | undefined;
  /** What runs once the transaction has committed */
  committed: (() => void)[];
}

type ConnectionScope = TransactionScope | UnitOfWork;

const scopes = new AsyncLocalStorage<ConnectionScope>();

/** What a nested acquisition does: fail loudly (tests, sandbox) or report and go on (production). */
export type NestedAcquisitionPolicy = 'throw' | ((error: NestedAcquisitionError) => void);

export class NestedAcquisitionError extends Error {
  constructor() {
    super(
      'a query asked the pool for a second connection while its transaction holds one (use the transaction, not db)',
    );
    this.name = 'NestedAcquisitionError';
  }
}

/** Test-only: sees every statement before it is sent (fault injection between statements). */
export type StatementObserver = (sql: string, connection: { destroy(): void }) => void;

export interface ScopedDialectOptions {
  pool: pg.Pool;
  onNestedAcquisition: NestedAcquisitionPolicy;
  observeStatement?: StatementObserver;
}

/** Kysely's Postgres dialect with a driver that knows the current connection scope. */
export class ScopedPostgresDialect implements Dialect {
  readonly driver: ScopedDriver;

  constructor(options: ScopedDialectOptions) {
    this.driver = new ScopedDriver(options);
  }

  createDriver(): Driver {
    return this.driver;
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createAdapter() {
    return new PostgresAdapter();
  }
  // biome-ignore lint/suspicious/noExplicitAny: Kysely's own signature
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
}

/** Runs `work` as a transaction scope unless it already runs inside one (then the driver decides). */
export async function inTransactionScope<T>(work: () => Promise<T>): Promise<T> {
  if (scopes.getStore()) return work();
  const scope: TransactionScope = { kind: 'transaction', owned: undefined, committed: [] };
  const result = await scopes.run(scope, work);
  for (const callback of scope.committed) callback();
  return result;
}

/**
 * Runs `callback` once what this flow writes is committed: at the end of its transaction or unit of
 * work, or at once when it runs in neither (each statement commits by itself). Nothing runs after a
 * rollback.
 */
export function afterCommit(callback: () => void): void {
  const scope = scopes.getStore();
  if (!scope) callback();
  else if (scope.kind === 'unit') scope.onCommit(callback);
  else scope.committed.push(callback);
}

/** The unit of work the current async flow belongs to, if any. */
export function currentUnit(): UnitOfWork | undefined {
  const scope = scopes.getStore();
  return scope?.kind === 'unit' ? scope : undefined;
}

/**
 * Runs `task` once what this flow wrote is committed: at once outside a unit of work, and inside one when
 * the unit commits, before its answer is sent (a revocation waits there until every process has heard).
 */
export async function whenCommitted(task: () => Promise<void>): Promise<void> {
  const unit = currentUnit();
  if (unit) unit.onCommitWait(task);
  else await task();
}

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
  /** In registration order; a rollback to a savepoint drops what was registered after it */
  private readonly afterCommit: (() => void)[] = [];
  private readonly committedTasks: (() => Promise<void>)[] = [];
  /** Per savepoint: how many callbacks and tasks were registered when it was made */
  private readonly marks = new Map<string, { callbacks: number; tasks: number }>();
  /** What was registered when the transaction opened: a rollback of all of it drops what came after */
  private openedMark = { callbacks: 0, tasks: 0 };

  constructor(private readonly driver: ScopedDriver) {}

  /** Not finished: it may still write and commit. */
  get isActive(): boolean {
    return this.state === 'open' || this.state === 'lazy';
  }

  /** Its transaction is open (it has written, or was begun eagerly). */
  get isOpen(): boolean {
    return this.state === 'open';
  }

  async begin(): Promise<void> {
    this.state = 'lazy';
    await this.open();
  }

  /** Starts the unit without a transaction; `onOpen` runs when the transaction opens. */
  beginLazily(onOpen: OnOpen): void {
    this.state = 'lazy';
    this.onOpen = onOpen;
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
      if (deferred) await deferred.send((query) => connection.executeQuery(query));
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
    this.deferred = batch;
    return true;
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    return scopes.run(this, work);
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

  /**
   * Commits with one last statement (the key's answer): a lazy unit sends it alone or as one statement
   * with its deferred write, on its own (autocommit); an open one sends it in its transaction, then
   * COMMIT. Throws, with nothing of the unit committed, when the statement fails.
   */
  async commitWith(last: StatementPart): Promise<void> {
    if (this.state === 'lazy') {
      const deferred = this.deferred;
      this.deferred = undefined;
      const connection = await this.driver.acquirePooled();
      try {
        const run = (query: CompiledQuery) => connection.executeQuery(query);
        if (deferred) await deferred.send(run, last);
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
}

/** A statement with its parameters written in as literals, for a script of several statements. */
function inlined(part: StatementPart, literal: (value: string) => string): string {
  return part.sql.replace(/\$(\d+)/g, (_, n: string) => {
    const value = part.parameters[Number(n) - 1];
    if (value === null || value === undefined) return 'NULL';
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
class BorrowedConnection implements DatabaseConnection {
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
      if (isRead) return this.unit.readOutside<R>(query);
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

/** A pg client from the pool. */
class PooledConnection implements DatabaseConnection {
  private released = false;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly observe: StatementObserver | undefined,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    this.observe?.(query.sql, { destroy: () => this.destroy() });
    const name = statementName(query);
    const values = query.parameters as unknown[];
    const result = await (name
      ? this.client.query({ name, text: query.sql, values })
      : this.client.query(query.sql, values));
    const { command, rowCount, rows } = result;
    const isWrite =
      command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
    return {
      numAffectedRows: isWrite ? BigInt(rowCount ?? 0) : undefined,
      rows: (rows ?? []) as R[],
    };
  }

  // biome-ignore lint/correctness/useYield: the interface requires the method; nothing streams here
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported');
  }

  /**
   * Several statements in one round trip (the simple protocol: no parameters, so values are written in
   * with `literal`); answers the last statement's rows. A failing statement stops the rest.
   */
  async script(text: string): Promise<Record<string, unknown>[]> {
    this.observe?.(text, { destroy: () => this.destroy() });
    const result = (await this.client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
    const last = Array.isArray(result) ? result[result.length - 1] : result;
    return (last?.rows ?? []) as Record<string, unknown>[];
  }

  /** A string as a quoted SQL literal, escaped by the driver. */
  literal(value: string): string {
    return this.client.escapeLiteral(value);
  }

  /** Back to the pool; with an error the client is discarded instead. */
  release(err?: Error): void {
    if (this.released) return;
    this.released = true;
    this.client.release(err);
  }

  /** Cuts the connection as a crash would: the server rolls back whatever was open. */
  destroy(): void {
    (this.client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  }
}

/** The step of a transaction that is its lazy unit's whole transaction */
const WHOLE_UNIT = '';

const listening = new WeakSet<pg.PoolClient>();

export class ScopedDriver implements Driver {
  constructor(private readonly options: ScopedDialectOptions) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const scope = scopes.getStore();
    if (scope?.kind === 'unit') return scope.connection() ?? this.acquirePooled();
    if (scope?.owned) {
      const error = new NestedAcquisitionError();
      if (this.options.onNestedAcquisition === 'throw') throw error;
      this.options.onNestedAcquisition(error);
      return this.acquirePooled();
    }
    const connection = await this.acquirePooled();
    if (scope) scope.owned = connection;
    return connection;
  }

  async acquirePooled(): Promise<PooledConnection> {
    const client = await this.options.pool.connect();
    // pg emits 'error' on a checked-out client whose server went away (a restart, a failover, a cut
    // connection); the query in flight fails on its own, and an unheard event would end the process.
    if (!listening.has(client)) {
      listening.add(client);
      client.on('error', () => undefined);
    }
    return new PooledConnection(client, this.options.observeStatement);
  }

  createUnit(): UnitOfWork {
    return new UnitOfWork(this);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (connection instanceof BorrowedConnection) {
      // The first transaction of a lazy unit is the unit's own transaction: no savepoint for it.
      if (connection.unit.isLazy) {
        await connection.unit.open();
        connection.steps.push(WHOLE_UNIT);
        return;
      }
      connection.steps.push(await connection.unit.savepoint());
      return;
    }
    const mode = [
      settings.isolationLevel ? `isolation level ${settings.isolationLevel}` : '',
      settings.accessMode ?? '',
    ]
      .filter(Boolean)
      .join(' ');
    await connection.executeQuery(CompiledQuery.raw(mode ? `start transaction ${mode}` : 'begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    // A savepoint needs no release: the unit's commit keeps everything not rolled back.
    if (connection instanceof BorrowedConnection) {
      connection.steps.pop();
      return;
    }
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (connection instanceof BorrowedConnection) {
      const step = connection.steps.pop();
      if (step === WHOLE_UNIT) await connection.unit.rollbackAll();
      else if (step) await connection.unit.rollbackTo(step);
      return;
    }
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    if (!(connection instanceof PooledConnection)) return;
    const scope = scopes.getStore();
    if (scope?.kind === 'transaction' && scope.owned === connection) scope.owned = undefined;
    connection.release();
  }

  async destroy(): Promise<void> {
    await this.options.pool.end();
  }
}
