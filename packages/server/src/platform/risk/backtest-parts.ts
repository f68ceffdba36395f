// A backtest judged in parts (docs/risk.md, Backtests, How it scales): the period is cut into slices of
// time, and each slice's query runs on a connection of its own, so the database sorts and counts the
// windows of several slices at once on several cores (Postgres runs no window function in parallel by
// itself). Every part reads one snapshot, exported by the first: together they see the history as one
// query would. The connections are the pool's, taken outside the request's unit of work (which holds
// one connection for the whole request); so that a backtest never starves the requests, a process runs
// one backtest in parts at a time, and only while the pool has room to spare — else it runs in one part.
import type { CompiledQuery } from 'kysely';
import type pg from 'pg';

/** Memory for a backtest's sorts, in each part: a year of a busy tenant's signals sorts in memory, not on disk */
export const SORT_MEMORY = '256MB';
/** Connections left to the requests when a backtest takes its parts */
const LEFT_FOR_REQUESTS = 4;

/** A read on one part's connection, in the parts' snapshot */
export type PartRead = <T>(query: CompiledQuery<T>) => Promise<T[]>;

export class BacktestParts {
  #running = false;

  constructor(
    private readonly pool: pg.Pool,
    /** How many connections, and slices, one backtest may take */
    readonly parts: number,
  ) {}

  /**
   * Hands `work` a read on each of `count` connections, all in one snapshot (the first, the leader's,
   * exported to the others), and answers what it answers; undefined when another backtest holds the
   * parts or the pool has no room for them (the caller then judges the history in one part). The work
   * runs its slices' queries at once, one on each connection, in as many rounds as it needs: a rule's
   * hoisted parts are answered between two (backtest-hoisted.ts).
   */
  async run<T>(
    count: number,
    work: (parts: readonly PartRead[]) => Promise<T>,
    /** Each part's statements are cancelled past this (statement_timeout) */
    timeoutMs: number,
  ): Promise<T | undefined> {
    if (count < 1 || this.#running || !this.#roomFor(count)) return undefined;
    this.#running = true;
    try {
      return await this.#inOneSnapshot(count, work, Math.max(1, Math.round(timeoutMs)));
    } finally {
      this.#running = false;
    }
  }

  #roomFor(parts: number): boolean {
    const { pool } = this;
    const max = pool.options.max ?? 10;
    return pool.waitingCount === 0 && max - (pool.totalCount - pool.idleCount) >= parts + LEFT_FOR_REQUESTS;
  }

  async #inOneSnapshot<T>(
    count: number,
    work: (parts: readonly PartRead[]) => Promise<T>,
    timeoutMs: number,
  ): Promise<T> {
    const clients: pg.PoolClient[] = [];
    let broken: Error | undefined;
    try {
      const leader = await this.pool.connect();
      clients.push(leader);
      await this.#begin(leader, timeoutMs);
      const { rows } = await leader.query<{ snapshot: string }>('SELECT pg_export_snapshot() AS snapshot');
      const snapshot = rows[0]?.snapshot ?? '';
      if (!/^[0-9A-F-]+$/i.test(snapshot)) throw new Error(`an unexpected snapshot id: ${snapshot}`);
      // The leader's transaction stays open until every other part has finished: their snapshot is its
      for (let i = 1; i < count; i++) {
        const client = await this.pool.connect();
        clients.push(client);
        await this.#begin(client, timeoutMs, snapshot);
      }
      return await work(
        clients.map(
          (client) =>
            async <R>(query: CompiledQuery<R>) =>
              (await client.query(query.sql, [...query.parameters])).rows as R[],
        ),
      );
    } catch (err) {
      broken = err as Error;
      throw err;
    } finally {
      // Nothing a part does outlives it (a temporary table is dropped with its transaction)
      await Promise.all(
        clients.map(async (client) => {
          await client.query('ROLLBACK').catch(() => undefined);
          client.release(broken);
        }),
      );
    }
  }

  async #begin(client: pg.PoolClient, timeoutMs: number, snapshot?: string): Promise<void> {
    // Not read only: a part may keep its slice's history in a temporary table (backtest.ts)
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    // The first statement of the transaction: a snapshot is taken by the first query otherwise
    if (snapshot) await client.query(`SET TRANSACTION SNAPSHOT '${snapshot}'`);
    await client.query(`SET LOCAL work_mem = '${SORT_MEMORY}'`);
    await client.query(`SET LOCAL statement_timeout = ${timeoutMs}`);
  }
}

/**
 * The period cut into at most `parts` slices of equal time, each long enough that the windows' lead-in
 * before it (the longest window, read again by the slice) is at most half its length; one slice when
 * it is shorter than that. `forced` cuts exactly that many, whatever their length (tests).
 */
export function slicesOf(
  from: Date,
  to: Date,
  longestWindowSeconds: number,
  parts: number,
  forced?: number,
): { from: Date; to: Date; toExclusive: boolean }[] {
  const length = to.getTime() - from.getTime();
  const worthIt = Math.floor(length / (2 * Math.max(longestWindowSeconds, 3600) * 1000));
  const count = Math.max(1, forced ?? Math.min(parts, worthIt));
  return Array.from({ length: count }, (_, i) => ({
    from: new Date(from.getTime() + Math.floor((length * i) / count)),
    to: i === count - 1 ? to : new Date(from.getTime() + Math.floor((length * (i + 1)) / count)),
    toExclusive: i < count - 1,
  }));
}
