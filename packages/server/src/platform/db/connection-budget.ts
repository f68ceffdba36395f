// How many database connections `tessera serve` opens, and fitting them to the server. Each serving
// process holds its pool (TESSERA_DB_POOL_SIZE) and, beside it, the job queue's connections, the LISTEN
// connection and a short-lived one (queue setup); with TESSERA_WORKERS processes that is multiplied. The
// embedded Postgres is started with room for all of them; an external one (DATABASE_URL) is asked its
// max_connections at start, and the pool is divided among the workers to fit, or the start is refused
// with the numbers and the fix (docs/operations.md, Database connections).

/** Connections a serving process opens beside its pool: job queue (4), LISTEN (1), queue setup (1) */
export const CONNECTIONS_BESIDE_POOL = 6;
/** Left free for the CLI, migrations, a backup, psql */
export const CONNECTIONS_KEPT_FREE = 10;
/** A pool smaller than this cannot serve a worker under load: refuse rather than limp */
export const MIN_POOL_SIZE = 4;
/** What the embedded Postgres allows at least (it costs little memory while unused) */
const EMBEDDED_MIN_MAX_CONNECTIONS = 200;
/** Postgres's own default superuser_reserved_connections */
const SUPERUSER_RESERVED = 3;

export function connectionsNeeded(workers: number, poolSize: number): number {
  return workers * (poolSize + CONNECTIONS_BESIDE_POOL) + CONNECTIONS_KEPT_FREE;
}

/** The embedded server's max_connections for this many workers and this pool. */
export function embeddedMaxConnections(workers: number, poolSize: number): number {
  return Math.max(EMBEDDED_MIN_MAX_CONNECTIONS, connectionsNeeded(workers, poolSize) + SUPERUSER_RESERVED);
}

export class ConnectionBudgetError extends Error {
  override name = 'ConnectionBudgetError';
}

/**
 * The pool each worker may have on a server allowing `maxConnections` (`reserved` of them for
 * superusers): the configured size when it fits, else the share that fits (said in `shrunk`).
 * Throws when even MIN_POOL_SIZE per worker does not fit.
 */
export function fitPool(input: {
  maxConnections: number;
  reserved: number;
  workers: number;
  poolSize: number;
}): { poolSize: number; shrunk?: string } {
  const { maxConnections, reserved, workers, poolSize } = input;
  const needed = connectionsNeeded(workers, poolSize);
  const usable = maxConnections - reserved;
  if (needed <= usable) return { poolSize };
  const share = Math.floor((usable - CONNECTIONS_KEPT_FREE) / workers) - CONNECTIONS_BESIDE_POOL;
  const numbers =
    `${workers} worker(s) × (TESSERA_DB_POOL_SIZE ${poolSize} + ${CONNECTIONS_BESIDE_POOL}) + ${CONNECTIONS_KEPT_FREE} ` +
    `kept free = ${needed} connections, and the database allows ${usable} (max_connections ${maxConnections} ` +
    `less ${reserved} reserved)`;
  if (share < MIN_POOL_SIZE) {
    throw new ConnectionBudgetError(
      `${numbers}: not even ${MIN_POOL_SIZE} per worker fit.\n  Fix: put pgbouncer (transaction pooling) ` +
        `between Tessera and Postgres, lower TESSERA_WORKERS, or raise the server's max_connections`,
    );
  }
  return { poolSize: share, shrunk: `${numbers}: each worker's pool is ${share}` };
}
