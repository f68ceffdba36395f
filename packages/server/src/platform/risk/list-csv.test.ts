import { describe, expect, it } from 'vitest';
import { listItemsOf } from './risk-commands.ts';

describe('a list’s items from a CSV file', () => {
  it('takes the first column, leaves out a `value` header and blank lines, and reads quoted fields', () => {
    expect(listItemsOf('value,note\n203.0.113.7,seen\n\n"198.51.100.0/24","a, range"\n')).toEqual([
      '203.0.113.7',
      '198.51.100.0/24',
    ]);
    expect(listItemsOf('DE89370400440532013000\r\nFR1420041010050500013M02606\r\n')).toEqual([
      'DE89370400440532013000',
      'FR1420041010050500013M02606',
    ]);
    expect(listItemsOf('')).toEqual([]);
  });
});
