// Backtests (docs/risk.md, Backtests): a draft rule evaluated over a tenant's real history at a decision
// point — the attributes as each signal recorded them, and velocity as it stood then (backtest-history.ts).
// A rule with an exact SQL translation (rule-sql.ts) is judged in the database, and only totals and a
// sample come back; any other is streamed through the process (backtest-stream.ts), never loaded whole.
// Disputes are the labels: how many of the charges the rule would have caught were later disputed, and
// disputed as fraud, against all of the period's.
import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { DomainError } from '../errors/domain-error.ts';
import { type HistoryRequest, historySql } from './backtest-history.ts';
import {
  hoistedColumns,
  KEPT_HISTORY,
  keptInputColumns,
  MAX_DISTINCT_VALUES,
  NotHoisted,
  namesIndexed,
  type SnapshotRead,
  signalsOf,
} from './backtest-hoisted.ts';
import { type BacktestParts, type PartRead, SORT_MEMORY, slicesOf } from './backtest-parts.ts';
import {
  type BacktestResult,
  emptyResult,
  type JudgedRow,
  mergedParts,
  resultOf,
} from './backtest-result.ts';
import { Earliest, inTimeOrder, type Judged, judgeInProcess, TimedOut } from './backtest-stream.ts';
import {
  type DecisionPointName,
  isWindowFeature,
  type RiskScope,
  VELOCITY_WINDOWS,
  type VelocityFeature,
} from './decision-points.ts';
import type { RiskLists } from './risk-lists.ts';
import { checkExpression, ExpressionError } from './rule-expression.ts';
import { attributeColumn, variableIndexes } from './rule-reads.ts';
import { type RuleSql, recordedAttributeSql, ruleSql } from './rule-sql.ts';

/** The disputed objects of a tenant since a time: 'fraud' or 'other', by object id (an API's disputes). */
export type DisputeLabels = (
  db: Db,
  tenant: RiskScope,
  since: Date,
) => Promise<Map<string, 'fraud' | 'other'>>;

export type { BacktestResult } from './backtest-result.ts';

export interface BacktestRequest {
  tenant: RiskScope;
  decisionPoint: DecisionPointName;
  expression: string;
  from: Date;
  to: Date;
  sampleSize: number;
}

/** A period longer than this is refused (the signals' retention is 400 days by default) */
const MAX_DAYS = 400;

export interface BacktestDeps {
  lists: RiskLists;
  labels: DisputeLabels | undefined;
  /** Connections to judge a long history on in parts (backtest-parts.ts); without it, one part */
  parts?: BacktestParts;
  /** How long one backtest may run before it is stopped (DEFAULT_TIMEOUT_MS without it) */
  timeoutMs?: number;
}

/** How long a backtest may run, where the operator has not said (TESSERA_BACKTEST_TIMEOUT_SECONDS) */
const DEFAULT_TIMEOUT_MS = 120_000;

/** How a backtest is judged, where tests choose: the matched ids kept, in the process, in so many slices, at
 * what number of a hoisted part's distinct values the process takes over (MAX_DISTINCT_VALUES), and in
 * how long (the deps' timeout) */
export interface BacktestOptions {
  keepIds?: boolean;
  inProcess?: boolean;
  slices?: number;
  maxDistinctValues?: number;
  timeoutMs?: number;
}

export async function backtest(
  db: Db,
  deps: BacktestDeps,
  request: BacktestRequest,
  options: BacktestOptions = {},
): Promise<BacktestResult> {
  const { decisionPoint: point, from, to } = request;
  if (from >= to) throw new DomainError('validation_failed', 'from must be before to', { field: 'from' });
  if (to.getTime() - from.getTime() > MAX_DAYS * 86_400_000) {
    throw new DomainError('validation_failed', `a backtest covers at most ${MAX_DAYS} days`, { field: 'to' });
  }
  let features: VelocityFeature[];
  try {
    features = checkExpression(point, request.expression).velocity;
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
  // A backtest stopped past its time (a rule read so that every velocity feature is counted, judged in the
  // process over a long period, runs for minutes): its statements cancelled, its stream left
  const timeoutMs = options.timeoutMs ?? deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  try {
    return await judgedBacktest(db, deps, request, options, { features, deadline: Date.now() + timeoutMs });
  } catch (err) {
    if (!(err instanceof TimedOut) && (err as { code?: unknown }).code !== QUERY_CANCELED) throw err;
    const seconds = Math.round(timeoutMs / 1000);
    throw new DomainError(
      'limit_exceeded',
      `the backtest ran past ${seconds} s: backtest a shorter period, or read velocity by the features' full names`,
      { field: 'to', details: { timeoutSeconds: seconds } },
    );
  }
}

/** Postgres's code for a statement cancelled by its statement_timeout */
const QUERY_CANCELED = '57014';

/** A backtest judged, from the tenant's lists and labels on (backtest() checked the request) */
async function judgedBacktest(
  db: Db,
  deps: BacktestDeps,
  request: BacktestRequest,
  options: BacktestOptions,
  r: { features: VelocityFeature[]; deadline: number },
): Promise<BacktestResult> {
  const { tenant, decisionPoint: point, from, to } = request;
  const { features, deadline } = r;
  const timeLeft = () => Math.max(1, deadline - Date.now());
  const [riskLists, disputes] = await Promise.all([
    deps.lists.listsFor(db, tenant),
    deps.labels ? deps.labels(db, tenant, from) : Promise.resolve(new Map<string, 'fraud' | 'other'>()),
  ]);
  const maxDistinctValues = options.maxDistinctValues ?? MAX_DISTINCT_VALUES;
  // False once a part has met too many distinct values (or an index a member unread): judged in the
  // process, not hoisted again
  let hoistable = !options.inProcess;
  const notHoisted = (err: unknown): undefined => {
    if (!(err instanceof NotHoisted)) throw err;
    hoistable = false;
    return undefined;
  };
  // A variable index (`card[email]`) is hoisted reading the members its values name in the period
  const indexed =
    !hoistable || variableIndexes(point, request.expression).length === 0
      ? new Map<string, ReadonlySet<string>>()
      : await db
          .transaction()
          .execute(async (trx) => {
            // Under the backtest's time too
            await sql`SET LOCAL statement_timeout = ${sql.lit(timeLeft())}`.execute(trx);
            return namesIndexed(async (query) => (await query.execute(trx)).rows, {
              point,
              expression: request.expression,
              signals: signalsOf({ tenant, point, from, to }),
              lists: riskLists,
              maxDistinctValues,
            });
          })
          .catch(notHoisted);
  const translated =
    hoistable && indexed
      ? ruleSql(point, request.expression, riskLists, { hoist: true, indexed })
      : undefined;
  const judged = translated && { tenant, point, rule: translated, disputes, sampleSize: request.sampleSize };
  // The rule's hoisted parts answered, in the snapshot the judging reads (backtest-hoisted.ts); a part that
  // reads velocity over the history kept in a temporary table, counted once
  const keep = translated?.hoisted.some((part) => part.features.length > 0) ?? false;
  const hoisting = (reads: readonly SnapshotRead[]) =>
    hoistedColumns(reads, {
      tenant,
      point,
      from,
      to,
      parts: translated?.hoisted ?? [],
      lists: riskLists,
      readFrom: keep ? 'kept' : 'signals',
      maxDistinctValues,
    });
  if (judged && deps.parts && translated.features.length > 0) {
    // A rule that reads velocity costs the windows' sorts: a long period is judged in slices at once
    const longest = Math.max(
      0,
      ...translated.features.filter(isWindowFeature).map((f) => VELOCITY_WINDOWS[f.window]),
    );
    const slices = slicesOf(from, to, longest, deps.parts.parts, options.slices);
    // Each slice on its own connection: its history kept there first where a hoisted part reads velocity,
    // the parts' distinct values answered (over every slice's history kept, or by the leader), then judged
    const inParts = async (parts: readonly PartRead[]) => {
      const reads = parts.map(
        (part): SnapshotRead =>
          (query) =>
            part(query.compile(db)),
      );
      const sliced = slices.map((slice, i) => ({ slice, read: reads[i] as SnapshotRead }));
      if (keep)
        await Promise.all(sliced.map(({ slice, read }) => read(keptHistory({ ...judged, ...slice }))));
      const hoisted = await hoisting(keep ? reads : reads.slice(0, 1));
      return Promise.all(
        sliced.map(async ({ slice, read }) => {
          const rows = await read(judgedInDatabase({ ...judged, ...slice, hoisted, kept: keep }, options));
          return resultOf(rows[0], options);
        }),
      );
    };
    const parts =
      slices.length > 1
        ? await deps.parts.run(slices.length, inParts, timeLeft()).catch(notHoisted)
        : undefined;
    // Undefined too when another backtest holds the parts or the pool has no room: judged in one part
    if (parts) return mergedParts(parts, request.sampleSize);
  }
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      await sql`SET LOCAL work_mem = ${sql.lit(SORT_MEMORY)}`.execute(trx);
      await sql`SET LOCAL statement_timeout = ${sql.lit(timeLeft())}`.execute(trx);
      // Not where the parts' hoisting failed: the rule goes to the process then
      if (judged && keep && hoistable) await keptHistory({ ...judged, from, to }).execute(trx);
      const hoisted =
        judged &&
        hoistable &&
        (await hoisting([async (query) => (await query.execute(trx)).rows]).catch(notHoisted));
      if (judged && hoisted) {
        const { rows } = await judgedInDatabase(
          { ...judged, from, to, hoisted, kept: keep },
          options,
        ).execute(trx);
        return resultOf(rows[0], options);
      }
      return judgedInTheProcess(
        trx,
        { tenant, point, from, to, expression: request.expression, features, lists: riskLists },
        { disputes, sampleSize: request.sampleSize, deadline },
        options,
      );
    });
}

/**
 * The history a rule with a hoisted part that reads velocity is judged over, kept in a temporary table
 * for the connection's transaction (no WAL): its windows counted once, then its distinct values read and
 * the rule judged over it (backtest-hoisted.ts)
 */
function keptHistory(
  r: Omit<HistoryRequest, 'features' | 'columns'> & Parameters<typeof historyColumns>[0],
): RawBuilder<unknown> {
  const history = historySql({
    ...r,
    features: r.rule.features,
    columns: [...historyColumns(r), ...keptInputColumns(r.rule.hoisted)],
  });
  return sql`CREATE TEMPORARY TABLE ${sql.ref(KEPT_HISTORY)} ON COMMIT DROP AS ${history}`;
}

/** The history streamed through CEL (backtest-stream.ts), into the totals and the earliest matched */
async function judgedInTheProcess(
  trx: Db,
  history: Parameters<typeof judgeInProcess>[1],
  r: { disputes: ReadonlyMap<string, 'fraud' | 'other'>; sampleSize: number; deadline: number },
  options: { keepIds?: boolean },
): Promise<BacktestResult> {
  const result = emptyResult('process', options);
  const sample = new Earliest(r.sampleSize);
  const matched: Judged[] = [];
  await judgeInProcess(trx, history, r.deadline, (signal) => {
    count(result, signal, r.disputes.get(signal.objectId));
    if (signal.verdict !== true) return;
    sample.offer(signal);
    if (options.keepIds) matched.push(signal);
  });
  result.sample = sample.signals.map(({ objectId, atUs, amount, currency }) => ({
    objectId,
    at: new Date(Math.floor(atUs / 1000)),
    amount: BigInt(amount),
    currency,
  }));
  if (options.keepIds) result.matchedIds = matched.sort(inTimeOrder).map((j) => j.objectId);
  return result;
}

/** One signal judged in the process, into the totals */
function count(result: BacktestResult, judged: Judged, label: 'fraud' | 'other' | undefined): void {
  result.evaluated++;
  if (label) result.disputed.all++;
  if (label === 'fraud') result.fraud.all++;
  if (judged.verdict === null) result.failed++;
  if (judged.verdict !== true) return;
  result.matched++;
  result.matchedAmounts[judged.currency] =
    (result.matchedAmounts[judged.currency] ?? 0n) + BigInt(judged.amount);
  if (label) result.disputed.matched++;
  if (label === 'fraud') result.fraud.matched++;
}

/**
 * The history judged where it lies: the rule's SQL beside the velocity's window functions, and only the
 * totals by currency (the disputes joined as labels), the first matched and (for tests) the matched ids
 * come back. A rule that reads velocity has its judged rows kept once (MATERIALIZED) for the three reads:
 * its windows are the cost. One that does not is read three times: its first matched are then found by
 * the (tenant, point, time) index, stopping at the sample's size.
 */
function judgedInDatabase(
  r: {
    tenant: RiskScope;
    point: DecisionPointName;
    from: Date;
    to: Date;
    toExclusive?: boolean;
    rule: RuleSql;
    /** The rule's hoisted parts, answered (backtest-hoisted.ts) */
    hoisted: readonly { name: string; sql: RawBuilder<unknown> }[];
    /** The history is kept in KEPT_HISTORY, counted already */
    kept?: boolean;
    disputes: ReadonlyMap<string, 'fraud' | 'other'>;
    sampleSize: number;
  },
  options: { keepIds?: boolean },
): RawBuilder<JudgedRow> {
  const history = r.kept
    ? sql`SELECT *${sql.join(
        r.hoisted.map((h) => sql`, ${h.sql} AS ${sql.ref(h.name)}`),
        sql``,
      )} FROM ${sql.ref(KEPT_HISTORY)}`
    : historySql({ ...r, features: r.rule.features, columns: [...historyColumns(r), ...r.hoisted] });
  const judgedSql = sql`SELECT h.id, h.at, h.amount, h.currency, h.kind, ${r.rule.verdict} AS verdict
    FROM (${history}) h`;
  const kept = r.rule.features.length > 0 && !r.kept;
  const judged = kept ? sql`judged` : sql`(${judgedSql})`;
  const objectId = sql`(SELECT object_id FROM risk_signals s WHERE s.id = j.id)`;
  const reads = sql`SELECT
      (SELECT json_agg(t) FROM (
        SELECT currency, count(*) AS evaluated, count(*) FILTER (WHERE verdict) AS matched,
          count(*) FILTER (WHERE verdict IS NULL) AS failed,
          coalesce(sum(amount) FILTER (WHERE verdict), 0)::text AS matched_amount,
          count(kind) AS disputed, count(kind) FILTER (WHERE verdict) AS disputed_matched,
          count(*) FILTER (WHERE kind = 'fraud') AS fraud,
          count(*) FILTER (WHERE kind = 'fraud' AND verdict) AS fraud_matched
        FROM ${judged} j GROUP BY currency) t) AS totals,
      (SELECT json_agg(s ORDER BY s.at, s.id) FROM (
        SELECT id, ${objectId} AS object_id, at, amount::text AS amount, currency FROM (
          SELECT * FROM ${judged} j WHERE verdict ORDER BY at, id LIMIT ${r.sampleSize}) j) s) AS sample,
      ${options.keepIds ? sql`(SELECT array_agg(${objectId} ORDER BY j.at, j.id) FROM ${judged} j WHERE verdict)` : sql`NULL`} AS matched_ids`;
  return sql<JudgedRow>`${kept ? sql`WITH judged AS MATERIALIZED (${judgedSql}) ` : sql``}${reads}`;
}

/** What a judged history carries besides its velocity: the attributes the rule reads, and each charge's label */
function historyColumns(r: {
  rule: RuleSql;
  disputes: ReadonlyMap<string, 'fraud' | 'other'>;
}): { name: string; sql: RawBuilder<unknown> }[] {
  // A charge's label is looked up as its row is read (a hashed ANY), so the object ids need not travel
  // through the windows' sorts: the sample's are read back by id
  const labelled = (kind: 'fraud' | 'other') =>
    [...r.disputes].filter(([, label]) => label === kind).map(([objectId]) => objectId);
  return [
    ...r.rule.attributes.map((a) => ({ name: attributeColumn(a), sql: recordedAttributeSql(a) })),
    {
      name: 'kind',
      sql:
        r.disputes.size > 0
          ? sql`CASE WHEN object_id = ANY(${labelled('fraud')}::text[]) THEN 'fraud'
              WHEN object_id = ANY(${labelled('other')}::text[]) THEN 'other' END`
          : sql`NULL::text`,
    },
  ];
}
