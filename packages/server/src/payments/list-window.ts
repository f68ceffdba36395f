// How the payments lists page at any size (docs/scale.md). The wire is xMoney's: a page number, a page
// size and a total. A page number is answered by an index-backed read of at most LIST_WINDOW rows (the
// newest or, with reverseSorting=0, the oldest), so page 1 and page 100 cost about the same on a
// merchant with millions of orders; deeper pages are refused naming `page` (narrow the list by
// createdAtFrom/createdAtTo, or read it from the other end). The total is exact up to EXACT_TOTAL and
// Postgres's estimate above it, so no page counts a whole table.
import { CompiledQuery, type SelectQueryBuilder, sql } from 'kysely';
import type { Executor } from '../platform/db/database.ts';
import { DomainError } from '../platform/errors/domain-error.ts';
import type { Page } from './http/envelope.ts';

export const LIST_WINDOW = 10_000;
/** Up to how many items a total is counted exactly (counting costs an index entry per item) */
export const EXACT_TOTAL = 1_000;

/** Refuses a page beyond the window, naming the field. */
export function checkWindow(page: Page): void {
  if (page.page * page.perPage > LIST_WINDOW) {
    throw new DomainError(
      'validation_failed',
      `pages reach the first ${LIST_WINDOW} items from either end: narrow the list with createdAtFrom and ` +
        'createdAtTo, or read it from the other end with reverseSorting',
      { field: 'page', details: { window: LIST_WINDOW } },
    );
  }
}

/** The list's total: counted up to EXACT_TOTAL, the planner's estimate beyond it. */
// biome-ignore lint/suspicious/noExplicitAny: any list query of any table
export async function boundedTotal(db: Executor, query: SelectQueryBuilder<any, any, any>): Promise<number> {
  const capped = await db
    .selectFrom(
      query
        .select(sql<number>`1`.as('one'))
        .limit(EXACT_TOTAL + 1)
        .as('capped'),
    )
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  const counted = Number(capped.n);
  if (counted <= EXACT_TOTAL) return counted;
  const compiled = query.select(sql<number>`1`.as('one')).compile();
  const { rows } = await db.executeQuery<{ 'QUERY PLAN': { Plan: { 'Plan Rows': number } }[] }>(
    CompiledQuery.raw(`EXPLAIN (FORMAT JSON) ${compiled.sql}`, [...compiled.parameters]),
  );
  const estimate = Math.round(rows[0]?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? 0);
  return Math.max(counted, estimate);
}
