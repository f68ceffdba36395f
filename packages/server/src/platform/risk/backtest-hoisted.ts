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
import type { DecisionPointName, RiskScope } from './decision-points.ts';
import { compileValue, type RiskList } from './rule-expression.ts';
import { type AttributePath, type HoistedPart, recordedScalar } from './rule-sql.ts';

/** More distinct values than this in the period: the rule is judged in the process instead */
export const MAX_DISTINCT_VALUES = 1_000_000;

/** A hoisted part met more distinct values than MAX_DISTINCT_VALUES */
export class TooManyValues extends Error {}

/** Runs a read in the judged query's snapshot */
export type SnapshotRead = <R>(query: RawBuilder<R>) => Promise<R[]>;

/** A distinct value of what a part reads: its key, and each attribute's recorded text */
export interface DistinctValue {
  key: string | null;
  texts: (string | null)[];
}

/** Each hoisted part's column, answered over the period's distinct values: throws TooManyValues */
export async function hoistedColumns(
  read: SnapshotRead,
  r: {
    tenant: RiskScope;
    point: DecisionPointName;
    from: Date;
    to: Date;
    parts: readonly HoistedPart[];
    lists: ReadonlyMap<string, RiskList>;
  },
): Promise<{ name: string; sql: RawBuilder<unknown> }[]> {
  const columns: { name: string; sql: RawBuilder<unknown> }[] = [];
  for (const part of r.parts) {
    const values = await read(
      distinctValuesSql(
        part.attributes,
        sql`risk_signals WHERE tenant = ${r.tenant} AND decision_point = ${r.point}
          AND at >= ${r.from} AND at <= ${r.to}`,
        MAX_DISTINCT_VALUES + 1,
      ),
    );
    if (values.length > MAX_DISTINCT_VALUES) throw new TooManyValues();
    columns.push({ name: part.column, sql: hoistedColumn(r.point, part, r.lists, values) });
  }
  return columns;
}

/** The distinct values of what a part reads over `from` (a FROM clause whose rows hold `attributes`) */
export function distinctValuesSql(
  attributes: readonly AttributePath[],
  from: RawBuilder<unknown>,
  limit: number,
): RawBuilder<DistinctValue> {
  if (attributes.length === 0) return sql<DistinctValue>`SELECT NULL AS key, '{}'::text[] AS texts LIMIT 0`;
  const texts = attributes.map(recordedText);
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
): RawBuilder<boolean | null> {
  const value = compileValue(point, part.expression);
  const { attributes } = part;
  const answer = (texts: readonly (string | null)[]): boolean | null => {
    try {
      const v = value(asCelReads(attributes, texts), lists);
      return typeof v === 'boolean' ? v : null;
    } catch {
      return null;
    }
  };
  const missing = literal(answer(attributes.map(() => null)));
  if (attributes.length === 0) return missing;
  const answered = { true: [] as string[], false: [] as string[], failed: [] as string[] };
  for (const { key, texts } of values) {
    if (key === null) continue; // one attribute, not recorded: `missing`
    const a = answer(texts);
    answered[a === null ? 'failed' : a ? 'true' : 'false'].push(key);
  }
  const fewer = answered.true.length <= answered.false.length;
  const key = keyOf(attributes.map(recordedText));
  return sql<boolean | null>`(CASE WHEN ${key} IS NULL THEN ${missing}
    WHEN ${key} = ANY(${fewer ? answered.true : answered.false}::text[]) THEN ${sql.raw(fewer ? 'true' : 'false')}
    ${answered.failed.length > 0 ? sql`WHEN ${key} = ANY(${answered.failed}::text[]) THEN NULL` : sql``}
    ELSE ${sql.raw(fewer ? 'false' : 'true')} END)`;
}

/** A recorded attribute's text: a scalar's (`->>`), or a group member's JSON (null when missing) */
const recordedText = (a: AttributePath) =>
  a.member ? sql`((attributes->${a.name}->${a.member})::text)` : sql`(attributes->>${a.name})`;

/**
 * The texts of what a part reads as one key: an attribute's own, or theirs as a row's text (never null;
 * a row's output quotes what needs it and writes a null as nothing, an empty string as "").
 */
const keyOf = (texts: readonly RawBuilder<unknown>[]) =>
  texts.length === 1 ? (texts[0] as RawBuilder<unknown>) : sql`(ROW(${sql.join(texts)})::text)`;

/**
 * The attributes as the process-side evaluation hands them to CEL (backtest-stream.ts), from their recorded
 * texts: a scalar from its text; a group as an object holding the members recorded (a missing member is
 * CEL's error), an int member a bigint.
 */
function asCelReads(
  attributes: readonly AttributePath[],
  texts: readonly (string | null)[],
): Record<string, unknown> {
  const read: Record<string, unknown> = {};
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
