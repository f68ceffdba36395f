// Velocity (docs/risk.md, Velocity): what a rule set's velocity features count before a signal. A key's
// windows (an IP, an email, a card, a customer) are counted from that key's past signals by an index range,
// as columns of one SELECT, which may be the write's own read; the tenant's are whole minutes kept in
// memory (tenant-windows.ts), since a tenant's traffic is too much to count on every signal.
import { daysSince } from '../clock/clock.ts';
import type { Executor } from '../db/database.ts';
import { preparedByText } from '../db/prepared.ts';
import {
  type DecisionPointName,
  isWindowFeature,
  VELOCITY_WINDOWS,
  type VelocityFeature,
  type VelocityKey,
  type VelocityWindow,
  type WindowFeature,
} from './decision-points.ts';
import { type SignalKeyColumn, signalHashOf, signalHashOfRow } from './signal-index.ts';

/** The keys an evaluation is counted by: velocity reads past signals with the same key. */
export interface SignalKeys {
  ip: string | null;
  email: string | null;
  cardFingerprint: string | null;
  customerId: string | null;
}

/** Each velocity key: the signal's key it counts by and that key's column; the tenant's has its own windows */
export const VELOCITY_KEY: Record<VelocityKey, { key: keyof SignalKeys; column: SignalKeyColumn } | null> = {
  ip: { key: 'ip', column: 'ip' },
  email: { key: 'email', column: 'email' },
  card: { key: 'cardFingerprint', column: 'card_fingerprint' },
  customer: { key: 'customerId', column: 'customer_id' },
  tenant: null,
};

/** What velocity is counted for: the signal's tenant, point, time, currency and keys. */
export interface VelocityProbe {
  point: DecisionPointName;
  tenant: string;
  at: Date;
  currency: string;
  keys: SignalKeys;
}
export type Velocity = Record<string, Record<string, bigint>>;

/** A rule set's velocity columns: SQL text with numbered parameters, and how to read them from a row */
export interface VelocityColumns {
  /** `(SELECT …) AS v_<key>_<window>, …`; empty when nothing is to be counted */
  sql: string;
  parameters: unknown[];
  read(row: object): Velocity;
  /** A key's feature as a numeric SQL expression over these columns selected as `v` (0 for a key the signal lacks) */
  sqlOf(f: VelocityFeature): string;
}

/**
 * The velocity features a rule set reads, as they stand before this signal: per key and window, one
 * count, the sum in the signal's currency and the declines, over the tenant's past signals at this point
 * with the same key; a key the signal lacks counts 0. One index range scan per key, over its longest
 * window, counts every window of it; a key's first sighting is one more index probe (its earliest signal).
 * As columns of a SELECT of the caller's, which may be the write's one read: their parameters are numbered
 * from `firstParameter`, the text depends only on which keys and windows are counted (one prepared
 * statement per rule set), `read` turns the row into the attributes' `velocity`. The tenant's windows are
 * not columns: `withTenant` adds them (tenant-windows.ts).
 */
export function velocityColumns(
  probe: VelocityProbe,
  features: readonly VelocityFeature[],
  firstParameter = 1,
): VelocityColumns {
  const parameters: unknown[] = [];
  const p = (value: unknown) => `$${firstParameter + parameters.push(value) - 1}`;
  // Each counted key's windows, longest first, and the keys whose first sighting is read
  const windowsByKey = new Map<VelocityKey, VelocityWindow[]>();
  const firstSeen = new Set<VelocityKey>();
  for (const f of features) {
    const byKey = VELOCITY_KEY[f.key];
    if (!byKey || probe.keys[byKey.key] === null) continue;
    if (!isWindowFeature(f)) {
      firstSeen.add(f.key);
      continue;
    }
    const windows = windowsByKey.get(f.key) ?? [];
    if (!windows.includes(f.window)) windows.push(f.window);
    windowsByKey.set(f.key, windows);
  }
  for (const windows of windowsByKey.values()) {
    windows.sort((a, b) => VELOCITY_WINDOWS[b] - VELOCITY_WINDOWS[a]);
  }
  const columns: string[] = [];
  let until = '';
  if (windowsByKey.size > 0 || firstSeen.size > 0) {
    const tenant = p(probe.tenant);
    const point = p(probe.point);
    until = p(probe.at);
    const currency = windowsByKey.size > 0 ? p(probe.currency) : '';
    const keyValues = new Map<VelocityKey, string>();
    const keyed = (key: VelocityKey) => {
      const byKey = VELOCITY_KEY[key] as NonNullable<(typeof VELOCITY_KEY)[VelocityKey]>;
      let value = keyValues.get(key);
      if (!value) {
        value = p(probe.keys[byKey.key]);
        keyValues.set(key, value);
      }
      // The key's index is on its hash (signal-index.ts); the columns recheck what the hash found
      return `${signalHashOfRow('', byKey.column)} = ${signalHashOf(tenant, point, value)}
        AND tenant = ${tenant} AND decision_point = ${point} AND ${byKey.column} = ${value}`;
    };
    for (const [key, windows] of windowsByKey) {
      const bounds = windows.map((w) => p(new Date(probe.at.getTime() - VELOCITY_WINDOWS[w] * 1000)));
      const metrics = bounds.map(
        (after) => `count(*) FILTER (WHERE at > ${after}),
        coalesce(sum(amount) FILTER (WHERE at > ${after} AND currency = ${currency}), 0)::text,
        count(*) FILTER (WHERE at > ${after} AND declined)`,
      );
      columns.push(`(SELECT json_build_array(${metrics.join(', ')})
      FROM risk_signals WHERE ${keyed(key)} AND at > ${bounds[0]} AND at <= ${until}) AS v_${key}`);
    }
    for (const key of firstSeen) {
      columns.push(`(SELECT min(at) FROM risk_signals WHERE ${keyed(key)} AND at <= ${until}) AS f_${key}`);
    }
  }
  /** A window feature's place in its key's array: three values per window, in the key's window order (count, sum, declines); -1 when not counted */
  const slotOf = (f: WindowFeature) => {
    const window = windowsByKey.get(f.key)?.indexOf(f.window) ?? -1;
    return window < 0 ? -1 : window * 3 + (f.metric === 'count' ? 0 : f.metric === 'sum' ? 1 : 2);
  };
  return {
    sql: columns.join(', '),
    parameters,
    sqlOf(f) {
      if (!isWindowFeature(f)) {
        if (!firstSeen.has(f.key)) return '0';
        return `coalesce(greatest(0, floor(extract(epoch FROM (${until}::timestamptz - v.f_${f.key})) / 86400)), 0)`;
      }
      const slot = slotOf(f);
      return slot < 0 ? '0' : `coalesce((v.v_${f.key}->>${slot})::numeric, 0)`;
    },
    read(row) {
      const velocity: Velocity = {};
      for (const f of features) {
        if (f.key === 'tenant') continue;
        const slot = velocity[f.key] ?? {};
        velocity[f.key] = slot;
        if (!isWindowFeature(f)) {
          slot.first_seen_days = daysBefore((row as Record<string, unknown>)[`f_${f.key}`], probe.at);
          continue;
        }
        const counted = (row as Record<string, unknown>)[`v_${f.key}`] as (number | string)[] | undefined;
        const at = slotOf(f);
        slot[`${f.metric}_${f.window}`] = BigInt(counted && at >= 0 ? (counted[at] ?? 0) : 0);
      }
      return velocity;
    },
  };
}

/** Whole days from a key's first signal (a row's timestamp) to `at`: 0 when none came before (this is its first). */
export function daysBefore(first: unknown, at: Date): bigint {
  if (first === null || first === undefined) return 0n;
  return daysSince(first instanceof Date ? first : new Date(String(first)), at);
}

/** The velocity features, read by a statement of their own. */
export async function readVelocity(db: Executor, probe: VelocityProbe, features: readonly VelocityFeature[]) {
  const velocity = velocityColumns(probe, features);
  if (velocity.sql === '') return velocity.read({});
  const { rows } = await db.executeQuery<Record<string, unknown>>(
    preparedByText('risk_velocity', `SELECT ${velocity.sql}`, velocity.parameters),
  );
  return velocity.read(rows[0] ?? {});
}

/** The keys' velocity with the tenant's windows (tenant-windows.ts) beside it, when a rule reads them. */
export function withTenant(velocity: Velocity, tenant: Record<string, bigint> | undefined): Velocity {
  return tenant ? { ...velocity, tenant } : velocity;
}
