// Which database connection a piece of work runs on. Two rules keep the pool from deadlocking and make
// an HTTP request one unit of work:
// - A transaction holds one connection; code running inside it that asks the pool for another (a query
//   on `db` instead of `tx`) could wait forever once every connection is held by such a transaction.
//   That is a programming error: it throws in tests and the sandbox, and is logged in production.
// - A unit of work (an HTTP request with an Idempotency-Key, or any admin or console write) holds one
//   connection in one open transaction from start to answer. Every query and transaction inside it runs on that connection,
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
  type TransactionSettings,
} from 'kysely';
import type pg from 'pg';
import { PooledConnection, type StatementObserver } from './pooled-connection.ts';
import { BorrowedConnection, type UnitConnections, UnitOfWork, WHOLE_UNIT } from './unit-of-work.ts';

export type { StatementObserver } from './pooled-connection.ts';
export type { DeferredBatch, OnOpen, StatementPart } from './unit-of-work.ts';
export { UnitOfWork } from './unit-of-work.ts';

interface TransactionScope {
  kind: 'transaction';
  /** The connection of the transaction this async flow runs in */
  owned: PooledConnection | undefined;
  /** What runs once the transaction has committed */
  committed: (() => void)[];
}

type ConnectionScope = TransactionScope | UnitOfWork;

const scopes = new AsyncLocalStorage<ConnectionScope>();

/** Runs `work` in a unit of work's scope: every query in it lands on that unit. */
export function runInUnit<T>(unit: UnitOfWork, work: () => Promise<T>): Promise<T> {
  return scopes.run(unit, work);
}

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

const listening = new WeakSet<pg.PoolClient>();

export class ScopedDriver implements Driver, UnitConnections {
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

  enter<T>(unit: UnitOfWork, work: () => Promise<T>): Promise<T> {
    return runInUnit(unit, work);
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
