// What a rule's parts read, for backtests (rule-sql.ts, backtest-hoisted.ts): recorded scalars, groups'
// members, velocity features by their full names, and the members a variable index names.
import {
  celSchema,
  type DecisionPointName,
  featureName,
  type VelocityFeature,
  velocityFeatures,
} from './decision-points.ts';
import { featureOf, type SyntaxNode as Node, selectedName, sourceOf, syntaxTree } from './rule-expression.ts';

/** A rule's part with no exact SQL (rule-sql.ts): hoisted where it can be, else the rule is refused */
export class Unsupported extends Error {}

export type CelType = 'int' | 'string' | 'bool';

/** A recorded attribute a rule reads: a top-level scalar, or a member of a recorded group */
export interface AttributePath {
  name: string;
  member?: string;
  type: CelType;
}

/** The column a backtest's history names a recorded attribute by */
export const attributeColumn = (a: AttributePath) => `a_${a.name}${a.member ? `__${a.member}` : ''}`;
/**
 * A group or a key's velocity indexed by a variable (`card[email]`, `velocity.card[name]`): which members it
 * reads depends on the values its index takes. A backtest reads those first (backtest-hoisted.ts), and the
 * part around it is hoisted as reading the members named and what the index reads.
 */
export interface VariableIndex {
  /** The read as written (`card[email]`): what `indexed` knows it by */
  read: string;
  /** The index as CEL, as written */
  expression: string;
  /** What the index reads */
  attributes: AttributePath[];
  /** The names it may take that read something: the group's members, or the key's features */
  members: string[];
}

/** A variable index, and the members its values were found to name in the period */
export interface NamedIndex {
  expression: string;
  members: readonly string[];
  named: ReadonlySet<string>;
}

/** What a hoisted part reads */
export interface Reads {
  attributes: Map<string, AttributePath>;
  velocity: Map<string, VelocityFeature>;
  indexes: NamedIndex[];
}

/**
 * What a part reads: recorded scalars, groups' members (`card.bin`, `card["bin"]`), velocity features by
 * their full names, and through a variable index (`card[email]`) what the index reads and the members it
 * was found to name (`indexed`); Unsupported for a group or velocity read otherwise.
 */
export function readsOf(
  point: DecisionPointName,
  node: unknown,
  into: Reads,
  indexed: ReadonlyMap<string, ReadonlySet<string>>,
): void {
  if (Array.isArray(node)) {
    for (const n of node) readsOf(point, n, into, indexed);
    return;
  }
  if (typeof node !== 'object' || node === null || !('op' in node)) return;
  const schema = schemaOf(point);
  const { op, args } = node as Node;
  if (op === 'id') {
    const type = schema[args as string];
    if (args === 'velocity' || (type !== undefined && (typeof type !== 'string' || !isCelType(type))))
      throw new Unsupported();
    // A name not in the schema is a comprehension's variable
    if (type !== undefined) into.attributes.set(args as string, { name: args as string, type });
    return;
  }
  if (op !== '.' && op !== '[]') {
    readsOf(point, args, into, indexed);
    return;
  }
  const feature = featureOf(node as Node);
  if (feature) {
    into.velocity.set(featureName(feature), feature);
    return;
  }
  const [holder, index] = args as [Node, Node];
  const members = membersOf(schema, holder);
  const member = selectedName(node as Node);
  if (!members) {
    readsOf(point, args, into, indexed);
    return;
  }
  if (member !== undefined) {
    // A member by name, or by a literal index (`card["bin"]`)
    const read = members.get(member);
    if (!read || 'key' in read) throw new Unsupported();
    into.attributes.set(attributeColumn(read), read);
    return;
  }
  // Indexed by a variable: what the index reads, and each member its values name
  const expression = indexSource(point, index);
  const named = indexed.get(indexSource(point, node as Node));
  if (!named) throw new Unsupported();
  readsOf(point, index, into, indexed);
  into.indexes.push({ expression, members: [...members.keys()], named });
  for (const name of named) {
    const read = members.get(name);
    if (read && 'key' in read) into.velocity.set(featureName(read), read);
    else if (read) into.attributes.set(attributeColumn(read), read);
  }
}

const schemas = new Map<DecisionPointName, Record<string, unknown>>();
/** A decision point's attributes and their types, built once */
function schemaOf(point: DecisionPointName): Record<string, unknown> {
  const schema = schemas.get(point) ?? celSchema(point);
  schemas.set(point, schema);
  return schema;
}

/**
 * What a holder's members read, by name: a recorded group's (`card`), or a velocity key's features
 * (`velocity.card`); undefined for anything else
 */
function membersOf(
  schema: Record<string, unknown>,
  holder: Node,
): Map<string, AttributePath | VelocityFeature> | undefined {
  if (holder.op === 'id' && holder.args !== 'velocity') {
    const group = schema[holder.args as string];
    if (typeof group !== 'object' || group === null) return undefined;
    const members = new Map<string, AttributePath | VelocityFeature>();
    for (const [member, type] of Object.entries(group)) {
      if (typeof type === 'string' && isCelType(type))
        members.set(member, { name: holder.args as string, member, type });
    }
    return members;
  }
  const [root, key] = Array.isArray(holder.args) ? (holder.args as [Node, unknown]) : [];
  if (holder.op !== '.' || root?.op !== 'id' || root.args !== 'velocity') return undefined;
  const features = velocityFeatures().filter((f) => f.key === key);
  return new Map(features.map((f) => [`${f.metric}_${f.window}`, f]));
}

/** The index of a variable index as written (Unsupported when it cannot be cut out) */
function indexSource(point: DecisionPointName, index: Node): string {
  try {
    return sourceOf(point, index);
  } catch {
    throw new Unsupported();
  }
}

/**
 * The variable indexes of a rule whose index reads only what a part may (recorded scalars, groups' members,
 * and through the variable indexes `indexed` already, the members they name): a backtest reads which
 * members their values name before the rule is translated, the indexes inside an index first.
 */
export function variableIndexes(
  point: DecisionPointName,
  expression: string,
  indexed: ReadonlyMap<string, ReadonlySet<string>> = new Map(),
): VariableIndex[] {
  const schema = schemaOf(point);
  const found: VariableIndex[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    if (typeof node !== 'object' || node === null || !('op' in node)) return;
    const { op, args } = node as Node;
    visit(args);
    if (op !== '[]' || selectedName(node as Node) !== undefined) return;
    const [holder, index] = args as [Node, Node];
    const members = membersOf(schema, holder);
    if (!members) return;
    try {
      const reads: Reads = { attributes: new Map(), velocity: new Map(), indexes: [] };
      readsOf(point, index, reads, indexed);
      if (reads.velocity.size > 0) return;
      const read = indexSource(point, node as Node);
      if (found.some((f) => f.read === read)) return;
      const expression = indexSource(point, index);
      found.push({
        read,
        expression,
        attributes: [...reads.attributes.values()],
        members: [...members.keys()],
      });
    } catch (err) {
      if (!(err instanceof Unsupported)) throw err;
    }
  };
  visit(syntaxTree(point, expression));
  return found;
}

export const isCelType = (type: string): type is CelType =>
  type === 'int' || type === 'string' || type === 'bool';
