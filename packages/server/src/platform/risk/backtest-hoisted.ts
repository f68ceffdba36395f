// The parts of a rule with no exact SQL, hoisted out of it (rule-sql.ts), answered for a backtest
// (docs/risk.md, Backtests): a part reads a few recorded scalars or groups' members (`email.matches("^a")`
// reads the email), so CEL answers it once per distinct value of them in the period — fifty thousand
// emails rather than two million charges — and the answers go back into the rule's SQL as a column: the
// values it is true for (or false, whichever are fewer) and those it fails on, each a hashed `= ANY`. The
// rest of the rule is judged where it lies, in parts like any other.
//
// The values are read in the judged query's own snapshot (the caller's repeatable-read transaction, or the
// parts' leader), so every value the query meets was answered.
import { type RawBuilder, sql } from 'kysely';
import { velocityRead } from './backtest-stream.ts';
import type { DecisionPointName, RiskScope, VelocityFeature } from './decision-points.ts';
import { compileValue, type RiskList } from './rule-expression.ts';
import { type AttributePath, type VariableIndex, variableIndexes } from './rule-reads.ts';
import { featureColumn, type HoistedPart, recordedScalar } from './rule-sql.ts';
import { signalsMatching } from './signal-index.ts';
import { recordedMemberSql, recordedTextSql } from './signal-json.ts';

/** More distinct values than this in the period: the rule is judged in the process instead */
export const MAX_DISTINCT_VALUES = 1_000_000;

/**
 * A hoisted part met more distinct values than the backtest allows (MAX_DISTINCT_VALUES), or a variable
 * index a member it had not been found to name (a signal written since it was read): the rule is judged
 * in the process
 */
export class NotHoisted extends Error {}

/** Runs a read in the judged query's snapshot (on one of its connections, when it is judged in parts) */
export type SnapshotRead = <R>(query: RawBuilder<R>) => Promise<R[]>;

/** A distinct value of what a part reads: its key, and each attribute's recorded text */
export interface DistinctValue {
  key: string | null;
  texts: (string | null)[];
}

/** The history a backtest keeps in a temporary table when a part reads velocity (backtest.ts) */
export const KEPT_HISTORY = 'risk_backtest_history';

/**
 * Where a part's inputs are read: the signals' recorded JSON (`attributes`), or the history kept, whose
 * rows hold each part's attributes' texts (`keptInputColumns`) and the velocity features counted.
 */
export type HoistedFrom = 'signals' | 'kept';

/** Each hoisted part's column, answered over the period's distinct values: throws NotHoisted */
export async function hoistedColumns(
  reads: readonly SnapshotRead[],
  r: {
    tenant: RiskScope;
    point: DecisionPointName;
    from: Date;
    to: Date;
    parts: readonly HoistedPart[];
    lists: ReadonlyMap<string, RiskList>;
    readFrom: HoistedFrom;
    maxDistinctValues: number;
  },
): Promise<{ name: string; sql: RawBuilder<unknown> }[]> {
  const columns: { name: string; sql: RawBuilder<unknown> }[] = [];
  for (const part of r.parts) {
    const query = distinctValuesSql(
      inputTexts(part, r.readFrom),
      r.readFrom === 'kept' ? sql.ref(KEPT_HISTORY) : signalsOf(r),
      r.maxDistinctValues + 1,
    );
    // Each connection's values (a slice's history kept on each: backtest.ts), as one set
    const values = new Map<string | null, DistinctValue>();
    for (const read of await Promise.all(reads.map((read) => read(query)))) {
      for (const value of read) values.set(value.key, value);
    }
    if (values.size > r.maxDistinctValues) throw new NotHoisted();
    columns.push({
      name: part.column,
      sql: hoistedColumn(r.point, part, r.lists, [...values.values()], r.readFrom),
    });
  }
  return columns;
}

/** A tenant's signals at a decision point over a period, as a FROM clause */
export const signalsOf = (r: { tenant: RiskScope; point: DecisionPointName; from: Date; to: Date }) =>
  sql`risk_signals WHERE ${signalsMatching('', r)} AND at >= ${r.from} AND at <= ${r.to}`;

/**
 * The members each variable index of a rule names in the period (rule-reads.ts): its index answered by CEL
 * once per distinct value of what it reads; an index inside another's first. Throws NotHoisted past the
 * distinct values allowed.
 */
export async function namesIndexed(
  read: SnapshotRead,
  r: {
    point: DecisionPointName;
    expression: string;
    /** What the signals are read from (signalsOf: a tenant's, at a point, over a period) */
    signals: RawBuilder<unknown>;
    lists: ReadonlyMap<string, RiskList>;
    maxDistinctValues: number;
  },
): Promise<Map<string, ReadonlySet<string>>> {
  const named = new Map<string, ReadonlySet<string>>();
  for (;;) {
    const indexes = variableIndexes(r.point, r.expression, named).filter((i) => !named.has(i.read));
    if (indexes.length === 0) return named;
    for (const index of indexes) named.set(index.read, await membersNamed(read, index, r));
  }
}

/** The members an index's values name over the signals */
async function membersNamed(
  read: SnapshotRead,
  index: VariableIndex,
  r: Parameters<typeof namesIndexed>[1],
): Promise<Set<string>> {
  const values = await read(
    distinctValuesSql(index.attributes.map(recordedText), r.signals, r.maxDistinctValues + 1),
  );
  if (values.length > r.maxDistinctValues) throw new NotHoisted();
  const value = compileValue(r.point, index.expression);
  const members = new Set<string>();
  for (const { texts } of values) {
    const name = answerOf(value, celReads(index.attributes, [], texts), r.lists);
    if (typeof name === 'string' && index.members.includes(name)) members.add(name);
  }
  return members;
}

/** The kept history's columns for the parts' attributes, beside the features it counts */
export const keptInputColumns = (parts: readonly HoistedPart[]) =>
  parts.flatMap((part) =>
    part.attributes.map((a, j) => ({ name: `${part.column}_${j}`, sql: recordedText(a) })),
  );

/** A part's inputs as texts: its attributes', then its velocity features' (kept only) */
export function inputTexts(part: HoistedPart, from: HoistedFrom): RawBuilder<unknown>[] {
  if (from === 'signals') return part.attributes.map(recordedText);
  return [
    ...part.attributes.map((_, j) => sql`${sql.ref(`${part.column}_${j}`)}`),
    ...part.features.map((f) => sql`(${sql.ref(featureColumn(f))})::text`),
  ];
}

/** The distinct values of a part's inputs over `from` (a FROM clause its texts read from) */
export function distinctValuesSql(
  texts: readonly RawBuilder<unknown>[],
  from: RawBuilder<unknown>,
  limit: number,
): RawBuilder<DistinctValue> {
  if (texts.length === 0) return sql<DistinctValue>`SELECT NULL AS key, '{}'::text[] AS texts LIMIT 0`;
  const grouped = texts.map((_, i) => sql.ref(`g.v${i}`));
  return sql<DistinctValue>`SELECT ${keyOf(grouped)} AS key, ARRAY[${sql.join(grouped)}]::text[] AS texts
    FROM (SELECT ${sql.join(texts.map((t, i) => sql`${t} AS ${sql.ref(`v${i}`)}`))} FROM ${from}
      GROUP BY ${sql.join(texts.map((_, i) => sql.lit(i + 1)))} LIMIT ${limit}) g`;
}

/**
 * A hoisted part as SQL over the signal's recorded JSON, given its answers for the values it may meet:
 * true, false, or NULL where CEL fails.
 */
export function hoistedColumn(
  point: DecisionPointName,
  part: HoistedPart,
  lists: ReadonlyMap<string, RiskList>,
  values: readonly DistinctValue[],
  from: HoistedFrom,
): RawBuilder<boolean | null> {
  const value = compileValue(point, part.expression);
  const indexes = part.indexes.map((index) => ({ ...index, value: compileValue(point, index.expression) }));
  const answer = (texts: readonly (string | null)[]): boolean | null => {
    const reads = celReads(part.attributes, part.features, texts);
    // A variable index naming a member not read for it would read it as missing
    for (const index of indexes) {
      const name = answerOf(index.value, reads, lists);
      if (typeof name === 'string' && index.members.includes(name) && !index.named.has(name))
        throw new NotHoisted();
    }
    const v = answerOf(value, reads, lists);
    return typeof v === 'boolean' ? v : null;
  };
  const inputs = inputTexts(part, from);
  if (inputs.length === 0) return literal(answer([]));
  // A key is null only for one input not recorded
  const missing = inputs.length === 1 ? literal(answer([null])) : literal(null);
  const answered = { true: [] as string[], false: [] as string[], failed: [] as string[] };
  const met = new Set<boolean | null>();
  for (const { key, texts } of values) {
    const a = key === null ? answer([null]) : answer(texts);
    met.add(a);
    if (key !== null) answered[a === null ? 'failed' : a ? 'true' : 'false'].push(key);
  }
  // One answer for every value met (an index that names no member fails on all): the answer itself
  if (met.size === 1) return literal([...met][0] ?? null);
  const fewer = answered.true.length <= answered.false.length;
  const key = keyOf(inputs);
  return sql<boolean | null>`(CASE WHEN ${key} IS NULL THEN ${missing}
    WHEN ${key} = ANY(${fewer ? answered.true : answered.false}::text[]) THEN ${sql.raw(fewer ? 'true' : 'false')}
    ${answered.failed.length > 0 ? sql`WHEN ${key} = ANY(${answered.failed}::text[]) THEN NULL` : sql``}
    ELSE ${sql.raw(fewer ? 'false' : 'true')} END)`;
}

/** A recorded attribute's text: a scalar's (`->>`), or a group member's JSON (null when missing) */
const recordedText = (a: AttributePath) =>
  a.member ? sql`(${recordedMemberSql(a.name, a.member)}::text)` : recordedTextSql(a.name);

/**
 * The texts of what a part reads as one key: an attribute's own, or theirs as a row's text (never null;
 * a row's output quotes what needs it and writes a null as nothing, an empty string as "").
 */
const keyOf = (texts: readonly RawBuilder<unknown>[]) =>
  texts.length === 1 ? (texts[0] as RawBuilder<unknown>) : sql`(ROW(${sql.join(texts)})::text)`;

/** A compiled expression's value, or undefined where CEL fails */
function answerOf(
  value: ReturnType<typeof compileValue>,
  reads: Record<string, unknown>,
  lists: ReadonlyMap<string, RiskList>,
): unknown {
  try {
    return value(reads, lists);
  } catch {
    return undefined;
  }
}

/**
 * The attributes as the process-side evaluation hands them to CEL (backtest-stream.ts), from their recorded
 * texts (the attributes', then the features'): a scalar from its text; a group as an object holding the
 * members recorded (a missing member is CEL's error), an int member a bigint.
 */
function celReads(
  attributes: readonly AttributePath[],
  features: readonly VelocityFeature[],
  texts: readonly (string | null)[],
): Record<string, unknown> {
  const read: Record<string, unknown> = {};
  if (features.length > 0) {
    const first = attributes.length;
    read.velocity = velocityRead(features, (f) => texts[first + features.indexOf(f)] ?? '0');
  }
  attributes.forEach((a, i) => {
    const recorded = texts[i] ?? null;
    if (!a.member) {
      read[a.name] = recordedScalar(a.type, recorded);
      return;
    }
    const group = (read[a.name] ?? {}) as Record<string, unknown>;
    read[a.name] = group;
    if (recorded === null) return;
    const member: unknown = JSON.parse(recorded);
    const isInt = a.type === 'int' && (typeof member === 'number' || typeof member === 'string');
    group[a.member] = isInt ? BigInt(member) : member;
  });
  return read;
}

const literal = (value: boolean | null) =>
  sql<boolean | null>`${sql.raw(value === null ? 'NULL::boolean' : String(value))}`;
