// A backtest judged in the process (docs/risk.md, Backtests): for a rule with no exact SQL (rule-sql.ts), the
// history streams through a cursor, 5,000 rows a fetch, each evaluated by CEL — memory flat whatever the
// period's size. Only the attributes the rule names are read from the recorded JSON. The rows come in no
// order (the caller keeps the earliest matched for the sample), so that a rule reading no velocity streams
// straight from the table's scan, and the next fetch is asked for before this one's rows are judged: the
// database reads while the process judges, instead of sorting the period first while the process waits.
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { historySql } from './backtest-history.ts';
import {
  celSchema,
  type DecisionPointName,
  type RiskScope,
  type VelocityFeature,
} from './decision-points.ts';
import { compileExpression, type RiskList } from './rule-expression.ts';
import { featureColumn, recordedScalar } from './rule-sql.ts';
import { recordedGroupSql, recordedTextSql } from './signal-json.ts';

/** A signal of the history, judged */
export interface Judged {
  /** The signal's id (digits), after the time in the order of a sample */
  id: string;
  objectId: string;
  /** When, in microseconds since the epoch, exact in a double (a Date only for the sample: parsing two
   * million is seconds) */
  atUs: number;
  /** Minor units, as digits (a bigint only where it is summed: most are not matched) */
  amount: string;
  currency: string;
  /** Matched (true), not (false), or failed (an evaluation error: a division by zero) */
  verdict: boolean | null;
}

const FETCH_ROWS = 5_000;

/** The `velocity` attribute as CEL reads it: each feature read, as `velocity.<key>.<metric>_<window>` */
export function velocityRead(
  features: readonly VelocityFeature[],
  count: (f: VelocityFeature) => string | number,
): Record<string, Record<string, bigint>> {
  const velocity: Record<string, Record<string, bigint>> = {};
  for (const f of features) {
    const slot = velocity[f.key] ?? {};
    velocity[f.key] = slot;
    slot[`${f.metric}_${f.window}`] = BigInt(count(f));
  }
  return velocity;
}

/** Signals in the order a sample lists them: by time, then by id (digits: the shorter is the smaller) */
export const inTimeOrder = (a: Judged, b: Judged) =>
  a.atUs - b.atUs || a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The earliest `size` signals offered, whatever the order they come in: a backtest's sample */
export class Earliest {
  private readonly kept: Judged[] = [];
  constructor(private readonly size: number) {}

  offer(judged: Judged): void {
    const last = this.kept.at(-1);
    if (this.kept.length === this.size && (!last || inTimeOrder(judged, last) >= 0)) return;
    let at = this.kept.length;
    while (at > 0 && inTimeOrder(judged, this.kept[at - 1] as Judged) < 0) at--;
    this.kept.splice(at, 0, judged);
    if (this.kept.length > this.size) this.kept.pop();
  }

  get signals(): readonly Judged[] {
    return this.kept;
  }
}

/** A backtest judged in the process ran past its time */
export class TimedOut extends Error {}

export async function judgeInProcess(
  trx: Db,
  request: {
    tenant: RiskScope;
    point: DecisionPointName;
    from: Date;
    to: Date;
    expression: string;
    features: readonly VelocityFeature[];
    lists: ReadonlyMap<string, RiskList>;
  },
  /** When the stream is left (TimedOut), in ms since the epoch: checked before each fetch is judged */
  deadline: number,
  each: (judged: Judged) => void,
): Promise<void> {
  const rule = compileExpression(request.point, request.expression);
  const read = attributesRead(request.point, request.expression).map((a) => ({
    ...a,
    column: `a_${a.name}`,
  }));
  const history = historySql({
    ...request,
    columns: [
      { name: 'object_id', sql: sql`object_id` },
      { name: 'at_us', sql: sql`floor(extract(epoch FROM at) * 1000000)::float8` },
      ...read.map((a) => ({
        name: a.column,
        sql: a.type === 'object' ? recordedGroupSql(a.name) : recordedTextSql(a.name),
      })),
    ],
  });
  const columnOf = new Map(request.features.map((f) => [f, featureColumn(f)]));
  // Not `at` itself: the time travels as microseconds
  const returned = [
    'id',
    'object_id',
    'at_us',
    'amount',
    'currency',
    ...read.map((a) => a.column),
    ...request.features.map(featureColumn),
  ].map((name) => sql.ref(`h.${name}`));
  await sql`DECLARE risk_backtest NO SCROLL CURSOR FOR
    SELECT ${sql.join(returned)} FROM (${history}) h`.execute(trx);
  const fetch = () =>
    sql<Record<string, unknown>>`FETCH ${sql.lit(FETCH_ROWS)} FROM risk_backtest`.execute(trx);
  let next = fetch();
  for (;;) {
    const { rows } = await next;
    if (Date.now() > deadline) throw new TimedOut();
    const more = rows.length === FETCH_ROWS;
    if (more) next = fetch();
    for (const row of rows) {
      const attributes: Record<string, unknown> = {};
      for (const a of read) attributes[a.name] = a.value(row[a.column]);
      attributes.velocity = velocityRead(request.features, (f) => row[columnOf.get(f) as string] as string);
      let verdict: boolean | null;
      try {
        verdict = rule.evaluate(attributes, request.lists);
      } catch {
        verdict = null;
      }
      each({
        id: row.id as string,
        objectId: row.object_id as string,
        atUs: row.at_us as number,
        amount: row.amount as string,
        currency: row.currency as string,
        verdict,
      });
    }
    if (!more) break;
  }
  await sql`CLOSE risk_backtest`.execute(trx);
}

interface AttributeRead {
  name: string;
  type: string;
  /** The recorded value (text of a scalar, JSON of a group) as CEL reads it */
  value(recorded: unknown): unknown;
}

/**
 * The top-level attributes an expression names, each read from the recorded JSON on its own (a scalar as
 * text, a group as JSON). Ints become bigint again. A scalar missing reads as its type's zero; a group's
 * member missing is CEL's error (rule-sql.ts reads them alike).
 */
export function attributesRead(point: DecisionPointName, expression: string): AttributeRead[] {
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
    return [{ name, type, value: (recorded) => recordedScalar(type, recorded) }];
  });
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
