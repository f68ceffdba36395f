// A tenant's velocity (docs/risk.md, Velocity: the tenant's windows). A key's windows (a card, an email,
// an IP) count that key's few signals by an index range; a tenant's would count all of its traffic, a
// hundred thousand signals in ten minutes at 300 a second. So a tenant's windows are whole minutes: the W
// minutes that ended at least a minute before the signal's own, summed from risk_signal_minutes. Those rows
// are rolled up from the signals once per minute by whichever process first needs the minute, and every
// process keeps each tenant's sums for the current minute in memory: a decision reads none of it from the
// database but once a minute. The minute of grace lets the writes of the minute before commit first; a
// signal written more than a minute after its own time is left out of the live sums (a backtest counts it).
import { sql } from 'kysely';
import type { Db, Executor } from '../db/database.ts';
import {
  type DecisionPointName,
  isWindowFeature,
  VELOCITY_WINDOWS,
  type VelocityFeature,
  type VelocityWindow,
} from './decision-points.ts';
import { signalsMatching } from './signal-index.ts';

const MINUTE_MS = 60_000;
/** The longest window, in minutes: how far back a tenant's first roll-up reaches */
const LONGEST_MINUTES = Math.max(...Object.values(VELOCITY_WINDOWS)) / 60;

/** A tenant's signals over a window: how many, declined how many, their amounts by currency */
interface WindowTotals {
  count: bigint;
  declines: bigint;
  sums: Map<string, bigint>;
}

/** The whole minutes (since the epoch) a window covers for a signal at `at`: [from, to). */
export function tenantWindowMinutes(at: Date, window: VelocityWindow): { from: number; to: number } {
  const minute = Math.floor(at.getTime() / MINUTE_MS);
  const to = minute - 1;
  return { from: to - VELOCITY_WINDOWS[window] / 60, to };
}

/** The tenant's features a rule set reads, from its windows' totals, for a signal in `currency`. */
export function tenantFeatures(
  features: readonly VelocityFeature[],
  totals: (window: VelocityWindow) => WindowTotals,
  currency: string,
): Record<string, bigint> {
  const slot: Record<string, bigint> = {};
  for (const f of features) {
    if (f.key !== 'tenant') continue;
    const t = totals(f.window);
    slot[`${f.metric}_${f.window}`] =
      f.metric === 'count' ? t.count : f.metric === 'declines' ? t.declines : (t.sums.get(currency) ?? 0n);
  }
  return slot;
}

/** The tenant's windows a rule set reads */
const tenantWindowsRead = (features: readonly VelocityFeature[]): VelocityWindow[] => [
  ...new Set(
    features.filter((f) => f.key === 'tenant' && isWindowFeature(f)).map((f) => f.window as VelocityWindow),
  ),
];

const emptyTotals = (): WindowTotals => ({ count: 0n, declines: 0n, sums: new Map() });

interface CachedMinute {
  minute: number;
  totals: Map<VelocityWindow, Promise<WindowTotals>>;
  /** The totals read, once read: the next minute's are these plus the minute that entered, less those that left */
  settled: Map<VelocityWindow, WindowTotals>;
}

/** A process that has read a tenant's windows within this many minutes reads the next ones by difference */
const STEP_MINUTES = 60;

/** Each tenant's window totals for the current minute, per process; rolled up and read once a minute. */
export class TenantWindows {
  private readonly cache = new Map<string, CachedMinute>();

  /** The tenant features of `features` for a signal (none read: no I/O; else a read once a minute). */
  async read(
    db: Executor,
    probe: { tenant: string; point: DecisionPointName; at: Date; currency: string },
    features: readonly VelocityFeature[],
  ): Promise<Record<string, bigint> | undefined> {
    const windows = tenantWindowsRead(features);
    if (windows.length === 0) return undefined;
    const minute = Math.floor(probe.at.getTime() / MINUTE_MS);
    const key = `${probe.tenant}\u0000${probe.point}`;
    let cached = this.cache.get(key);
    let previous: CachedMinute | undefined;
    if (!cached || cached.minute !== minute) {
      // A clock that went back (a test's) reads afresh rather than from a later minute's sums
      if (cached && cached.minute < minute && minute - cached.minute <= STEP_MINUTES) previous = cached;
      cached = { minute, totals: new Map(), settled: new Map() };
      this.cache.set(key, cached);
    }
    const current = cached;
    const missing = windows.filter((w) => !current.totals.has(w));
    if (missing.length > 0) {
      const before = previous && missing.every((w) => previous.settled.has(w)) ? previous : undefined;
      const loading = this.load(db, probe.tenant, probe.point, probe.at, missing, before);
      for (const w of missing) {
        const one = loading.then((all) => {
          const totals = all.get(w) ?? emptyTotals();
          current.settled.set(w, totals);
          return totals;
        });
        // A failed read is not kept: the next signal reads again
        one.catch(() => current.totals.delete(w));
        current.totals.set(w, one);
      }
    }
    const totals = new Map<VelocityWindow, WindowTotals>();
    for (const w of windows) totals.set(w, await (current.totals.get(w) as Promise<WindowTotals>));
    return tenantFeatures(features, (w) => totals.get(w) ?? emptyTotals(), probe.currency);
  }

  /**
   * Each window's totals: the rolled-up minutes, and the signals past the frontier summed the same way.
   * Outside a transaction the tenant's point is rolled up first (its own transaction), so the signals read
   * are at most a minute's; inside one (money out decides in its transaction) nothing is written.
   */
  private async load(
    db: Executor,
    tenant: string,
    point: DecisionPointName,
    at: Date,
    windows: readonly VelocityWindow[],
    previous?: CachedMinute,
  ): Promise<Map<VelocityWindow, WindowTotals>> {
    const bounds = windows.map((w) => ({ window: w, ...tenantWindowMinutes(at, w) }));
    const to = minuteDate(bounds[0]?.to ?? 0);
    const from = minuteDate(Math.min(...bounds.map((b) => b.from)));
    if (!db.isTransaction) {
      await rollUp(db as Db, tenant, point, to);
      if (previous) return this.step(db, tenant, point, at, windows, previous);
    }
    // Summed by the database, one row per currency: 30 days are 43,200 minutes, never sent to Node
    const sums = bounds.map(
      (b, i) => sql`, sum(signals) FILTER (WHERE minute >= ${minuteDate(b.from)}) AS ${sql.ref(`c${i}`)},
        sum(amount) FILTER (WHERE minute >= ${minuteDate(b.from)}) AS ${sql.ref(`a${i}`)},
        sum(declines) FILTER (WHERE minute >= ${minuteDate(b.from)}) AS ${sql.ref(`d${i}`)}`,
    );
    const { rows } = await sql<Record<string, string | null>>`
      WITH f AS (SELECT coalesce((SELECT through FROM risk_signal_minutes_frontier
        WHERE tenant = ${tenant} AND decision_point = ${point}), ${from}::timestamptz) AS through),
      m AS (
        SELECT minute, currency, signals, amount, declines FROM risk_signal_minutes, f
        WHERE tenant = ${tenant} AND decision_point = ${point} AND minute >= ${from} AND minute < least(${to}, f.through)
        UNION ALL
        SELECT date_bin('1 minute', at, TIMESTAMPTZ 'epoch'), currency, count(*), sum(amount), count(*) FILTER (WHERE declined)
        FROM risk_signals, f
        WHERE ${signalsMatching('', { tenant, point })} AND at >= greatest(${from}, f.through) AND at < ${to}
        GROUP BY 1, 2)
      SELECT currency ${sql.join(sums, sql``)} FROM m GROUP BY currency`.execute(db);
    const result = new Map<VelocityWindow, WindowTotals>(windows.map((w) => [w, emptyTotals()]));
    for (const row of rows) {
      const currency = row.currency as string;
      for (const [i, b] of bounds.entries()) {
        const t = result.get(b.window) as WindowTotals;
        t.count += BigInt(row[`c${i}`] ?? 0);
        t.declines += BigInt(row[`d${i}`] ?? 0);
        t.sums.set(currency, (t.sums.get(currency) ?? 0n) + BigInt(row[`a${i}`] ?? 0));
      }
    }
    return result;
  }

  /**
   * The windows a few minutes on from sums already read, all rolled up: each window's sums then, plus the
   * minutes that entered, less those that left (a few rows, where summing 30 days is 43,200).
   */
  private async step(
    db: Executor,
    tenant: string,
    point: DecisionPointName,
    at: Date,
    windows: readonly VelocityWindow[],
    previous: CachedMinute,
  ): Promise<Map<VelocityWindow, WindowTotals>> {
    const then = new Date(previous.minute * MINUTE_MS);
    const moves = windows.map((w) => ({
      window: w,
      was: tenantWindowMinutes(then, w),
      is: tenantWindowMinutes(at, w),
    }));
    const entered = { from: minuteDate(moves[0]?.was.to ?? 0), to: minuteDate(moves[0]?.is.to ?? 0) };
    const left = moves.map((m) => ({ from: minuteDate(m.was.from), to: minuteDate(m.is.from) }));
    const range = (r: { from: Date; to: Date }) => sql`(minute >= ${r.from} AND minute < ${r.to})`;
    const sums = (r: { from: Date; to: Date }, name: string) =>
      sql`, sum(signals) FILTER (WHERE ${range(r)}) AS ${sql.ref(`${name}c`)},
        sum(amount) FILTER (WHERE ${range(r)}) AS ${sql.ref(`${name}a`)},
        sum(declines) FILTER (WHERE ${range(r)}) AS ${sql.ref(`${name}d`)}`;
    const { rows } = await sql<Record<string, string | null>>`
      SELECT currency ${sums(entered, 'e')} ${sql.join(
        left.map((r, i) => sums(r, `l${i}`)),
        sql``,
      )}
      FROM risk_signal_minutes
      WHERE tenant = ${tenant} AND decision_point = ${point}
        AND (${sql.join([range(entered), ...left.map(range)], sql` OR `)})
      GROUP BY currency`.execute(db);
    const result = new Map<VelocityWindow, WindowTotals>();
    for (const [i, m] of moves.entries()) {
      const was = previous.settled.get(m.window) ?? emptyTotals();
      const t: WindowTotals = { count: was.count, declines: was.declines, sums: new Map(was.sums) };
      for (const row of rows) {
        const currency = row.currency as string;
        t.count += BigInt(row.ec ?? 0) - BigInt(row[`l${i}c`] ?? 0);
        t.declines += BigInt(row.ed ?? 0) - BigInt(row[`l${i}d`] ?? 0);
        t.sums.set(currency, (t.sums.get(currency) ?? 0n) + BigInt(row.ea ?? 0) - BigInt(row[`l${i}a`] ?? 0));
      }
      result.set(m.window, t);
    }
    return result;
  }
}

const minuteDate = (minute: number) => new Date(minute * MINUTE_MS);

/**
 * Every signal of the tenant's point before `to` into risk_signal_minutes, from where the frontier stands
 * (a tenant's first roll-up reaches back the longest window). The frontier row is locked for the roll-up,
 * so two processes at a minute's turn roll it up once; it is written once a minute, not per signal.
 */
async function rollUp(db: Db, tenant: string, point: DecisionPointName, to: Date): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const start = new Date(to.getTime() - LONGEST_MINUTES * MINUTE_MS);
    await tx
      .insertInto('risk_signal_minutes_frontier')
      .values({ tenant, decision_point: point, through: start })
      .onConflict((oc) => oc.doNothing())
      .execute();
    const frontier = await tx
      .selectFrom('risk_signal_minutes_frontier')
      .select('through')
      .where('tenant', '=', tenant)
      .where('decision_point', '=', point)
      .forUpdate()
      .executeTakeFirstOrThrow();
    if (frontier.through >= to) return;
    // A frontier older than the longest window rolls up only what a window can still read
    const from = frontier.through > start ? frontier.through : start;
    await sql`
      INSERT INTO risk_signal_minutes (tenant, decision_point, minute, currency, signals, amount, declines)
      SELECT ${tenant}, ${point}, date_bin('1 minute', at, TIMESTAMPTZ 'epoch'), currency,
        count(*), sum(amount), count(*) FILTER (WHERE declined)
      FROM risk_signals
      WHERE ${signalsMatching('', { tenant, point })} AND at >= ${from} AND at < ${to}
      GROUP BY 3, 4
      ON CONFLICT (tenant, decision_point, minute, currency) DO NOTHING`.execute(tx);
    await tx
      .updateTable('risk_signal_minutes_frontier')
      .set({ through: to })
      .where('tenant', '=', tenant)
      .where('decision_point', '=', point)
      .execute();
  });
}
