// A rule's residual (rule-residual.ts) against the rule itself: over random expressions and attributes,
// what is left once all but a key's velocity is known, evaluated on the velocity, says what CEL says of the
// whole expression — so the one-statement paths' guard (velocity-guard.ts) lets through only what no rule
// matches. And what cannot be put into SQL is refused at planning.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { featureName } from './decision-points.ts';
import { compileExpression, compileValue, expressionOf, RiskList, syntaxTree } from './rule-expression.ts';
import { planResidual, type Residual, residualSql, Undecidable } from './rule-residual.ts';

const KEY_FEATURES = ['card.count_10m', 'ip.sum_1h', 'email.first_seen_days', 'card.declines_1h'];
const TENANT_FEATURE = 'tenant.count_10m';

/** Random int and bool expressions over the payments.charge attributes, key and tenant velocity */
const { bool } = fc.letrec<{ int: string; bool: string }>((tie) => ({
  int: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...[...KEY_FEATURES, TENANT_FEATURE].map((f) => `velocity.${f}`), 'amount'),
    fc.integer({ min: 0, max: 20 }).map(String),
    fc.tuple(tie('int'), fc.constantFrom('+', '-', '*'), tie('int')).map(([a, op, b]) => `(${a} ${op} ${b})`),
    tie('int').map((a) => `-${a}`),
  ),
  bool: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc
      .tuple(tie('int'), fc.constantFrom('<', '<=', '>', '>=', '==', '!='), tie('int'))
      .map(([a, op, b]) => `${a} ${op} ${b}`),
    fc.constantFrom('card.bin == "411111"', 'email in list("blocked")', 'true', 'false'),
    tie('bool').map((b) => `!(${b})`),
    fc.tuple(tie('bool'), fc.constantFrom('&&', '||'), tie('bool')).map(([a, op, b]) => `(${a} ${op} ${b})`),
  ),
}));

const values = fc.record({
  amount: fc.bigInt({ min: 0n, max: 5_000n }),
  bin: fc.constantFrom('411111', '555555'),
  email: fc.constantFrom('a@example.com', 'b@example.com'),
  velocity: fc.tuple(...[...KEY_FEATURES, TENANT_FEATURE].map(() => fc.bigInt({ min: 0n, max: 30n }))),
});

const lists = new Map([['blocked', new RiskList('blocked', new Set(['b@example.com']))]]);

function velocityOf(counted: bigint[], keys: boolean): Record<string, Record<string, bigint>> {
  const velocity: Record<string, Record<string, bigint>> = {};
  [...KEY_FEATURES, TENANT_FEATURE].forEach((name, i) => {
    const [key = '', feature = ''] = name.split('.');
    if (!keys && key !== 'tenant') return;
    velocity[key] = { ...velocity[key], [feature]: counted[i] ?? 0n };
  });
  return velocity;
}

/** The residual evaluated on the velocity, as the guard's SQL would */
function interpret(r: Residual, velocity: Record<string, Record<string, bigint>>): bigint | boolean {
  if (r.kind === 'known') return r.value as bigint | boolean;
  if (r.kind === 'feature') {
    const [key = '', feature = ''] = featureName(r.feature).split('.');
    return velocity[key]?.[feature] ?? 0n;
  }
  const [a, b] = r.args.map((arg) => interpret(arg, velocity));
  switch (r.op) {
    case 'AND':
      return (a as boolean) && (b as boolean);
    case 'OR':
      return (a as boolean) || (b as boolean);
    case 'NOT':
      return !a;
    case 'NEG':
      return -(a as bigint);
    case '+':
      return (a as bigint) + (b as bigint);
    case '-':
      return (a as bigint) - (b as bigint);
    case '*':
      return (a as bigint) * (b as bigint);
    case '<':
      return (a as bigint) < (b as bigint);
    case '<=':
      return (a as bigint) <= (b as bigint);
    case '>':
      return (a as bigint) > (b as bigint);
    case '>=':
      return (a as bigint) >= (b as bigint);
    case '=':
      return a === b;
    case '<>':
      return a !== b;
  }
}

describe('a rule’s residual', () => {
  it('evaluated on the velocity, says what the whole rule says (random rules and attributes)', () => {
    let decided = 0;
    fc.assert(
      fc.property(bool, values, (expression, v) => {
        const plan = planResidual('payments.charge', expression);
        expect(plan).toBeDefined();
        const attributes = { amount: v.amount, card: { bin: v.bin }, email: v.email };
        let residual: Residual;
        try {
          residual = plan?.({ ...attributes, velocity: velocityOf(v.velocity, false) }, lists) as Residual;
        } catch (err) {
          expect(err).toBeInstanceOf(Undecidable);
          return;
        }
        let whole: boolean;
        try {
          whole = compileExpression('payments.charge', expression).evaluate(
            { ...attributes, velocity: velocityOf(v.velocity, true) },
            lists,
          );
        } catch {
          return; // an overflow: CEL's error matches nothing, the guard lets the usual way decide
        }
        decided++;
        expect(interpret(residual, velocityOf(v.velocity, true))).toBe(whole);
      }),
      {
        numRuns: 2_000,
        // A known part with a right operand in parentheses, once written back without them
        examples: [
          [
            '(0 - (0 + velocity.tenant.count_10m)) < velocity.card.count_10m',
            { amount: 0n, bin: '411111', email: 'a@example.com', velocity: [0n, 0n, 0n, 0n, 1n] },
          ],
        ],
      },
    );
    expect(decided).toBeGreaterThan(1_000);
  });

  it('writes a known part back with its parentheses', () => {
    for (const expression of [
      'amount - (amount - 1) * -(2 - amount)',
      '10 - (4 - amount)',
      'amount / (6 / 2)',
    ]) {
      const written = expressionOf(syntaxTree('payments.charge', expression));
      for (const amount of [1n, 3n, 5n, 8n]) {
        expect(compileValue('payments.charge', written)({ amount }, lists), written).toBe(
          compileValue('payments.charge', expression)({ amount }, lists),
        );
      }
    }
  });

  it('is refused at planning where it cannot be SQL, and renders known ints as parameters', () => {
    for (const expression of [
      'velocity.card.count_10m / 2 > 1',
      'velocity.card.count_10m % 2 == 0',
      'velocity.card.count_10m > 2 ? true : false',
      'velocity.card == velocity.ip',
      'has(velocity.card.count_10m)',
    ]) {
      expect(planResidual('payments.charge', expression), expression).toBeUndefined();
    }
    const plan = planResidual(
      'payments.charge',
      'velocity.card.count_10m >= 3 && amount > 100 || amount > 900',
    );
    const at = (amount: bigint) => plan?.({ amount, velocity: {} }, lists) as Residual;
    expect(at(50n)).toEqual({ kind: 'known', value: false });
    expect(at(1_000n)).toEqual({ kind: 'known', value: true });
    const parameters: bigint[] = [];
    const sql = residualSql(
      at(500n),
      (f) => `v.${f.key}_${f.metric}`,
      (value) => `$${parameters.push(value)}`,
    );
    expect(sql).toBe('(v.card_count >= $1::numeric)');
    expect(parameters).toEqual([3n]);
  });
});
