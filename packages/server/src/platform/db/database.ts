// One pg pool and one Kysely instance per process; every store function takes an Executor (db or tx).
import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
export type Executor = Db | Tx;

export interface DatabaseHandle {
  db: Db;
  pool: pg.Pool;
  connectionString: string;
  close(): Promise<void>;
}

export function openDatabase(connectionString: string, options: { max?: number } = {}): DatabaseHandle {
  const pool = new pg.Pool({ connectionString, max: options.max ?? 20, application_name: 'tessera' });
  // An idle client losing its server (restart, failover) must not crash the process.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    pool,
    connectionString,
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
