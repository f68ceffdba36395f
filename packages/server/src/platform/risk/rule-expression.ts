// A rule's expression in CEL (docs/risk.md, Rules), with @marcbachmann/cel-js: type-checked against its
// decision point's attributes when saved (a wrong name or type is refused with its position), compiled
// once per change, then evaluated with no I/O of its own. `list('name')` reads one of the scope's block or
// allow lists, which the engine hands in with the attributes: the function itself looks nothing up.
import { BlockList, isIP } from 'node:net';
import {
  type ASTNode,
  Environment,
  type ObjectSchema,
  type ParseResult,
  serialize,
} from '@marcbachmann/cel-js';
import {
  celSchema,
  type DecisionPointName,
  featureName,
  type VelocityFeature,
  velocityFeatures,
} from './decision-points.ts';

/** A block or allow list as a rule sees it: exact values, and for IP lists CIDR ranges too. */
export class RiskList {
  private readonly ranges: BlockList | undefined;
  constructor(
    readonly name: string,
    private readonly values: ReadonlySet<string>,
    cidrs: readonly string[] = [],
  ) {
    if (cidrs.length > 0) {
      this.ranges = new BlockList();
      for (const cidr of cidrs) {
        const [address = '', prefix = ''] = cidr.split('/');
        const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
        this.ranges.addSubnet(address, Number(prefix), family);
      }
    }
  }
  has(value: string): boolean {
    if (this.values.has(value)) return true;
    const family = isIP(value);
    return (
      this.ranges !== undefined && family !== 0 && this.ranges.check(value, family === 6 ? 'ipv6' : 'ipv4')
    );
  }
  /** Its values when it holds no range (a backtest in the database compares with them: rule-sql.ts) */
  exactValues(): readonly string[] | undefined {
    return this.ranges ? undefined : [...this.values];
  }
  static readonly empty = new RiskList('', new Set());
}

/** The lists of the scope being evaluated: set by evaluate() around one synchronous evaluation. */
let listsInScope: ReadonlyMap<string, RiskList> | undefined;

const environments = new Map<DecisionPointName, Environment>();

function environmentOf(point: DecisionPointName): Environment {
  let env = environments.get(point);
  if (!env) {
    env = new Environment({ limits: { maxAstNodes: 2_000, maxDepth: 50 } })
      .registerType('RiskList', RiskList)
      .registerFunction(
        'list(string): RiskList',
        (name: string) => listsInScope?.get(name) ?? RiskList.empty,
        {
          description: 'one of the scope’s block or allow lists, by name',
        },
      )
      .registerOperator('string in RiskList', (value: string, list: RiskList) => list.has(value));
    for (const [name, type] of Object.entries(celSchema(point))) {
      env =
        typeof type === 'string'
          ? env.registerVariable(name, type)
          : env.registerVariable({ name, schema: type as ObjectSchema });
    }
    environments.set(point, env);
  }
  return env;
}

/** Why an expression was refused: the message and where (0-based offset, 1-based line and column). */
export class ExpressionError extends Error {
  constructor(
    message: string,
    readonly position: number,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
  }
}

export interface CheckedExpression {
  /** The velocity features it reads: only these are counted for it */
  velocity: VelocityFeature[];
  /** The lists it names */
  lists: string[];
}

const ALL_FEATURES = velocityFeatures();
/** `velocity.<key>.<feature>`, or the feature indexed by a literal: `velocity.<key>["<feature>"]` */
const FEATURE_REFERENCE =
  /\bvelocity\.([a-z]+)(?:\.([a-z_]+_[0-9a-z]+)\b|\[\s*"([a-z_]+_[0-9a-z]+)"\s*\]|\[\s*'([a-z_]+_[0-9a-z]+)'\s*\])/g;
const LIST_REFERENCE = /\blist\(\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*\)/g;

/** Type-checks an expression at a decision point: it must be a bool. Throws an ExpressionError. */
export function checkExpression(point: DecisionPointName, expression: string): CheckedExpression {
  const result = environmentOf(point).check(expression);
  if (!result.valid) throw expressionError(expression, result.error);
  if (result.type !== 'bool') {
    throw new ExpressionError(`the expression must be a bool, not ${result.type}`, 0, 1, 1);
  }
  return { velocity: velocityRead(expression), lists: listsNamed(expression) };
}

/** The velocity features an expression reads; every one when it reads `velocity` otherwise than by a feature's full name. */
function velocityRead(expression: string): VelocityFeature[] {
  const references = [...expression.matchAll(FEATURE_REFERENCE)];
  const named = new Set(references.map((m) => `${m[1]}.${m[2] ?? m[3] ?? m[4]}`));
  // Each mention of velocity a feature's reference (one feature named twice is still one)
  const mentions = expression.match(/\bvelocity\b/g)?.length ?? 0;
  if (mentions > references.length) return ALL_FEATURES;
  return ALL_FEATURES.filter((f) => named.has(featureName(f)));
}

function listsNamed(expression: string): string[] {
  return [...new Set([...expression.matchAll(LIST_REFERENCE)].map((m) => m[1] ?? m[2] ?? ''))];
}

function expressionError(expression: string, error: Error | undefined): ExpressionError {
  const node = (error as { node?: { pos?: number; start?: number } } | undefined)?.node;
  const position = Math.min(node?.pos ?? node?.start ?? 0, expression.length);
  const before = expression.slice(0, position).split('\n');
  // The library's message ends with a drawing of the place; the first line is the reason.
  const reason = (error?.message ?? 'not a valid expression').split('\n')[0] ?? '';
  return new ExpressionError(reason, position, before.length, (before.at(-1)?.length ?? 0) + 1);
}

/** A checked expression, parsed once: evaluate() runs it against one set of attributes. */
export interface CompiledExpression {
  evaluate(attributes: Record<string, unknown>, lists: ReadonlyMap<string, RiskList>): boolean;
}

export function compileExpression(point: DecisionPointName, expression: string): CompiledExpression {
  const value = compileValue(point, expression);
  return { evaluate: (attributes, lists) => value(attributes, lists) === true };
}

/** A part of a checked expression, of any type, for its residual (rule-residual.ts): throws when it fails. */
export function compileValue(
  point: DecisionPointName,
  expression: string,
): (attributes: Record<string, unknown>, lists: ReadonlyMap<string, RiskList>) => unknown {
  const parsed: ParseResult = environmentOf(point).parse(expression);
  return (attributes, lists) => {
    listsInScope = lists;
    try {
      return parsed(attributes);
    } finally {
      listsInScope = undefined;
    }
  };
}

/** A checked expression's syntax tree, as the library parses it (rule-residual.ts walks it) */
export function syntaxTree(point: DecisionPointName, expression: string): unknown {
  return environmentOf(point).parse(expression).ast;
}

const OPERATORS = new Set(['||', '&&', '==', '!=', '<', '<=', '>', '>=', '+', '-', '*', '/', '%', 'in']);

/** A node of the library's syntax tree: an operator, a call, a literal…, and what it applies to */
export interface SyntaxNode {
  op: string;
  args: unknown;
}

/**
 * A node of a syntax tree as an expression again, every operator's operands in parentheses: the library's
 * `serialize` drops the parentheses of a right operand of the same precedence (`a - (b - a)` comes back as
 * `a - b - a`), so it only writes what holds no operator. Throws for a call, an index, a list or a map
 * with an operator inside (a residual then leaves the rule to the usual way).
 */
export function expressionOf(node: unknown): string {
  const { op, args } = node as SyntaxNode;
  const [a, b, c] = Array.isArray(args) ? args : [args];
  if (OPERATORS.has(op)) return `(${expressionOf(a)}) ${op} (${expressionOf(b)})`;
  if (op === '!_') return `!(${expressionOf(a)})`;
  if (op === '-_') return `-(${expressionOf(a)})`;
  if (op === '?:') return `(${expressionOf(a)}) ? (${expressionOf(b)}) : (${expressionOf(c)})`;
  if (holdsOperator(args)) throw new Error(`an operator inside ${op}: not written back`);
  return serialize(node as ASTNode);
}

/**
 * A node of the syntax tree as written, from the range of the source it knows, when that parses to the
 * same tree (a call's range leaves out a receiver in parentheses); else as expressionOf writes it back,
 * which throws where it cannot.
 */
export function sourceOf(point: DecisionPointName, node: SyntaxNode): string {
  const { input, range } = node as SyntaxNode & { input?: string; range?: { start: number; end: number } };
  if (!input || !range) return expressionOf(node);
  // A call's range starts inside the parentheses of its receiver, and a node's ends inside those of its last
  // operand: taken in, one by one
  const starts = widened(range.start, (at) => {
    const before = input.slice(0, at).trimEnd();
    return before.endsWith('(') ? before.length - 1 : undefined;
  });
  const ends = widened(range.end, (at) => {
    const after = input.slice(at);
    const skipped = after.length - after.trimStart().length;
    return after.trimStart().startsWith(')') ? at + skipped + 1 : undefined;
  });
  for (const end of ends) {
    for (const start of starts) {
      const written = input.slice(start, end);
      try {
        if (sameTree(syntaxTree(point, written), node)) return written;
      } catch {
        // not an expression by itself
      }
    }
  }
  return expressionOf(node);
}

/** A place in the source, then each `next` of it (up to seven) */
function widened(at: number, next: (at: number) => number | undefined): number[] {
  const places = [at];
  for (let place = next(at); place !== undefined && places.length < 8; place = next(place))
    places.push(place);
  return places;
}

/** Two syntax trees alike, wherever they were parsed from */
function sameTree(a: unknown, b: unknown): boolean {
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameTree(x, b[i]));
  if (typeof a !== 'object' || a === null) return a === b;
  if (!('op' in a) || typeof b !== 'object' || b === null || !('op' in b)) return false;
  return (
    (a as SyntaxNode).op === (b as SyntaxNode).op && sameTree((a as SyntaxNode).args, (b as SyntaxNode).args)
  );
}

function holdsOperator(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsOperator);
  if (typeof value !== 'object' || value === null || !('op' in value)) return false;
  const { op, args } = value as SyntaxNode;
  return OPERATORS.has(op) || op === '!_' || op === '-_' || op === '?:' || holdsOperator(args);
}

const featuresByName = new Map(ALL_FEATURES.map((f) => [featureName(f), f]));

/** The member a selection names: `holder.name`, or `holder["name"]` (a literal index); undefined otherwise */
export function selectedName(node: SyntaxNode): string | undefined {
  if ((node.op !== '.' && node.op !== '[]') || !Array.isArray(node.args)) return undefined;
  const [, selected] = node.args as [SyntaxNode, string | SyntaxNode];
  if (typeof selected === 'string') return selected;
  return selected.op === 'value' && typeof selected.args === 'string' ? selected.args : undefined;
}

/** `velocity.<key>.<feature>` as written (or its feature indexed by name), the tenant's included */
export function featureOf(node: SyntaxNode): VelocityFeature | undefined {
  // `velocity.card.count_10m`, or `velocity.card["count_10m"]`: the same feature
  const name = selectedName(node);
  if (name === undefined) return undefined;
  const [holder] = node.args as [SyntaxNode];
  if (holder.op !== '.' || !Array.isArray(holder.args)) return undefined;
  const [root, key] = holder.args as [SyntaxNode, string];
  if (root.op !== 'id' || root.args !== 'velocity') return undefined;
  return featuresByName.get(`${key}.${name}`);
}
