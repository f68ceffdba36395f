// What is left of a rule once everything but a key's velocity is known (docs/risk.md, Velocity on the
// one-statement paths). A card authorization and a crypto order are one statement with no read before it;
// reading the key velocity a rule needs would be a round trip more. Instead the rule is evaluated on what
// the process already has (the attributes, the lists, the tenant's windows from memory), and what is left
// — comparisons of the key velocity features with numbers, joined by and, or and not — becomes SQL that
// the write's own statement checks (statement_guard): when no rule can match, the write goes ahead as
// allowed; when one may, the statement writes nothing and the caller decides the usual way.
//
// The guard only has to be safe in one direction: its "no rule can match" must be true. Whatever it
// cannot put into SQL (a list of a velocity, a division, a ternary, an evaluation error) makes the
// decision the usual one; so does a rule that matches whatever the velocity.
import type { DecisionPointName, VelocityFeature } from './decision-points.ts';
import {
  compileValue,
  expressionOf,
  featureOf,
  type SyntaxNode as Node,
  type RiskList,
  syntaxTree,
} from './rule-expression.ts';

export type Residual =
  | { kind: 'known'; value: unknown }
  | { kind: 'feature'; feature: VelocityFeature }
  | { kind: 'op'; op: ResidualOp; args: Residual[] };

type ResidualOp = 'AND' | 'OR' | 'NOT' | 'NEG' | '<' | '<=' | '>' | '>=' | '=' | '<>' | '+' | '-' | '*';

/** The rule's residual for one signal's attributes (velocity.tenant known, the keys' not): throws Undecidable */
export type ResidualPlan = (
  attributes: Record<string, unknown>,
  lists: ReadonlyMap<string, RiskList>,
) => Residual;

/** This signal's residual cannot be put into SQL (an evaluation error, a value not an int): decide the usual way. */
export class Undecidable extends Error {}

const COMPARISONS: Record<string, ResidualOp> = {
  '<': '<',
  '<=': '<=',
  '>': '>',
  '>=': '>=',
  '==': '=',
  '!=': '<>',
};
const ARITHMETIC: Record<string, ResidualOp> = { '+': '+', '-': '-', '*': '*' };

const known = (value: unknown): Residual => ({ kind: 'known', value });
const isKnown = (r: Residual, value: unknown) => r.kind === 'known' && r.value === value;

/**
 * The plan of an expression's residual, or undefined when it reads a key's velocity otherwise than by
 * features compared with numbers (then every decision with it reads velocity first).
 */
export function planResidual(point: DecisionPointName, expression: string): ResidualPlan | undefined {
  try {
    return plan(syntaxTree(point, expression) as Node);
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }

  function plan(node: Node): ResidualPlan {
    if (!readsKeyVelocity(node)) {
      let value: ReturnType<typeof compileValue>;
      try {
        value = compileValue(point, expressionOf(node));
      } catch {
        throw new Unsupported();
      }
      return (attributes, lists) => {
        try {
          return known(value(attributes, lists));
        } catch {
          throw new Undecidable();
        }
      };
    }
    const feature = featureOf(node);
    if (feature) return () => ({ kind: 'feature', feature });
    const args = children(node).map(plan);
    const [a, b] = args;
    if (node.op === '&&' && a && b) return (at, l) => and(a(at, l), b(at, l));
    if (node.op === '||' && a && b) return (at, l) => or(a(at, l), b(at, l));
    if (node.op === '!_' && a) return (at, l) => not(a(at, l));
    if (node.op === '-_' && a) return (at, l) => ({ kind: 'op', op: 'NEG', args: [int(a(at, l))] });
    const op = COMPARISONS[node.op] ?? ARITHMETIC[node.op];
    if (op && a && b) return (at, l) => ({ kind: 'op', op, args: [int(a(at, l)), int(b(at, l))] });
    throw new Unsupported();
  }
}

class Unsupported extends Error {}

/** Whether a node reads a key's velocity (a card's, an email's…): the tenant's is known in memory */
function readsKeyVelocity(node: Node): boolean {
  const feature = featureOf(node);
  if (feature) return feature.key !== 'tenant';
  if (node.op === 'id') return node.args === 'velocity';
  return children(node).some(readsKeyVelocity);
}

/** The nodes under a node, however its arguments nest them (a call's are a list in its arguments) */
function children(node: Node): Node[] {
  const under = (value: unknown): Node[] =>
    Array.isArray(value)
      ? value.flatMap(under)
      : typeof value === 'object' && value !== null && 'op' in value
        ? [value as Node]
        : [];
  return under(node.args);
}

function and(a: Residual, b: Residual): Residual {
  if (isKnown(a, false) || isKnown(b, false)) return known(false);
  if (isKnown(a, true)) return bool(b);
  if (isKnown(b, true)) return bool(a);
  return { kind: 'op', op: 'AND', args: [bool(a), bool(b)] };
}

function or(a: Residual, b: Residual): Residual {
  if (isKnown(a, true) || isKnown(b, true)) return known(true);
  if (isKnown(a, false)) return bool(b);
  if (isKnown(b, false)) return bool(a);
  return { kind: 'op', op: 'OR', args: [bool(a), bool(b)] };
}

function not(a: Residual): Residual {
  bool(a);
  return a.kind === 'known' ? known(a.value !== true) : { kind: 'op', op: 'NOT', args: [a] };
}

/** A boolean operand: a known one must be a bool (an error's value or another type is undecidable) */
function bool(r: Residual): Residual {
  if (r.kind === 'known' && typeof r.value !== 'boolean') throw new Undecidable();
  return r;
}

/** An arithmetic or compared operand: a known one must be an int */
function int(r: Residual): Residual {
  if (r.kind === 'known' && typeof r.value !== 'bigint') throw new Undecidable();
  return r;
}

/**
 * The residual as a SQL condition: each feature by `featureSql` (a numeric expression), each known int by
 * `parameter` (a placeholder: the text depends only on the residual's shape, so it is prepared once).
 */
export function residualSql(
  r: Residual,
  featureSql: (f: VelocityFeature) => string,
  parameter: (value: bigint) => string,
): string {
  if (r.kind === 'known') {
    if (typeof r.value === 'boolean') return r.value ? 'true' : 'false';
    return `${parameter(r.value as bigint)}::numeric`;
  }
  if (r.kind === 'feature') return featureSql(r.feature);
  const [a, b] = r.args.map((arg) => residualSql(arg, featureSql, parameter));
  if (r.op === 'NOT') return `(NOT ${a})`;
  if (r.op === 'NEG') return `(- ${a})`;
  return `(${a} ${r.op} ${b})`;
}
