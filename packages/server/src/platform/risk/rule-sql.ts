// A rule as SQL, for backtests evaluated in the database (docs/risk.md, Backtests): a year of a tenant's
// signals is judged where it lies, and only the totals and a sample come back, instead of two million rows
// streamed through CEL in the process.
//
// The translation is exact or refused. CEL's errors are SQL's NULL: a missing or mistyped member of a
// recorded group, a division by zero, an int past 64 bits. SQL's three-valued AND, OR and NOT then agree
// with CEL's commutative ones (`false && error` is false, `true || error` true, an error otherwise), a
// comparison or an arithmetic of an error is an error, and a rule matches where its SQL IS TRUE and failed
// where it IS NULL. Strings are ordered as CEL orders them, by UTF-16 code units (cel_string_order).
//
// What has no exact SQL here — a regular expression (RE2), has(), a map or an index, a double or a uint, an
// IP list with CIDR ranges, a list named by anything but a literal — is hoisted when it can be: the
// smallest bool part around it that reads no group whole, and velocity only by features' full names or
// through a variable index (`email.matches("^a")`, `double(amount) > 1.5`, `double(velocity.card.count_24h)
// > 1.5`, `card[email] == "x"`: rule-reads.ts), becomes a
// column that CEL answers once per distinct value of what it reads in the period (backtest-hoisted.ts).
// Otherwise the rule is refused, and the backtest evaluates it in the process.
import { type RawBuilder, sql } from 'kysely';
import { celSchema, type DecisionPointName, featureName, type VelocityFeature } from './decision-points.ts';
import {
  checkExpression,
  featureOf,
  type SyntaxNode as Node,
  type RiskList,
  sourceOf,
  syntaxTree,
} from './rule-expression.ts';
import {
  type AttributePath,
  attributeColumn,
  type CelType,
  isCelType,
  type NamedIndex,
  type Reads,
  readsOf,
  Unsupported,
} from './rule-reads.ts';
import { recordedMemberSql, recordedTextSql } from './signal-json.ts';

export interface RuleSql {
  /** The rule's verdict: true (matched), false, or NULL (CEL would fail) */
  verdict: RawBuilder<boolean | null>;
  /** The recorded attributes it reads, each a column named by `attributeColumn` */
  attributes: AttributePath[];
  /** The velocity features it reads, each a column named by `featureColumn` */
  features: VelocityFeature[];
  /** Its parts CEL answers per distinct value (asked for with `hoist`), each a column named `column` */
  hoisted: HoistedPart[];
}

/** A bool part of a rule with no exact SQL, and what it reads: recorded attributes, velocity features */
export interface HoistedPart {
  column: string;
  /** The part as CEL, checked on its own */
  expression: string;
  attributes: AttributePath[];
  /** Counted by the history's windows: such a part is answered over the history kept (backtest.ts) */
  features: VelocityFeature[];
  /** The variable indexes inside it, with the members they were found to name (VariableIndex) */
  indexes: NamedIndex[];
}

/** The column a backtest's history names a velocity feature by */
export const featureColumn = (f: VelocityFeature) => `v_${f.key}_${f.metric}_${f.window}`;

const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };
const STRING_CALLS: Record<string, (s: RawBuilder<unknown>, t: RawBuilder<unknown>) => RawBuilder<unknown>> =
  {
    contains: (s, t) => sql`(strpos(${s}, ${t}) > 0)`,
    startsWith: (s, t) => sql`starts_with(${s}, ${t})`,
    endsWith: (s, t) => sql`(right(${s}, char_length(${t})) = ${t})`,
  };

/** The rule's SQL over a backtest's history columns, or undefined when it has no exact translation. */
export function ruleSql(
  point: DecisionPointName,
  expression: string,
  lists: ReadonlyMap<string, RiskList>,
  options: {
    hoist?: boolean;
    /** The members each variable index names, by its read as written (`card[email]`): the parts around them hoisted */
    indexed?: ReadonlyMap<string, ReadonlySet<string>>;
  } = {},
): RuleSql | undefined {
  const schema = celSchema(point);
  const attributes = new Map<string, AttributePath>();
  const features = new Map<string, VelocityFeature>();
  const hoisted: HoistedPart[] = [];

  const read = (path: AttributePath) => {
    const column = attributeColumn(path);
    attributes.set(column, path);
    return { sql: sql`${sql.ref(column)}`, type: path.type };
  };

  function translate(node: Node): { sql: RawBuilder<unknown>; type: CelType } {
    const before = hoisted.length;
    try {
      return exact(node);
    } catch (err) {
      if (!(err instanceof Unsupported) || !options.hoist) throw err;
      hoisted.length = before; // the parts hoisted inside it are inside this one
      return hoist(node);
    }
  }

  function hoist(node: Node): { sql: RawBuilder<unknown>; type: CelType } {
    let part: string;
    try {
      // The part as it was written: every node knows its place in the source
      part = sourceOf(point, node);
      checkExpression(point, part); // a bool
    } catch {
      throw new Unsupported();
    }
    const reads: Reads = { attributes: new Map(), velocity: new Map(), indexes: [] };
    readsOf(point, node, reads, options.indexed ?? new Map());
    for (const [name, f] of reads.velocity) features.set(name, f); // counted by the history
    const column = `x_${hoisted.length}`;
    hoisted.push({
      column,
      expression: part,
      attributes: [...reads.attributes.values()],
      features: [...reads.velocity.values()],
      indexes: reads.indexes,
    });
    return { sql: sql`${sql.ref(column)}`, type: 'bool' };
  }

  function exact(node: Node): { sql: RawBuilder<unknown>; type: CelType } {
    const args = Array.isArray(node.args) ? (node.args as unknown[]) : [node.args];
    const operand = (i: number, type?: CelType) => {
      const translated = translate(args[i] as Node);
      if (type && translated.type !== type) throw new Unsupported();
      return translated;
    };
    switch (node.op) {
      case 'value':
        return literal(node.args);
      case 'id': {
        const type = schema[node.args as string];
        if (typeof type !== 'string' || !isCelType(type)) throw new Unsupported();
        return read({ name: node.args as string, type });
      }
      case '[]':
      case '.': {
        const feature = featureOf(node);
        if (feature) {
          features.set(featureName(feature), feature);
          return { sql: sql`${sql.ref(featureColumn(feature))}`, type: 'int' };
        }
        if (node.op === '[]') throw new Unsupported(); // a group indexed: hoisted, where it can be
        const [holder, member] = args as [Node, string];
        if (holder.op !== 'id' || holder.args === 'velocity') throw new Unsupported();
        const group = schema[holder.args as string];
        const type = typeof group === 'object' ? (group as Record<string, unknown>)[member] : undefined;
        if (typeof type !== 'string' || !isCelType(type)) throw new Unsupported();
        return read({ name: holder.args as string, member, type });
      }
      case '&&':
      case '||': {
        const [a, b] = [operand(0, 'bool'), operand(1, 'bool')];
        return { sql: sql`(${a.sql} ${sql.raw(node.op === '&&' ? 'AND' : 'OR')} ${b.sql})`, type: 'bool' };
      }
      case '!_':
        return { sql: sql`(NOT ${operand(0, 'bool').sql})`, type: 'bool' };
      case '-_':
        return { sql: sql`cel_int64(- ${operand(0, 'int').sql})`, type: 'int' };
      case '==':
      case '!=': {
        const a = operand(0);
        const b = operand(1, a.type);
        return { sql: sql`(${a.sql} ${sql.raw(node.op === '==' ? '=' : '<>')} ${b.sql})`, type: 'bool' };
      }
      case '<':
      case '<=':
      case '>':
      case '>=': {
        const a = operand(0);
        const b = operand(1, a.type);
        if (a.type === 'int') return { sql: sql`(${a.sql} ${sql.raw(node.op)} ${b.sql})`, type: 'bool' };
        if (a.type !== 'string') throw new Unsupported();
        // CEL orders strings by UTF-16 code units: cel_string_order (migration 0075) maps them to a string
        // whose code points, compared bytewise in "C", are in that order
        return {
          sql: sql`(cel_string_order(${a.sql}) COLLATE "C" ${sql.raw(node.op)} cel_string_order(${b.sql}) COLLATE "C")`,
          type: 'bool',
        };
      }
      case '+': {
        const a = operand(0);
        const b = operand(1, a.type);
        if (a.type === 'string') return { sql: sql`(${a.sql} || ${b.sql})`, type: 'string' };
        if (a.type !== 'int') throw new Unsupported();
        return { sql: sql`cel_int64(${a.sql} + ${b.sql})`, type: 'int' };
      }
      case '-':
      case '*':
        return {
          sql: sql`cel_int64(${operand(0, 'int').sql} ${sql.raw(node.op)} ${operand(1, 'int').sql})`,
          type: 'int',
        };
      case '/':
      case '%': {
        // By zero an error; CEL's division truncates toward zero (div), its remainder takes the dividend's sign (mod)
        const [a, b] = [operand(0, 'int').sql, sql`nullif(${operand(1, 'int').sql}, 0)`];
        return { sql: node.op === '/' ? sql`cel_int64(div(${a}, ${b}))` : sql`mod(${a}, ${b})`, type: 'int' };
      }
      case '?:': {
        // The condition once: neither branch when it fails
        const condition = operand(0, 'bool').sql;
        const a = operand(1);
        const b = operand(2, a.type);
        return {
          sql: sql`(CASE ${condition} WHEN true THEN ${a.sql} WHEN false THEN ${b.sql} END)`,
          type: a.type,
        };
      }
      case 'in':
        return { sql: membership(translate(args[0] as Node), args[1] as Node), type: 'bool' };
      case 'call':
      case 'rcall':
        return call(node);
      default:
        throw new Unsupported();
    }
  }

  /** `x in [a, b]` and `x in list("name")`: an error stays an error, even against an empty list */
  function membership(value: { sql: RawBuilder<unknown>; type: CelType }, of: Node): RawBuilder<unknown> {
    let elements: RawBuilder<unknown>[];
    if (of.op === 'list') {
      elements = (of.args as Node[]).map((element) => {
        const e = translate(element);
        if (e.type !== value.type) throw new Unsupported();
        return e.sql;
      });
    } else {
      const [name, callArgs] = of.args as [string, Node[]];
      const [listName] = callArgs ?? [];
      if (of.op !== 'call' || name !== 'list' || listName?.op !== 'value' || value.type !== 'string')
        throw new Unsupported();
      const list = lists.get(listName.args as string);
      const exact = list ? list.exactValues() : [];
      if (!exact) throw new Unsupported();
      elements = exact.map((v) => sql`${v}::text`);
    }
    if (elements.length === 0) return sql`(CASE WHEN ${value.sql} IS NOT NULL THEN false END)`;
    return sql`(${value.sql} IN (${sql.join(elements)}))`;
  }

  function call(node: Node): { sql: RawBuilder<unknown>; type: CelType } {
    const [name, first, rest] = node.args as [string, Node | Node[], Node[] | undefined];
    // size(s) and s.size(); s.contains(t), s.startsWith(t), s.endsWith(t)
    const [target, callArgs] =
      node.op === 'call' ? [(first as Node[])[0], (first as Node[]).slice(1)] : [first as Node, rest ?? []];
    if (!target) throw new Unsupported();
    const s = translate(target);
    if (s.type !== 'string') throw new Unsupported();
    if (name === 'size' && callArgs.length === 0)
      return { sql: sql`char_length(${s.sql})::numeric`, type: 'int' };
    const make = STRING_CALLS[name];
    const [t] = callArgs;
    if (node.op !== 'rcall' || !make || !t || callArgs.length !== 1) throw new Unsupported();
    const other = translate(t);
    if (other.type !== 'string') throw new Unsupported();
    return { sql: make(s.sql, other.sql), type: 'bool' };
  }

  try {
    const verdict = translate(syntaxTree(point, expression) as Node);
    if (verdict.type !== 'bool') return undefined;
    return {
      verdict: verdict.sql as RawBuilder<boolean | null>,
      attributes: [...attributes.values()],
      features: [...features.values()],
      hoisted,
    };
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
}

function literal(value: unknown): { sql: RawBuilder<unknown>; type: CelType } {
  if (typeof value === 'bigint' && value >= INT64.min && value <= INT64.max)
    return { sql: sql`${value.toString()}::numeric`, type: 'int' };
  if (typeof value === 'string') return { sql: sql`${value}::text`, type: 'string' };
  if (typeof value === 'boolean') return { sql: sql.raw(value ? 'true' : 'false'), type: 'bool' };
  throw new Unsupported(); // a double, a uint, bytes, null, an int the parser let past 64 bits
}

/**
 * A recorded top-level scalar as CEL reads it, from its text in the signal's JSON (`attributes->>name`,
 * null when missing): a missing one is its type's zero, an int a bigint again.
 */
export function recordedScalar(type: string, recorded: unknown): unknown {
  if (recorded === null || recorded === undefined) return type === 'int' ? 0n : type === 'bool' ? false : '';
  if (type === 'int') return BigInt(recorded as string);
  if (type === 'bool') return recorded === 'true' || recorded === true;
  return recorded;
}

/**
 * A recorded attribute as a backtest reads it from the signal's JSON (`attributes`), as the process-side
 * evaluation does: a top-level scalar missing reads as its type's zero; a group's member missing, null or
 * of another JSON type is CEL's error (NULL). An int may be recorded as a JSON number or a string.
 */
export function recordedAttributeSql(a: AttributePath): RawBuilder<unknown> {
  if (!a.member) {
    const text = recordedTextSql(a.name);
    if (a.type === 'int') return sql`coalesce(${text}::numeric, 0)`;
    if (a.type === 'bool') return sql`coalesce(${text} = 'true', false)`;
    return sql`coalesce(${text}, '')`;
  }
  const value = recordedMemberSql(a.name, a.member);
  const text = sql`(${value} #>> '{}')`;
  if (a.type === 'int')
    return sql`(CASE WHEN jsonb_typeof(${value}) IN ('number', 'string') THEN ${text}::numeric END)`;
  if (a.type === 'bool') return sql`(CASE WHEN jsonb_typeof(${value}) = 'boolean' THEN ${text} = 'true' END)`;
  return sql`(CASE WHEN jsonb_typeof(${value}) = 'string' THEN ${text} END)`;
}
