// Rule expressions fuzzed (docs/risk.md, Rules): whatever text is saved, checking it either accepts a bool
// expression or refuses it with an ExpressionError whose position is inside the text — never another
// error (a 500) — and an accepted one evaluates to a bool or fails as an evaluation, with no I/O.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { velocityFeatures } from './decision-points.ts';
import { checkExpression, compileExpression, ExpressionError, RiskList } from './rule-expression.ts';

const TOKENS = [
  'amount',
  'currency',
  'ip',
  'email',
  'email_domain',
  'card.bin',
  'card.country',
  'card.fingerprint',
  'customer.age_days',
  'velocity.ip.count_10m',
  'velocity.card.sum_24h',
  'velocity.ip.declines_1h',
  'velocity.nope.count_1h',
  'authenticated',
  'colour',
  '100',
  '0',
  '-1',
  '1.5',
  '"RO"',
  "'x'",
  'true',
  'false',
  'null',
  '==',
  '!=',
  '>',
  '>=',
  '<',
  '&&',
  '||',
  '!',
  '+',
  '-',
  '*',
  '/',
  '%',
  '(',
  ')',
  '[',
  ']',
  ',',
  '.',
  'in',
  'list("blocked")',
  'size(',
  'startsWith(',
  '.exists(x,',
  'x',
  '?',
  ':',
];

const attributes = {
  amount: 1090n,
  currency: 'EUR',
  ip: '198.51.100.7',
  email: 'a@example.com',
  email_domain: 'example.com',
  billing_country: 'RO',
  source: 'new',
  order_type: 'purchase',
  initiator: 'customer',
  authenticated: false,
  card: { bin: '411111', brand: 'visa', funding: 'credit', country: 'US', fingerprint: 'f' },
  customer: { id: '1', age_days: 3n },
  merchant: { id: '2001', site_id: '1' },
  velocity: Object.fromEntries(
    ['ip', 'email', 'card', 'customer', 'tenant'].map((key) => [
      key,
      Object.fromEntries(
        velocityFeatures()
          .filter((f) => f.key === key)
          .map((f) => [`${f.metric}_${f.window}`, 5n]),
      ),
    ]),
  ),
};
const lists = new Map([['blocked', new RiskList('blocked', new Set(['198.51.100.7']), ['10.0.0.0/8'])]]);

function checkOrRefuse(expression: string): boolean {
  try {
    checkExpression('payments.charge', expression);
    return true;
  } catch (err) {
    expect(err).toBeInstanceOf(ExpressionError);
    const refused = err as ExpressionError;
    expect(refused.position).toBeGreaterThanOrEqual(0);
    expect(refused.position).toBeLessThanOrEqual(expression.length);
    expect(refused.line).toBeGreaterThanOrEqual(1);
    return false;
  }
}

describe('rule expressions', () => {
  it('refuse any text with an ExpressionError and its position, or accept a bool', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (text) => void checkOrRefuse(text)),
      { numRuns: 500 },
    );
  });

  it('accepted from random tokens, evaluate to a bool or fail as an evaluation', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...TOKENS), { minLength: 1, maxLength: 9 }), (tokens) => {
        const expression = tokens.join(' ');
        if (!checkOrRefuse(expression)) return;
        accepted++;
        const compiled = compileExpression('payments.charge', expression);
        try {
          expect(typeof compiled.evaluate(attributes, lists)).toBe('boolean');
        } catch (err) {
          expect((err as Error).name).toBe('EvaluationError');
        }
      }),
      { numRuns: 2_000 },
    );
    expect(accepted).toBeGreaterThan(0);
  });

  it('read lists by exact value and by CIDR range, and an unknown list as empty', () => {
    const inList = compileExpression('payments.charge', 'ip in list("blocked")');
    expect(inList.evaluate(attributes, lists)).toBe(true);
    expect(inList.evaluate({ ...attributes, ip: '10.1.2.3' }, lists)).toBe(true);
    expect(inList.evaluate({ ...attributes, ip: '11.1.2.3' }, lists)).toBe(false);
    expect(inList.evaluate(attributes, new Map())).toBe(false);
  });

  it('name the velocity features an expression reads, every one when it reads the map whole', () => {
    expect(checkExpression('payments.charge', 'velocity.ip.count_10m > 3').velocity).toEqual([
      { key: 'ip', metric: 'count', window: '10m' },
    ]);
    // Indexed by its name, or named twice, a feature is one feature
    for (const expression of [
      'velocity.ip["count_10m"] > 3',
      "velocity.ip['count_10m'] > 3 && velocity.ip.count_10m < 9",
    ]) {
      expect(checkExpression('payments.charge', expression).velocity, expression).toEqual([
        { key: 'ip', metric: 'count', window: '10m' },
      ]);
    }
    expect(checkExpression('payments.charge', 'velocity.ip[email] > 3').velocity).toHaveLength(
      velocityFeatures().length,
    );
  });
});
