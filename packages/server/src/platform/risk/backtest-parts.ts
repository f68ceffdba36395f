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

/** A read on the parts' leader, in their snapshot */
export type LeaderRead = <T>(query: CompiledQuery<T>) => Promise<T[]>;

export class BacktestParts {
  #running = false;

  constructor(
    private readonly pool: pg.Pool,
    /** How many connections, and slices, one backtest may take */
    readonly parts: number,
  ) {}

  /**
   * Runs `count` slices' queries at once, each on its own connection and all in one snapshot, and answers
   * their rows in the slices' order; undefined when another backtest holds the parts or the pool has no
   * room for them (the caller then judges the history in one part). `queries` makes them, and may read
   * in that snapshot first (a rule's hoisted parts: backtest-hoisted.ts).
   */
  async run<R extends pg.QueryResultRow>(
    count: number,
    queries: (read: LeaderRead) => Promise<readonly CompiledQuery<R>[]>,
  ): Promise<R[][] | undefined> {
    if (count < 1 || this.#running || !this.#roomFor(count)) return undefined;
    this.#running = true;
    try {
      return await this.#inOneSnapshot(queries);
    } finally {
      this.#running = false;
    }
  }

  #roomFor(parts: number): boolean {
    const { pool } = this;
    const max = pool.options.max ?? 10;
    return pool.waitingCount === 0 && max - (pool.totalCount - pool.idleCount) >= parts + LEFT_FOR_REQUESTS;
  }

  async #inOneSnapshot<R extends pg.QueryResultRow>(
    make: (read: LeaderRead) => Promise<readonly CompiledQuery<R>[]>,
  ): Promise<R[][]> {
    const leader = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await this.#begin(leader);
      const { rows } = await leader.query<{ snapshot: string }>('SELECT pg_export_snapshot() AS snapshot');
      const snapshot = rows[0]?.snapshot ?? '';
      const [first, ...rest] = await make(
        async <T>(query: CompiledQuery<T>) =>
          (await leader.query(query.sql, [...query.parameters])).rows as T[],
      );
      if (!first) return [];
      // The leader's transaction stays open until every other part has finished: their snapshot is its.
      const settled = await Promise.allSettled([
        leader.query<R>(first.sql, [...first.parameters]),
        ...rest.map((query) => this.#follow(snapshot, query)),
      ]);
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) throw failed.reason;
      return settled.map((s) => (s as PromiseFulfilledResult<pg.QueryResult<R>>).value.rows);
    } catch (err) {
      broken = err as Error;
      throw err;
    } finally {
      // A read-only transaction: ending it either way changes nothing
      await leader.query('ROLLBACK').catch(() => undefined);
      leader.release(broken);
    }
  }

  async #follow<R extends pg.QueryResultRow>(
    snapshot: string,
    query: CompiledQuery<R>,
  ): Promise<pg.QueryResult<R>> {
    if (!/^[0-9A-F-]+$/i.test(snapshot)) throw new Error(`an unexpected snapshot id: ${snapshot}`);
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await this.#begin(client, snapshot);
      return await client.query<R>(query.sql, [...query.parameters]);
    } catch (err) {
      broken = err as Error;
      throw err;
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(broken);
    }
  }

  async #begin(client: pg.PoolClient, snapshot?: string): Promise<void> {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    // The first statement of the transaction: a snapshot is taken by the first query otherwise
    if (snapshot) await client.query(`SET TRANSACTION SNAPSHOT '${snapshot}'`);
    await client.query(`SET LOCAL work_mem = '${SORT_MEMORY}'`);
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
