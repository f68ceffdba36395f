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
import { type SignalKeyColumn, signalsMatching } from './signal-index.ts';
import { tenantWindowMinutes } from './tenant-windows.ts';
import { VELOCITY_KEY } from './velocity.ts';

export interface HistoryRequest {
  tenant: RiskScope;
  point: DecisionPointName;
  from: Date;
  to: Date;
  /** The period ends before `to` (a slice of a backtest judged in parts: backtest-parts.ts), not at it */
  toExclusive?: boolean;
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
  const sparse = sparseDeclineFeatures(r.features);
  const keys = [...new Set(r.features.filter((f) => f.key !== 'tenant').map((f) => f.key))];
  const base = [
    ...keys.map((key) => sql`${sql.ref(keyColumn(key))}`),
    ...(tenantWindows ? [sql`date_bin('1 minute', at, TIMESTAMPTZ 'epoch') AS minute`] : []),
    ...r.columns.map((c) => sql`${c.sql} AS ${sql.ref(c.name)}`),
  ];
  // A key's first sighting before `start`: one index probe per key seen in the period
  const firsts = firstSeen.map((key) => {
    const column = sql.ref(keyColumn(key));
    return sql`, ${sql.ref(`first_${key}`)} AS (
      SELECT d.first_key, (SELECT min(r.at) FROM risk_signals r
        WHERE ${signalsMatching('r', r, { column: keyColumn(key), value: sql`d.first_key` })}
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
  // Each key's windows over the signals sorted once by (key, time, id), a stage after another
  const stages = keyStages(r, sparse).map(
    (stage, i) => sql`, ${sql.ref(`stage_${i + 1}`)} AS (
      SELECT s.*${sql.join(
        stage.columns.map((c) => sql`, ${c}`),
        sql``,
      )}
      FROM (SELECT * FROM ${sql.ref(i === 0 ? 'base' : `stage_${i}`)} ORDER BY ${sql.join(stage.order)}, at, id) s
    )`,
  );
  // A key's declines, where they are all its rule reads: counted from the declined signals outward
  const declineCounts = sparse.map((f) => sql`, ${sql.ref(sparseName(f))} AS (${sparseDeclines(f)})`);
  const counted = [
    ...r.columns.map((c) => sql`${sql.ref(c.name)}`),
    ...r.features.map(
      (f) =>
        sql`${sparse.includes(f as WindowFeature) ? sql`coalesce(${sql.ref(`${sparseName(f as WindowFeature)}.n`)}, 0)` : finalFeature(f)} AS ${sql.ref(featureColumn(f))}`,
    ),
  ];
  const joins = [
    ...firstSeen.map(
      (key) =>
        sql`LEFT JOIN ${sql.ref(`first_${key}`)} ON ${sql.ref(`first_${key}.first_key`)} = s.${sql.ref(keyColumn(key))}`,
    ),
    ...(tenantWindows ? [sql`JOIN tenant USING (minute, currency)`] : []),
    ...sparse.map(
      (f) => sql`LEFT JOIN ${sql.ref(sparseName(f))} ON ${sql.ref(`${sparseName(f)}.signal`)} = s.id`,
    ),
  ];
  return sql`WITH base AS (
      SELECT id, at, amount, currency, declined${sql.join(
        base.map((b) => sql`, ${b}`),
        sql``,
      )}
      FROM risk_signals
      WHERE ${signalsMatching('', r)} AND at >= ${start}
        AND at ${r.toExclusive ? sql`<` : sql`<=`} ${r.to}
    )${sql.join(firsts, sql``)}${minutes}${sql.join(stages, sql``)}${sql.join(declineCounts, sql``)}
    SELECT * FROM (
      SELECT id, at, amount, currency${sql.join(
        counted.map((c) => sql`, ${c}`),
        sql``,
      )}
      FROM ${sql.ref(stages.length > 0 ? `stage_${stages.length}` : 'base')} s ${sql.join(joins, sql` `)}
    ) counted
    WHERE at >= ${r.from}`;
}
/** A feature as the history answers it: counted in a key's stage, by the tenant's minutes, or here */
function finalFeature(f: VelocityFeature): RawBuilder<unknown> {
  if (isWindowFeature(f)) return sql.ref(`${f.key === 'tenant' ? 'tenant' : 's'}.${featureColumn(f)}`);
  // Whole days since the key's earliest signal, before the period or in it; none without the key (0)
  const column = sql.ref(`s.${keyColumn(f.key)}`);
  const first = sql`least(${sql.ref(`s.first_in_${f.key}`)}, ${sql.ref(`first_${f.key}.first_at`)})`;
  return sql`CASE WHEN ${column} IS NOT NULL THEN greatest(0, floor(extract(epoch FROM s.at - ${first}) / 86400)) ELSE 0 END`;
}

interface KeyStage {
  /** What the stage sorts by before (time, id): the key, and the currency for sums */
  order: RawBuilder<unknown>[];
  columns: RawBuilder<unknown>[];
}

/**
 * The keys' stages: the signals sorted by a key (and the currency, for sums: they are counted in the
 * signal's own currency), then (time, id), and that key's windows counted over the sorted rows, each
 * stage reading the one before. Its own sort is what makes the peers' order (by id) known in a window.
 */
function keyStages(r: HistoryRequest, sparse: readonly WindowFeature[]): KeyStage[] {
  const stages = new Map<string, KeyStage>();
  const stageOf = (key: VelocityKey, byCurrency: boolean) => {
    const id = `${key}${byCurrency ? ' by currency' : ''}`;
    const stage = stages.get(id) ?? {
      order: [sql.ref(keyColumn(key)), ...(byCurrency ? [sql.ref('currency')] : [])],
      columns: [],
    };
    stages.set(id, stage);
    return stage;
  };
  for (const key of new Set(r.features.filter((f) => !isWindowFeature(f)).map((f) => f.key))) {
    const column = sql.ref(keyColumn(key));
    stageOf(key, false).columns.push(
      sql`min(at) OVER (PARTITION BY ${column}) AS ${sql.ref(`first_in_${key}`)}`,
    );
  }
  for (const f of r.features) {
    if (f.key === 'tenant' || !isWindowFeature(f) || sparse.includes(f)) continue;
    const stage = stageOf(f.key, f.metric === 'sum');
    stage.columns.push(sql`${keyWindow(r, f, stage.order)} AS ${sql.ref(featureColumn(f))}`);
  }
  return [...stages.values()];
}

/** What a window counts: its signals, their amounts (in this signal's currency) or their declines */
function metricOver(f: WindowFeature, over: RawBuilder<unknown>): RawBuilder<unknown> {
  if (f.metric === 'count') return sql`count(*) OVER (${over})`;
  if (f.metric === 'sum') return sql`coalesce(sum(amount) OVER (${over}), 0)`;
  return sql`count(*) FILTER (WHERE declined) OVER (${over})`;
}

/**
 * A key's window, as the live read counts it for each signal: the same key's signals after `at − window`
 * and before this one — earlier in time (one moving frame: after `at − window` and before `at`, to the
 * microsecond Postgres keeps), or at the same instant and written before it. Those peers precede it in
 * the stage's (time, id) order: `row_number − rank` of them, and for a sum or declines their rows, read
 * by the key's index only where there are any (two signals of a key at one instant are rare but for a
 * frozen sandbox clock).
 */
function keyWindow(
  r: HistoryRequest,
  f: WindowFeature,
  partition: RawBuilder<unknown>[],
): RawBuilder<unknown> {
  const column = sql.ref(keyColumn(f.key));
  const span = sql.lit(`${VELOCITY_WINDOWS[f.window]} seconds`);
  const over = sql`PARTITION BY ${sql.join(partition)} ORDER BY at
    RANGE BETWEEN (${span}::interval - INTERVAL '1 microsecond') PRECEDING AND INTERVAL '1 microsecond' PRECEDING`;
  const peersBefore = sql`row_number() OVER (${over}) - rank() OVER (${over})`;
  const peers =
    f.metric === 'count'
      ? peersBefore
      : sql`CASE WHEN ${peersBefore} > 0 THEN (
          SELECT ${f.metric === 'sum' ? sql`coalesce(sum(p.amount), 0)` : sql`count(*) FILTER (WHERE p.declined)`}
          FROM risk_signals p
          WHERE ${signalsMatching('p', r, { column: keyColumn(f.key), value: sql`s.${column}` })}
            ${f.metric === 'sum' ? sql`AND p.currency = s.currency` : sql``} AND p.at = s.at AND p.id < s.id
        ) ELSE 0 END`;
  return sql`CASE WHEN s.${column} IS NULL THEN 0 ELSE ${metricOver(f, over)} + ${peers} END`;
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
function keyColumn(key: VelocityKey): SignalKeyColumn {
  const column = VELOCITY_KEY[key]?.column;
  if (!column) throw new Error(`velocity key ${key} has its own windows`);
  return column;
}

/**
 * The declines features counted sparsely: a key's `declines_<window>` where the rule reads nothing else of
 * that key. Declines are few (one charge in fifty in a busy tenant's year), so each signal's count is
 * found from the declined signals outward — the same key's signals in the window after each — instead of
 * sorting the whole history by the key for a window over every row: the sort is most of a backtest's time.
 */
function sparseDeclineFeatures(features: readonly VelocityFeature[]): WindowFeature[] {
  const declines = features.filter(
    (f): f is WindowFeature => isWindowFeature(f) && f.metric === 'declines' && f.key !== 'tenant',
  );
  return declines.filter((d) => features.every((f) => f.key !== d.key || f.metric === 'declines'));
}

const sparseName = (f: WindowFeature) => `declines_${f.key}_${f.window}`;

/**
 * For each signal with any, the key's declined signals in its window, as the live read counts them: after
 * `at − window` and before `at`, or at the same instant and written before it (keyWindow's frame and its
 * peers). A hash join of the declined signals with the history on the key, kept to the window.
 */
function sparseDeclines(f: WindowFeature): RawBuilder<unknown> {
  const column = sql.ref(keyColumn(f.key));
  const span = sql.lit(`${VELOCITY_WINDOWS[f.window]} seconds`);
  return sql`SELECT s.id AS signal, count(*) AS n
    FROM base d JOIN base s ON s.${column} = d.${column}
    WHERE d.declined AND d.at > s.at - ${span}::interval AND (d.at < s.at OR d.at = s.at AND d.id < s.id)
    GROUP BY s.id`;
}
