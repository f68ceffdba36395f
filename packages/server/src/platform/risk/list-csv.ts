// A list's items as people hand them over: a CSV file (an export of another tool, a spreadsheet), or one
// value per line, which is the same file with one column. `tessera risk import-list` and the console's
// import read them alike.
import { parse } from 'csv-parse/sync';
import { DomainError } from '../errors/domain-error.ts';

/** The values of a CSV file's first column, a header `value` left out, blanks skipped. */
export function listItemsOf(csv: string): string[] {
  let rows: string[][];
  try {
    rows = parse(csv, { relax_column_count: true, skip_empty_lines: true, trim: true }) as string[][];
  } catch (err) {
    throw new DomainError('validation_failed', `the items are not CSV: ${(err as Error).message}`, {
      field: 'items',
    });
  }
  const values = rows.map((row) => row[0] ?? '').filter((value) => value !== '');
  return values[0]?.toLowerCase() === 'value' ? values.slice(1) : values;
}
