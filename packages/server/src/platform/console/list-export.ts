// A console list as CSV (docs/console.md, Lists): the same read with the same filters, page after page,
// and the same cells the page shows — read back from the list's own table, so the export cannot say
// something the list does not. A cell a spreadsheet would run as a formula is made text.
import { toCsv } from '../payouts/reports.ts';
import type { Html } from './html-template.ts';

/** At most this many rows in one export: a year of a busy tenant is narrowed by its filters first */
export const EXPORT_ROWS = 10_000;

/** A list's table (listView's markup) as its header and rows of plain text */
export function tableText(table: Html): { header: string[]; rows: string[][] } {
  const markup = String(table);
  const head = /<thead>([\s\S]*?)<\/thead>/.exec(markup)?.[1] ?? '';
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(markup)?.[1] ?? '';
  return {
    header: cellsOf(head, 'th'),
    rows: [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) => cellsOf(row[1] ?? '', 'td')),
  };
}

function cellsOf(row: string, tag: 'th' | 'td'): string[] {
  return [...row.matchAll(new RegExp(`<${tag}\\b[^>]*>([\\s\\S]*?)</${tag}>`, 'g'))].map((cell) =>
    plainText(cell[1] ?? ''),
  );
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };

/** A cell's text as a person reads it: tags dropped, the template's escapes undone, spaces collapsed */
export function plainText(markup: string): string {
  return markup
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(amp|lt|gt|quot|#39);/g, (_, entity: string) => ENTITIES[entity] ?? '')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The CSV of a list's rows. A cell that starts as a formula would (`=`, `+`, `@`, or `-` before anything
 * but a digit: a negative amount stays a number) gets a leading apostrophe, as OWASP's CSV injection
 * advice has it: a shopper's description must not run in the merchant's spreadsheet.
 */
export function listCsv(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const safe = (cell: string) => (/^(?:[=+@\t\r]|-(?!\d))/.test(cell) ? `'${cell}` : cell);
  return toCsv(
    header,
    rows.map((row) => row.map(safe)),
  );
}
