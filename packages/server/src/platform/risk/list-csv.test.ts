import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors/domain-error.ts';
import { listItemsOf } from './list-csv.ts';

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

  it('refuses what is not CSV, naming the items', () => {
    const refusal = (() => {
      try {
        listItemsOf('"203.0.113.7\n198.51.100.1');
      } catch (err) {
        return err;
      }
    })();
    expect(refusal).toBeInstanceOf(DomainError);
    expect(refusal).toMatchObject({ field: 'items' });
  });
});
