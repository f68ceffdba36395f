// Per-credential rate limits shared by every process on the database (@fastify/rate-limit's store
// interface). Windows are fixed and aligned on the wall clock, so every process agrees on them. A
// process leases a slice of a window's quota from Postgres at a time and spends it locally: the database
// sees one write per slice (about 2 % of the limit), and the whole never admits more than the limit.
// What a process leased and did not spend is lost at the window's end, so with N processes the limit
// can bite up to N slices early. A database failure fails open: rate limiting never takes the API down.
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';

interface WindowState {
  start: number;
  leased: number;
  used: number;
  /** The total granted across processes at the last lease */
  grantedEverywhere: number;
  isExhausted: boolean;
  leasing: Promise<void> | undefined;
}

type IncrCallback = Parameters<FastifyRateLimitStore['incr']>[1];

const SLICE_SHARE = 0.02;
const MAX_TRACKED_KEYS = 20_000;

export function postgresRateLimitStore(db: Db, logger: Logger): FastifyRateLimitStoreCtor {
  const windows = new Map<string, WindowState>();

  async function lease(key: string, state: WindowState, max: number): Promise<void> {
    const slice = Math.max(1, Math.ceil(max * SLICE_SHARE));
    const { rows } = await sql<{ granted: number }>`
      INSERT INTO rate_limit_windows (key, window_start, granted) VALUES (${key}, ${new Date(state.start)}, ${slice})
      ON CONFLICT (key, window_start) DO UPDATE SET granted = rate_limit_windows.granted + ${slice}
      RETURNING granted
    `.execute(db);
    const grantedEverywhere = rows[0]?.granted ?? slice;
    // Our share of this slice: what was still free of the limit before it.
    const mine = Math.max(0, Math.min(slice, max - (grantedEverywhere - slice)));
    state.leased += mine;
    state.grantedEverywhere = grantedEverywhere;
    if (grantedEverywhere >= max) state.isExhausted = true;
  }

  async function admit(
    key: string,
    timeWindow: number,
    max: number,
  ): Promise<{ current: number; ttl: number }> {
    const now = Date.now();
    const start = Math.floor(now / timeWindow) * timeWindow;
    let state = windows.get(key);
    if (!state || state.start !== start) {
      if (windows.size >= MAX_TRACKED_KEYS) windows.clear();
      state = { start, leased: 0, used: 0, grantedEverywhere: 0, isExhausted: false, leasing: undefined };
      windows.set(key, state);
    }
    const ttl = start + timeWindow - now;
    // Requests of one process wait on one lease rather than each asking the database.
    while (state.used >= state.leased && !state.isExhausted) {
      state.leasing ??= lease(key, state, max).finally(() => {
        if (state) state.leasing = undefined;
      });
      await state.leasing;
    }
    if (state.used >= state.leased) return { current: max + 1, ttl };
    state.used++;
    const unspentHere = state.leased - state.used;
    return { current: Math.min(max, state.grantedEverywhere - unspentHere), ttl };
  }

  return class PostgresRateLimitStore implements FastifyRateLimitStore {
    incr(key: string, cb: IncrCallback, timeWindow: number, max: number): void {
      admit(key, timeWindow, max).then(
        (result) => cb(null, result),
        (err: unknown) => {
          logger.warn({ err }, 'rate limit store unavailable; request admitted');
          cb(null, { current: 0, ttl: timeWindow });
        },
      );
    }

    child() {
      return this;
    }
  };
}

/** Forgets windows that ended over an hour ago. */
export async function purgeRateLimitWindows(db: Db): Promise<number> {
  const result = await db
    .deleteFrom('rate_limit_windows')
    .where('window_start', '<', sql<Date>`now() - interval '1 hour'`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
