// Cursor pagination for the console's lists: newest first by (created_at, id), the cursor the last row's
// pair, so a page never repeats or skips a row however many arrive meanwhile.
import { type RawBuilder, sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import { DomainError } from '../errors/domain-error.ts';

export const PAGE_SIZE = 25;

export interface Page<R> {
  rows: R[];
  nextCursor: string | null;
}

export interface ListQuery {
  /** The SELECT list and FROM clause, e.g. sql`o.id, o.status FROM payments_orders o` */
  selectFrom: RawBuilder<unknown>;
  /** Conditions joined by AND: the viewer's scope first, then the filters */
  where: RawBuilder<boolean>[];
  /** The row's creation time and id columns, e.g. 'o.created_at', 'o.id' */
  createdAt: string;
  id: string;
  /**
   * A column that grows with every row (a sequence, a time-ordered id): when given, pages go by it alone,
   * newest first, so an index on (tenant, column) or the column serves the page without sorting the table.
   */
  sequence?: string;
}

export async function pageOf<R extends { cursor_at: Date; cursor_id: string }>(
  db: Executor,
  q: ListQuery,
  cursor: string | undefined,
): Promise<Page<R>> {
  const where = [...q.where];
  const after = decodeCursor(cursor);
  const sequence = q.sequence;
  if (after && sequence) {
    // The cursor's value takes the column's type (an untyped parameter), so the index compares it.
    where.push(sql<boolean>`${sql.ref(sequence)} < ${after.id}`);
  } else if (after) {
    where.push(
      sql<boolean>`(${sql.ref(q.createdAt)}, ${sql.ref(q.id)}::text) < (${after.at}::timestamptz, ${after.id})`,
    );
  }
  const order = sequence
    ? sql`${sql.ref(sequence)} DESC`
    : sql`${sql.ref(q.createdAt)} DESC, ${sql.ref(q.id)}::text DESC`;
  const { rows } = await sql<R>`
    SELECT ${sql.ref(q.createdAt)} AS cursor_at, ${sql.ref(sequence ?? q.id)}::text AS cursor_id, ${q.selectFrom}
    WHERE ${sql.join(where, sql` AND `)}
    ORDER BY ${order}
    LIMIT ${PAGE_SIZE + 1}
  `.execute(db);
  const page = rows.slice(0, PAGE_SIZE);
  const last = page.at(-1);
  return {
    rows: page,
    nextCursor: rows.length > PAGE_SIZE && last ? encodeCursor(last.cursor_at, last.cursor_id) : null,
  };
}

const encodeCursor = (at: Date, id: string) => Buffer.from(`${at.toISOString()}|${id}`).toString('base64url');

function decodeCursor(cursor: string | undefined): { at: string; id: string } | undefined {
  if (!cursor || cursor.length > 200) return undefined;
  const [at, ...id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (!at || Number.isNaN(Date.parse(at)) || id.length === 0) return undefined;
  return { at, id: id.join('|') };
}

/** A filter's condition when its value was given; a malformed value is refused, naming the filter. */
export function whenGiven(
  filters: Record<string, string | undefined>,
  name: string,
  condition: (value: string) => RawBuilder<boolean>,
  valid: RegExp = /^.{1,120}$/,
): RawBuilder<boolean>[] {
  const v = filters[name]?.trim();
  if (!v) return [];
  if (!valid.test(v))
    throw new DomainError('validation_failed', `the filter ${name} is not valid`, { field: name });
  return [condition(v)];
}

export const DIGITS = /^\d{1,15}$/;
/** The shape of a uuid column's value: anything else names nothing (and must not reach a uuid comparison). */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
