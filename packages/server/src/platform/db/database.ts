// One pg pool and one Kysely instance per process; every store function takes an Executor (db or tx).
import { Kysely, type Transaction } from 'kysely';
import pg from 'pg';
import {
  type NestedAcquisitionPolicy,
  ScopedPostgresDialect,
  type StatementObserver,
  type UnitOfWork,
} from './connection-scope.ts';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
export type Executor = Db | Tx;

export interface DatabaseHandle {
  db: Db;
  pool: pg.Pool;
  connectionString: string;
  /** A unit of work on this database (not begun): one connection and one transaction for a request */
  createUnit(): UnitOfWork;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** Connections in the pool (default: 20) */
  max?: number;
  /** A query on the pool from inside a transaction (default: throw) */
  onNestedAcquisition?: NestedAcquisitionPolicy;
  /** Test-only fault injection: sees every statement before it is sent */
  observeStatement?: StatementObserver;
}

export function openDatabase(connectionString: string, options: OpenDatabaseOptions = {}): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 20,
    application_name: 'tessera',
    // A peer that vanished (a host down, a failover) is noticed by the kernel instead of waited on forever.
    keepAlive: true,
    // No request waits forever for a connection: an unreachable database is a 503 within seconds.
    connectionTimeoutMillis: 10_000,
  });
  // An idle client losing its server (restart, failover) must not crash the process.
  pool.on('error', () => undefined);
  const dialect = new ScopedPostgresDialect({
    pool,
    onNestedAcquisition: options.onNestedAcquisition ?? 'throw',
    ...(options.observeStatement ? { observeStatement: options.observeStatement } : {}),
  });
  const db = new Kysely<Database>({ dialect });
  return {
    db,
    pool,
    connectionString,
    createUnit: () => dialect.driver.createUnit(),
    close: () => db.destroy(),
  };
}

/** Postgres error codes we translate once, here, instead of matching strings across the code. */
export const PG_ERRORS = {
  uniqueViolation: '23505',
  checkViolation: '23514',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
} as const;

export function pgErrorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : undefined;
}

export function pgConstraint(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'constraint' in err && typeof err.constraint === 'string'
    ? err.constraint
    : undefined;
}
