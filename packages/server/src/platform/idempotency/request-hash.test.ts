// The request hash a key's row keeps: a retry must hash as its first request did, across versions too
// (a row written before an upgrade is compared after it), so its text is pinned here.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashRequest, stableStringify } from './idempotency-store.ts';

/** The canonical text as first written (entries filtered, sorted, mapped and joined) */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${reference(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

// Bodies as the parsers make them (JSON, forms), with members left undefined by a handler's defaults.
const body = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true }),
    fc.string({ unit: 'binary' }),
    fc.array(tie('value')),
    fc.dictionary(fc.string({ unit: 'binary' }), fc.option(tie('value'), { nil: undefined })),
  ),
})).value;

describe('the request hash', () => {
  it('is the text first written, for any body', () => {
    fc.assert(
      fc.property(body, (value) => {
        expect(stableStringify(value)).toBe(reference(value));
      }),
      { numRuns: 500 },
    );
  });

  it('does not depend on the order of an object’s members', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (object) => {
        const reversed = Object.fromEntries(Object.entries(object).reverse());
        expect(stableStringify(reversed)).toBe(stableStringify(object));
      }),
    );
  });

  it('hashes a known request to the value rows written before keep', () => {
    const request = {
      order: { reference: 'R-1', amount: { total: '10.00', currency: 'EUR' } },
      b: [1, { d: null, c: 'é"\\n' }],
      a: undefined,
      Z: true,
    };
    expect(stableStringify(request)).toBe(
      '{"Z":true,"b":[1,{"c":"é\\"\\\\n","d":null}],"order":{"amount":{"currency":"EUR","total":"10.00"},"reference":"R-1"}}',
    );
    expect(hashRequest('POST', '/crypto/api/stores/orders', request).toString('hex')).toBe(
      'ca6ab032701b80bf5356ad9d57236691e07d388f61c373932b518e3c8afd27cd',
    );
  });
});
