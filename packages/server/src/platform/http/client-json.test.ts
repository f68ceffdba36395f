import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors/domain-error.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan, parseClientJson } from './client-json.ts';
import { findUnstorable } from './edge.ts';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('nesting depth of client JSON', () => {
  it('counts arrays and objects, not brackets inside strings or escaped quotes', () => {
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan(JSON.stringify({ a: '[[[[[[', b: '\\"{{{{' }), 2)).toBe(false);
    expect(nestsDeeperThan('{"a":{"b":[{"c":1}]}}', 3)).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":[{"c":1}]}}', 4)).toBe(false);
  });

  it('refuses too deep a document naming the field, and leaves syntax errors to JSON.parse', () => {
    expect(() => parseClientJson(nested(10_000), 'jsonRequest')).toThrow(DomainError);
    expect(() => parseClientJson(nested(10_000), 'jsonRequest')).toThrow(
      /jsonRequest nests .* deeper than 32/,
    );
    expect(() => parseClientJson('{"a":', 'body')).toThrow(SyntaxError);
    expect(parseClientJson('{"a":[1,{"b":"]"}]}', 'body')).toEqual({ a: [1, { b: ']' }] });
  });
});

describe('findUnstorable', () => {
  it('walks any depth without recursion and names the first unstorable field', () => {
    let deep: unknown = 'ok';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(findUnstorable({ deep }, '')).toBeUndefined();
    let bad: unknown = 'a\u0000b';
    for (let i = 0; i < 3; i++) bad = { x: bad };
    expect(findUnstorable({ first: 'fine', second: bad }, '')).toBe('second.x.x.x');
    expect(findUnstorable({ a: ['x', '\ud800'], b: '\u0000' }, '')).toBe('a.1');
    expect(findUnstorable({ 'k\u0000': 1 }, '')).toBe('k\u0000');
  });
});
