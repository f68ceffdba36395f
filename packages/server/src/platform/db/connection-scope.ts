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
 * One connection, one open transaction, for the length of a request. `run` executes code whose queries
 * all land on this transaction; `finish` commits or rolls back and gives the connection back.
 */
export class UnitOfWork {
  readonly kind = 'unit';
  private owned: PooledConnection | undefined;
  private readonly borrowed = new BorrowedConnection(this);
  private savepoints = 0;
  private state: 'new' | 'open' | 'finished' = 'new';
  /** In registration order; a rollback to a savepoint drops what was registered after it */
  private readonly afterCommit: (() => void)[] = [];
  private readonly committedTasks: (() => Promise<void>)[] = [];
  /** Per savepoint: how many callbacks and tasks were registered when it was made */
  private readonly marks = new Map<string, { callbacks: number; tasks: number }>();

  constructor(private readonly driver: ScopedDriver) {}

  get isOpen(): boolean {
    return this.state === 'open';
  }

  async begin(): Promise<void> {
    this.owned = await this.driver.acquirePooled();
    this.state = 'open';
    try {
      await this.owned.executeQuery(CompiledQuery.raw('begin'));
    } catch (err) {
      await this.finish('rollback');
      throw err;
    }
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
    return this.state === 'open' ? this.borrowed : undefined;
  }

  execute<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.state !== 'open' || !this.owned) throw new Error('the unit of work is not open');
    return this.owned.executeQuery<R>(query);
  }

  /** Ends the unit: commit or roll back, then give the connection back. Safe to call twice. */
  async finish(outcome: 'commit' | 'rollback'): Promise<void> {
    if (this.state === 'finished') return;
    const connection = this.owned;
    this.state = 'finished';
    this.owned = undefined;
    if (!connection) return;
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
    if (outcome !== 'commit') return;
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

const READ_ONLY = /^\s*select\b/i;

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
    if (this.steps.length > 0 || READ_ONLY.test(query.sql)) return this.unit.execute<R>(query);
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
      if (step) await connection.unit.rollbackTo(step);
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
