import { describe, expect, it } from 'vitest';
import { prefersJson } from './accept.ts';

describe('prefersJson', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['*/*', false],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', false],
    ['application/json', true],
    ['application/vnd.api+json', true],
    ['application/json, text/plain, */*', true],
    ['application/json, text/html', false],
    ['text/html;q=0.5, application/json', true],
    ['application/json;q=0', false],
  ])('%s → %s', (accept, expected) => {
    expect(prefersJson(accept)).toBe(expected);
  });
});
