// Backtests (docs/risk.md, Backtests): a draft rule evaluated over a tenant's real history at a decision
// point — the attributes as each signal recorded them, and velocity as it stood then, counted by window
// functions over the same signals with the live read's bounds — streamed through a cursor, never loaded
// whole. Disputes are the labels: how many of the charges the rule would have caught were later disputed,
// and disputed as fraud, against all of the period's.
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { DomainError } from '../errors/domain-error.ts';
import {
  celSchema,
  type DecisionPointName,
  isWindowFeature,
  type RiskScope,
  VELOCITY_WINDOWS,
  type VelocityFeature,
  type VelocityKey,
  type WindowFeature,
} from './decision-points.ts';
import type { RiskLists } from './risk-lists.ts';
import { checkExpression, compileExpression, ExpressionError } from './rule-expression.ts';
import { TenantWindowsOverHistory } from './tenant-windows.ts';
import { daysBefore, VELOCITY_KEY } from './velocity.ts';

/** The disputed objects of a tenant since a time: 'fraud' or 'other', by object id (an API's disputes). */
export type DisputeLabels = (
  db: Db,
  tenant: RiskScope,
  since: Date,
) => Promise<Map<string, 'fraud' | 'other'>>;

export interface BacktestRequest {
  tenant: RiskScope;
  decisionPoint: DecisionPointName;
  expression: string;
  from: Date;
  to: Date;
  sampleSize: number;
}

export interface BacktestResult {
  evaluated: number;
  matched: number;
  /** The matched objects' amounts, minor units by currency */
  matchedAmounts: Record<string, bigint>;
  /** Disputed later: of the matched, and of all evaluated */
  disputed: { matched: number; all: number };
  fraud: { matched: number; all: number };
  /** Evaluations that failed (a division by zero): not matched */
  failed: number;
  sample: { objectId: string; at: Date; amount: bigint; currency: string }[];
  /** The matched objects' ids when asked for (tests compare them with a rule's decisions) */
  matchedIds?: string[];
}

/** How many rows one FETCH brings: memory stays flat whatever the period's size */
const FETCH_ROWS = 5_000;
/** A period longer than this is refused (the signals' retention is 400 days by default) */
const MAX_DAYS = 400;
/** Memory for the windows' sorts: a year of a busy tenant's signals sorts in memory, not on disk */
const SORT_MEMORY = '256MB';

export async function backtest(
  db: Db,
  lists: RiskLists,
  labels: DisputeLabels | undefined,
  request: BacktestRequest,
  options: { keepIds?: boolean } = {},
): Promise<BacktestResult> {
  const { tenant, decisionPoint: point, from, to } = request;
  if (from >= to) throw new DomainError('validation_failed', 'from must be before to', { field: 'from' });
  if (to.getTime() - from.getTime() > MAX_DAYS * 86_400_000) {
    throw new DomainError('validation_failed', `a backtest covers at most ${MAX_DAYS} days`, { field: 'to' });
  }
  let velocity: VelocityFeature[];
  try {
    velocity = checkExpression(point, request.expression).velocity;
  } catch (err) {
    if (!(err instanceof ExpressionError)) throw err;
    throw new DomainError(
      'validation_failed',
      `expression: ${err.message} (line ${err.line}, column ${err.column})`,
      {
        field: 'expression',
        details: { position: err.position, line: err.line, column: err.column },
      },
    );
  }
  const rule = compileExpression(point, request.expression);
  const [riskLists, disputes] = await Promise.all([
    lists.listsFor(db, tenant),
    labels ? labels(db, tenant, from) : Promise.resolve(new Map<string, 'fraud' | 'other'>()),
  ]);
  // A key's windows are window functions over the signals; the tenant's whole minutes are summed as the
  // rows stream past (tenant-windows.ts), from the minutes before the period's first.
  const tenantWindows = new TenantWindowsOverHistory(velocity);
  const keyed = velocity.filter(isWindowFeature).filter((f) => f.key !== 'tenant');
  const firstSeen = [...new Set(velocity.filter((f) => !isWindowFeature(f)).map((f) => f.key))];
  const longest =
    Math.max(0, ...velocity.filter(isWindowFeature).map((f) => VELOCITY_WINDOWS[f.window])) +
    (tenantWindows.reads ? 120 : 0);
  const start = new Date(from.getTime() - longest * 1000);
  const result: BacktestResult = {
    evaluated: 0,
    matched: 0,
    matchedAmounts: {},
    disputed: { matched: 0, all: 0 },
    fraud: { matched: 0, all: 0 },
    failed: 0,
    sample: [],
    ...(options.keepIds ? { matchedIds: [] } : {}),
  };
  const read = attributesRead(point, request.expression);

  await db.transaction().execute(async (trx) => {
    await sql`SET LOCAL work_mem = ${sql.lit(SORT_MEMORY)}`.execute(trx);
    // The windows are counted over every signal since `start`, then the rows before the period dropped
    // (a WHERE beside the window functions would drop them first). A key's first sighting before `start`
    // is one index probe per key seen in the period.
    await sql`DECLARE risk_backtest NO SCROLL CURSOR FOR
      WITH base AS (
        SELECT s.* FROM risk_signals s
        WHERE s.tenant = ${tenant} AND s.decision_point = ${point}
          AND s.at >= ${start} AND s.at <= ${to}
      )${sql.join(
        firstSeen.map((key) => {
          const column = sql.ref(keyColumn(key));
          return sql`, ${sql.ref(`first_${key}`)} AS (
            SELECT d.first_key, (SELECT min(r.at) FROM risk_signals r
              WHERE r.tenant = ${tenant} AND r.decision_point = ${point} AND r.${column} = d.first_key
                AND r.at < ${start}) AS first_at
            FROM (SELECT DISTINCT ${column} AS first_key FROM base WHERE ${column} IS NOT NULL) d
          )`;
        }),
        sql``,
      )}
      SELECT * FROM (
        SELECT id, object_id, at, amount, currency, declined ${sql.join(
          [
            ...read.map(
              (a) =>
                sql`, attributes${sql.raw(a.type === 'object' ? '->' : '->>')}${a.name} AS ${sql.ref(`a_${a.name}`)}`,
            ),
            ...keyed.map(
              (f) => sql`, ${velocityWindow(f)} AS ${sql.ref(`v_${f.key}_${f.metric}_${f.window}`)}`,
            ),
            // A signal without the key has no first sighting (0), as live
            ...firstSeen.map((key) => {
              const column = sql.ref(keyColumn(key));
              return sql`, CASE WHEN ${column} IS NOT NULL THEN least(min(at) OVER (PARTITION BY ${column}), ${sql.ref(`first_${key}.first_at`)}) END AS ${sql.ref(`f_${key}`)}`;
            }),
          ],
          sql``,
        )}
        FROM base ${sql.join(
          firstSeen.map(
            (key) =>
              sql`LEFT JOIN ${sql.ref(`first_${key}`)} ON ${sql.ref(`first_${key}.first_key`)} = base.${sql.ref(keyColumn(key))}`,
          ),
          sql` `,
        )}
      ) counted
      WHERE at >= ${tenantWindows.reads ? start : from}
      ORDER BY at, id`.execute(trx);
    for (;;) {
      const { rows } = await sql<SignalRow>`FETCH ${sql.lit(FETCH_ROWS)} FROM risk_backtest`.execute(trx);
      for (const row of rows) {
        const tenant = tenantWindows.reads ? tenantWindows.featuresAt(row.at, row.currency) : undefined;
        if (tenantWindows.reads) tenantWindows.add(row.at, BigInt(row.amount), row.currency, row.declined);
        // Before the period: only the tenant's minutes read it
        if (row.at < from) continue;
        result.evaluated++;
        const label = disputes.get(row.object_id);
        if (label) result.disputed.all++;
        if (label === 'fraud') result.fraud.all++;
        const attributes: Record<string, unknown> = {};
        for (const a of read) attributes[a.name] = a.value(row[`a_${a.name}`]);
        const counted: Record<string, Record<string, bigint>> = tenant ? { tenant } : {};
        for (const key of firstSeen) {
          counted[key] = { ...counted[key], first_seen_days: daysBefore(row[`f_${key}`], row.at) };
        }
        for (const f of keyed) {
          const slot = counted[f.key] ?? {};
          counted[f.key] = slot;
          slot[`${f.metric}_${f.window}`] = BigInt(
            (row[`v_${f.key}_${f.metric}_${f.window}`] as string | number) ?? 0,
          );
        }
        attributes.velocity = counted;
        let hit = false;
        try {
          hit = rule.evaluate(attributes, riskLists);
        } catch {
          result.failed++;
        }
        if (!hit) continue;
        result.matched++;
        const amount = BigInt(row.amount);
        result.matchedAmounts[row.currency] = (result.matchedAmounts[row.currency] ?? 0n) + amount;
        if (label) result.disputed.matched++;
        if (label === 'fraud') result.fraud.matched++;
        if (result.sample.length < request.sampleSize) {
          result.sample.push({ objectId: row.object_id, at: row.at, amount, currency: row.currency });
        }
        result.matchedIds?.push(row.object_id);
      }
      if (rows.length < FETCH_ROWS) break;
    }
    await sql`CLOSE risk_backtest`.execute(trx);
  });
  return result;
}

interface SignalRow {
  id: string;
  object_id: string;
  at: Date;
  amount: string;
  currency: string;
  declined: boolean;
  [attributeOrVelocity: `${'a' | 'v' | 'f'}_${string}`]: unknown;
}

/**
 * One velocity feature over the history, as the live read counts it for each signal: the same key's
 * signals after `at − window` and before this one (earlier in time, or at the same instant and written
 * before it). In (at, id) order that is every signal before this one less those at or before
 * `at − window`: two running windows over one sort, each O(1) a row.
 */
function velocityWindow(f: WindowFeature) {
  const column = keyColumn(f.key);
  const partition = sql`PARTITION BY ${sql.join([sql.ref(column), ...(f.metric === 'sum' ? [sql.ref('currency')] : [])])}`;
  const span = sql.lit(`${VELOCITY_WINDOWS[f.window]} seconds`);
  const before = sql`${partition} ORDER BY at, id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING`;
  const expired = sql`${partition} ORDER BY at RANGE BETWEEN UNBOUNDED PRECEDING AND ${span}::interval PRECEDING`;
  const counted =
    f.metric === 'count'
      ? sql`count(*) OVER (${before}) - count(*) OVER (${expired})`
      : f.metric === 'sum'
        ? sql`coalesce(sum(amount) OVER (${before}), 0) - coalesce(sum(amount) OVER (${expired}), 0)`
        : sql`count(*) FILTER (WHERE declined) OVER (${before}) - count(*) FILTER (WHERE declined) OVER (${expired})`;
  return sql`CASE WHEN ${sql.ref(column)} IS NULL THEN 0 ELSE ${counted} END`;
}

/** The signals' column a key counts by */
function keyColumn(key: VelocityKey): string {
  const column = VELOCITY_KEY[key]?.column;
  if (!column) throw new Error(`velocity key ${key} has its own windows`);
  return column;
}

interface AttributeRead {
  name: string;
  type: string;
  /** The recorded value (text of a scalar, JSON of a group) as CEL reads it */
  value(recorded: unknown): unknown;
}

/**
 * The top-level attributes an expression names, each read from the recorded JSON on its own (a scalar as
 * text, a group as JSON): a backtest fetches only what the rule reads. Ints become bigint again.
 */
function attributesRead(point: DecisionPointName, expression: string): AttributeRead[] {
  const named = new Set(expression.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []);
  return Object.entries(celSchema(point)).flatMap(([name, type]): AttributeRead[] => {
    if (name === 'velocity' || !named.has(name)) return [];
    if (typeof type !== 'string') {
      const ints = intPaths(type as Record<string, unknown>);
      return [
        {
          name,
          type: 'object',
          value: (recorded) => withInts((recorded ?? {}) as Record<string, unknown>, ints),
        },
      ];
    }
    return [{ name, type, value: (recorded) => scalar(type, recorded) }];
  });
}

function scalar(type: string, recorded: unknown): unknown {
  if (recorded === null || recorded === undefined) return type === 'int' ? 0n : type === 'bool' ? false : '';
  if (type === 'int') return BigInt(recorded as string);
  if (type === 'bool') return recorded === 'true' || recorded === true;
  return recorded;
}

/** The attribute paths a group types as int */
function intPaths(schema: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(schema).flatMap(([name, type]) =>
    typeof type === 'string'
      ? type === 'int'
        ? [`${prefix}${name}`]
        : []
      : intPaths(type as Record<string, unknown>, `${prefix}${name}.`),
  );
}

/** A recorded group with its ints as bigint again, as CEL reads them. */
function withInts(group: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  for (const path of paths) {
    const parts = path.split('.');
    let holder: Record<string, unknown> | undefined = group;
    for (const part of parts.slice(0, -1)) holder = holder?.[part] as Record<string, unknown> | undefined;
    const last = parts.at(-1) as string;
    const value = holder?.[last];
    if (holder && (typeof value === 'number' || typeof value === 'string')) holder[last] = BigInt(value);
  }
  return group;
}
