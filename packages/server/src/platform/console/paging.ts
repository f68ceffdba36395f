// Cursor pagination for the console's lists: newest first (or as list-narrowing.ts sorts) by a growing
// sequence or by (created_at, id), the cursor the last row's key and tiebreak, so a page never repeats or
// skips a row however many arrive meanwhile.
import { type RawBuilder, sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import { DomainError } from '../errors/domain-error.ts';
import {
  amountWithin,
  createdPeriod,
  createdWithin,
  type ListFilters,
  type Narrowable,
  sortOf,
} from './list-narrowing.ts';

export const PAGE_SIZE = 25;

export interface Page<R> {
  rows: R[];
  nextCursor: string | null;
}

export interface ListQuery extends Narrowable {
  /** The SELECT list and FROM clause, e.g. sql`o.id, o.status FROM payments_orders o` */
  selectFrom: RawBuilder<unknown>;
  /** Conditions joined by AND: the viewer's scope first, then the filters */
  where: RawBuilder<boolean>[];
  /** The row's creation time and id columns, e.g. 'o.created_at', 'o.id' */
  createdAt: string;
  id: string;
  /**
   * A column that grows with every row (a sequence, a time-ordered id): when given, pages go by it alone,
   * newest or oldest first, so an index on (tenant, column) or the column serves the page without sorting
   * the table.
   */
  sequence?: string;
}

export async function pageOf<R extends { cursor_at: Date; cursor_id: string }>(
  db: Executor,
  q: ListQuery,
  at: string | undefined | ListFilters,
): Promise<Page<R>> {
  const f = typeof at === 'object' ? at : { cursor: at };
  const period = createdPeriod(f);
  const sort = sortOf(f, q, period);
  const where = [...q.where, ...createdWithin(q, period), ...amountWithin(q, f)];
  const tiebreak = q.sequence ? sql`${sql.ref(q.sequence)}` : sql`${sql.ref(q.id)}::text`;
  // Newest or oldest first by the sequence alone where there is one (its index serves the page), else by
  // (created_at, id); by amount with the same tiebreak. The cursor is the last row's key and tiebreak.
  const key =
    sort === 'newest' || sort === 'oldest'
      ? q.sequence
        ? undefined
        : sql`${sql.ref(q.createdAt)}`
      : sql`${sql.ref(q.amount?.column ?? '')}`;
  const descending = sort === 'newest' || sort === 'amount_desc';
  const direction = descending ? sql`DESC` : sql`ASC`;
  const byTime = sort === 'newest' || sort === 'oldest';
  const cursor = decodeCursor(f.cursor);
  // A cursor of another order (a link kept from before the sort changed) starts the list over.
  const after =
    cursor && (byTime ? /^\d{4}-\d{2}-\d{2}T/ : /^-?\d{1,40}$/).test(cursor.key) ? cursor : undefined;
  if (after) {
    const past = descending ? sql`<` : sql`>`;
    const keyValue = byTime ? sql`${after.key}::timestamptz` : sql`${after.key}::numeric`;
    // The cursor's value takes the column's type (an untyped parameter), so the index compares it.
    where.push(
      key
        ? sql<boolean>`(${key}, ${tiebreak}) ${past} (${keyValue}, ${after.id})`
        : sql<boolean>`${tiebreak} ${past} ${after.id}`,
    );
  }
  const order = key ? sql`${key} ${direction}, ${tiebreak} ${direction}` : sql`${tiebreak} ${direction}`;
  const { rows } = await sql<R & { cursor_key: string }>`
    SELECT ${sql.ref(q.createdAt)} AS cursor_at, ${tiebreak}::text AS cursor_id,
      ${byTime ? sql`NULL` : sql`${key}::text`} AS cursor_key, ${q.selectFrom}
    WHERE ${sql.join(where, sql` AND `)}
    ORDER BY ${order}
    LIMIT ${PAGE_SIZE + 1}
  `.execute(db);
  const page = rows.slice(0, PAGE_SIZE);
  const last = page.at(-1);
  return {
    rows: page,
    nextCursor:
      rows.length > PAGE_SIZE && last
        ? encodeCursor(last.cursor_key ?? last.cursor_at.toISOString(), last.cursor_id)
        : null,
  };
}

const encodeCursor = (key: string, id: string) => Buffer.from(`${key}|${id}`).toString('base64url');

/** The last row's sort key (a time or an amount) and tiebreak; a cursor that is neither starts over */
function decodeCursor(cursor: string | undefined): { key: string; id: string } | undefined {
  if (!cursor || cursor.length > 200) return undefined;
  const [key, ...id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (!key || id.length === 0) return undefined;
  return { key, id: id.join('|') };
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
