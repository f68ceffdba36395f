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
  /**
   * The table the sequence is a column of: a creation date range is then found as a range of the sequence
   * first (sequenceAtOrAfter), so the page stays a range read of the (tenant, sequence) index.
   */
  table?: string;
}

/** A list's filters as the query gives them: the cursor, and the creation dates `from` and `to` (inclusive) */
export type ListFilters = Record<string, string | undefined>;

export async function pageOf<R extends { cursor_at: Date; cursor_id: string }>(
  db: Executor,
  q: ListQuery,
  at: string | undefined | ListFilters,
): Promise<Page<R>> {
  const f = typeof at === 'object' ? at : { cursor: at };
  const where = [...q.where, ...createdWithin(q, createdPeriod(f))];
  const after = decodeCursor(f.cursor);
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

/** The creation dates a list is narrowed to: [from, to + 1 day) in UTC; a malformed or backward one refused */
export function createdPeriod(f: ListFilters): { from?: Date; until?: Date } {
  const date = (name: 'from' | 'to') => {
    const v = f[name]?.trim();
    if (!v) return undefined;
    const at = /^\d{4}-\d{2}-\d{2}$/.test(v) ? new Date(`${v}T00:00:00Z`) : undefined;
    if (!at || Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== v) {
      throw new DomainError('validation_failed', `the filter ${name} is not a date (YYYY-MM-DD)`, {
        field: name,
      });
    }
    return at;
  };
  const from = date('from');
  const to = date('to');
  if (from && to && to < from) {
    throw new DomainError('validation_failed', 'the filter to is before from', { field: 'to' });
  }
  return { ...(from ? { from } : {}), ...(to ? { until: new Date(to.getTime() + 86_400_000) } : {}) };
}

/**
 * How far a row's creation time may stray from its sequence's order: a row's time is taken before its
 * insert draws the sequence, so two writes in flight may take them in either order, by as long as a
 * write lasts. The sequence range is widened by this much and the times themselves decide.
 */
const SEQUENCE_SLACK_MS = 10 * 60_000;

function createdWithin(q: ListQuery, period: { from?: Date; until?: Date }): RawBuilder<boolean>[] {
  const conditions: RawBuilder<boolean>[] = [];
  const { from, until } = period;
  if (from) conditions.push(sql<boolean>`${sql.ref(q.createdAt)} >= ${from}`);
  if (until) conditions.push(sql<boolean>`${sql.ref(q.createdAt)} < ${until}`);
  if (q.sequence && q.table) {
    const seq = sql.ref(q.sequence);
    const column = (ref: string) => ref.slice(ref.lastIndexOf('.') + 1);
    const bound = (time: Date) =>
      sequenceAtOrAfter(q.table ?? '', column(q.sequence ?? ''), column(q.createdAt), time);
    if (from) conditions.push(sql<boolean>`${seq} >= ${bound(new Date(from.getTime() - SEQUENCE_SLACK_MS))}`);
    if (until)
      conditions.push(sql<boolean>`${seq} < ${bound(new Date(until.getTime() + SEQUENCE_SLACK_MS))}`);
  }
  return conditions;
}

/**
 * The first value of a growing sequence whose row was created at or after `time` (past the last when none
 * was), by a binary search over the sequence's own index: about 30 probes of one row for a billion rows,
 * whatever the date, where a scan from the newest row would read every row after it.
 */
export function sequenceAtOrAfter(
  table: string,
  sequence: string,
  createdAt: string,
  time: Date,
): RawBuilder<unknown> {
  const t = sql.table(table);
  const seq = sql.ref(sequence);
  const at = sql.ref(createdAt);
  return sql`(WITH RECURSIVE search(lo, hi) AS (
      SELECT (SELECT min(${seq}) FROM ${t}), (SELECT max(${seq}) FROM ${t}) + 1
      UNION ALL
      SELECT CASE WHEN probe.at IS NULL OR probe.at >= ${time} THEN s.lo ELSE probe.seq + 1 END,
        CASE WHEN probe.at IS NULL OR probe.at >= ${time} THEN (s.lo + s.hi) / 2 ELSE s.hi END
      FROM search s LEFT JOIN LATERAL (
        SELECT ${seq} AS seq, ${at} AS at FROM ${t} WHERE ${seq} >= (s.lo + s.hi) / 2 ORDER BY ${seq} LIMIT 1
      ) probe ON true
      WHERE s.lo < s.hi
    ) SELECT min(lo) FROM search WHERE lo >= hi)`;
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
