// A backtest's history (docs/risk.md, Backtests): a tenant's signals at a decision point over a period, each
// with the velocity features as they stood when it was decided — counted by window functions over the same
// signals, with the live reads' bounds — and the recorded attributes a rule reads. Both ways of judging a
// history read it: in the database (backtest.ts) and, for a rule with no exact SQL, in the process
// (backtest-stream.ts).
import { type RawBuilder, sql } from 'kysely';
import {
  type DecisionPointName,
  isWindowFeature,
  type RiskScope,
  VELOCITY_WINDOWS,
  type VelocityFeature,
  type VelocityKey,
  type WindowFeature,
} from './decision-points.ts';
import { featureColumn } from './rule-sql.ts';
import { tenantWindowMinutes } from './tenant-windows.ts';
import { VELOCITY_KEY } from './velocity.ts';

export interface HistoryRequest {
  tenant: RiskScope;
  point: DecisionPointName;
  from: Date;
  to: Date;
  features: readonly VelocityFeature[];
  /** What else each signal answers, read from its row (its recorded `attributes` among them), by name */
  columns: readonly { name: string; sql: RawBuilder<unknown> }[];
}

/**
 * The period's signals: `id, at, amount, currency`, the columns asked for and each feature as
 * `featureColumn(f)`. The windows are counted over every signal since the longest window before `from`,
 * then the rows before the period dropped (a WHERE beside the window functions would drop them first).
 * Only the columns a rule reads are carried through the windows' sorts, never the recorded JSON whole.
 */
export function historySql(r: HistoryRequest): RawBuilder<Record<string, unknown>> {
  const tenantFeatures = r.features.filter(
    (f): f is WindowFeature => f.key === 'tenant' && isWindowFeature(f),
  );
  const tenantWindows = tenantFeatures.length > 0;
  // A tenant's window ends a minute before its signal's own (tenant-windows.ts): two minutes more
  const longest =
    Math.max(0, ...r.features.filter(isWindowFeature).map((f) => VELOCITY_WINDOWS[f.window])) +
    (tenantWindows ? 120 : 0);
  const start = new Date(r.from.getTime() - longest * 1000);
  const firstSeen = [...new Set(r.features.filter((f) => !isWindowFeature(f)).map((f) => f.key))];
  const keys = [...new Set(r.features.filter((f) => f.key !== 'tenant').map((f) => f.key))];
  const base = [
    ...keys.map((key) => sql`${sql.ref(keyColumn(key))}`),
    ...(tenantWindows ? [sql`date_bin('1 minute', at, TIMESTAMPTZ 'epoch') AS minute`] : []),
    ...r.columns.map((c) => sql`${c.sql} AS ${sql.ref(c.name)}`),
  ];
  const counted = [
    ...r.columns.map((c) => sql`${sql.ref(c.name)}`),
    ...r.features.map((f) => sql`${featureSql(f)} AS ${sql.ref(featureColumn(f))}`),
  ];
  // A key's first sighting before `start`: one index probe per key seen in the period
  const firsts = firstSeen.map((key) => {
    const column = sql.ref(keyColumn(key));
    return sql`, ${sql.ref(`first_${key}`)} AS (
      SELECT d.first_key, (SELECT min(r.at) FROM risk_signals r
        WHERE r.tenant = ${r.tenant} AND r.decision_point = ${r.point} AND r.${column} = d.first_key
          AND r.at < ${start}) AS first_at
      FROM (SELECT DISTINCT ${column} AS first_key FROM base WHERE ${column} IS NOT NULL) d
    )`;
  });
  // The tenant's windows: its signals summed by minute and currency, the windows run over those minutes
  const minutes = tenantWindows
    ? sql`, minutes AS (
        SELECT minute, currency, count(*) AS signals, sum(amount) AS amounts,
          count(*) FILTER (WHERE declined) AS declines
        FROM base GROUP BY minute, currency
      ), tenant AS (
        SELECT minute, currency${sql.join(
          tenantFeatures.map((f) => sql`, ${tenantWindow(f)} AS ${sql.ref(featureColumn(f))}`),
          sql``,
        )}
        FROM minutes
      )`
    : sql``;
  const joins = [
    ...firstSeen.map(
      (key) =>
        sql`LEFT JOIN ${sql.ref(`first_${key}`)} ON ${sql.ref(`first_${key}.first_key`)} = base.${sql.ref(keyColumn(key))}`,
    ),
    ...(tenantWindows ? [sql`JOIN tenant USING (minute, currency)`] : []),
  ];
  return sql`WITH base AS (
      SELECT id, at, amount, currency, declined${sql.join(
        base.map((b) => sql`, ${b}`),
        sql``,
      )}
      FROM risk_signals
      WHERE tenant = ${r.tenant} AND decision_point = ${r.point} AND at >= ${start} AND at <= ${r.to}
    )${sql.join(firsts, sql``)}${minutes}
    SELECT * FROM (
      SELECT id, at, amount, base.currency${sql.join(
        counted.map((c) => sql`, ${c}`),
        sql``,
      )}
      FROM base ${sql.join(joins, sql` `)}
    ) counted
    WHERE at >= ${r.from}`;
}

function featureSql(f: VelocityFeature): RawBuilder<unknown> {
  if (!isWindowFeature(f)) {
    // Whole days since the key's earliest signal, before the period or in it; none without the key (0)
    const column = sql.ref(keyColumn(f.key));
    const first = sql`least(min(at) OVER (PARTITION BY ${column}), ${sql.ref(`first_${f.key}.first_at`)})`;
    return sql`CASE WHEN ${column} IS NOT NULL THEN greatest(0, floor(extract(epoch FROM at - ${first}) / 86400)) ELSE 0 END`;
  }
  // The tenant's are counted by minute (tenant, above) and joined
  return f.key === 'tenant' ? sql.ref(`tenant.${featureColumn(f)}`) : keyWindow(f);
}

/** What a window counts: its signals, their amounts (in this signal's currency) or their declines */
function metricOver(f: WindowFeature, over: RawBuilder<unknown>): RawBuilder<unknown> {
  if (f.metric === 'count') return sql`count(*) OVER (${over})`;
  if (f.metric === 'sum') return sql`coalesce(sum(amount) OVER (${over}), 0)`;
  return sql`count(*) FILTER (WHERE declined) OVER (${over})`;
}

/**
 * A key's window, as the live read counts it for each signal: the same key's signals after `at − window`
 * and before this one (earlier in time, or at the same instant and written before it). In (at, id) order
 * that is every signal before this one less those at or before `at − window`: two running windows over one
 * sort, each O(1) a row.
 */
function keyWindow(f: WindowFeature): RawBuilder<unknown> {
  const column = keyColumn(f.key);
  const partition = sql`PARTITION BY ${sql.join([sql.ref(column), ...(f.metric === 'sum' ? [sql.ref('currency')] : [])])}`;
  const span = sql.lit(`${VELOCITY_WINDOWS[f.window]} seconds`);
  const before = metricOver(
    f,
    sql`${partition} ORDER BY at, id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING`,
  );
  const expired = metricOver(
    f,
    sql`${partition} ORDER BY at RANGE BETWEEN UNBOUNDED PRECEDING AND ${span}::interval PRECEDING`,
  );
  return sql`CASE WHEN ${sql.ref(column)} IS NULL THEN 0 ELSE ${before} - ${expired} END`;
}

/**
 * The tenant's window for a signal in minute m: its signals of the whole minutes the live windows sum
 * (tenantWindowMinutes: [m − 1 − window, m − 1)), a sum in the signal's own currency; over the rows of
 * `minutes` (a minute's signals by currency). The frame's bounds are those minutes relative to minute 0.
 */
function tenantWindow(f: WindowFeature): RawBuilder<unknown> {
  const { from, to } = tenantWindowMinutes(new Date(0), f.window);
  const frame = sql`ORDER BY minute RANGE BETWEEN ${sql.lit(`${-from} minutes`)}::interval PRECEDING AND ${sql.lit(`${1 - to} minutes`)}::interval PRECEDING`;
  if (f.metric === 'sum') return sql`coalesce(sum(amounts) OVER (PARTITION BY currency ${frame}), 0)`;
  return sql`coalesce(sum(${sql.ref(f.metric === 'count' ? 'signals' : 'declines')}) OVER (${frame}), 0)`;
}

/** The signals' column a key counts by */
function keyColumn(key: VelocityKey): string {
  const column = VELOCITY_KEY[key]?.column;
  if (!column) throw new Error(`velocity key ${key} has its own windows`);
  return column;
}
