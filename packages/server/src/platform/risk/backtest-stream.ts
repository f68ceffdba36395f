// A backtest judged in the process (docs/risk.md, Backtests): for a rule with no exact SQL (rule-sql.ts), the
// history streams through a cursor in time order, 5,000 rows a fetch, each evaluated by CEL — memory flat
// whatever the period's size. Only the attributes the rule names are read from the recorded JSON.
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
import { featureColumn } from './rule-sql.ts';

/** A signal of the history, judged */
export interface Judged {
  objectId: string;
  at: Date;
  amount: bigint;
  currency: string;
  /** Matched (true), not (false), or failed (an evaluation error: a division by zero) */
  verdict: boolean | null;
}

const FETCH_ROWS = 5_000;

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
  each: (judged: Judged) => void,
): Promise<void> {
  const rule = compileExpression(request.point, request.expression);
  const read = attributesRead(request.point, request.expression);
  const history = historySql({
    ...request,
    columns: [
      { name: 'object_id', sql: sql`object_id` },
      ...read.map((a) => ({
        name: `a_${a.name}`,
        sql: sql`attributes${sql.raw(a.type === 'object' ? '->' : '->>')}${a.name}`,
      })),
    ],
  });
  await sql`DECLARE risk_backtest NO SCROLL CURSOR FOR SELECT * FROM (${history}) h ORDER BY at, id`.execute(
    trx,
  );
  for (;;) {
    const { rows } = await sql<
      Record<string, unknown>
    >`FETCH ${sql.lit(FETCH_ROWS)} FROM risk_backtest`.execute(trx);
    for (const row of rows) {
      const attributes: Record<string, unknown> = {};
      for (const a of read) attributes[a.name] = a.value(row[`a_${a.name}`]);
      const velocity: Record<string, Record<string, bigint>> = {};
      for (const f of request.features) {
        const slot = velocity[f.key] ?? {};
        velocity[f.key] = slot;
        slot[`${f.metric}_${f.window}`] = BigInt(row[featureColumn(f)] as string | number);
      }
      attributes.velocity = velocity;
      let verdict: boolean | null;
      try {
        verdict = rule.evaluate(attributes, request.lists);
      } catch {
        verdict = null;
      }
      each({
        objectId: row.object_id as string,
        at: row.at as Date,
        amount: BigInt(row.amount as string),
        currency: row.currency as string,
        verdict,
      });
    }
    if (rows.length < FETCH_ROWS) break;
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
