// What narrows and orders a console list beyond its own filters (docs/console.md, Lists): the creation
// dates every list takes, an amount range and the sort by amount for the lists with an amount. A big list
// pages by a sequence through its (tenant, sequence) index: its dates become a range of the sequence first.
import { type RawBuilder, sql } from 'kysely';
import { DomainError } from '../errors/domain-error.ts';
import { listAssets } from '../money/assets.ts';

/** A list's filters as the query gives them: its own, the cursor, and what this module reads */
export type ListFilters = Record<string, string | undefined>;

/** What narrowing reads of a list's query (paging.ts's ListQuery, which has these) */
export interface Narrowable {
  /** The row's creation time column */
  createdAt: string;
  /** A column that grows with every row (paging.ts pages by it) */
  sequence?: string;
  /**
   * The table the sequence is a column of: a creation date range is then found as a range of the sequence
   * first (sequenceAtOrAfter), so the page stays a range read of the (tenant, sequence) index.
   */
  table?: string;
  /** The row's amount (minor units) and currency: the list then narrows by amount and sorts by it */
  amount?: { column: string; currency: string };
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

export function createdWithin(q: Narrowable, period: { from?: Date; until?: Date }): RawBuilder<boolean>[] {
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

export const SORTS = ['newest', 'oldest', 'amount_desc', 'amount_asc'] as const;
export type Sort = (typeof SORTS)[number];
/** The longest period a list sorts by amount over: the sort reads every row of the period */
export const AMOUNT_SORT_DAYS = 31;

/**
 * How the list is ordered: newest first unless asked. By amount only for a list with an amount and over
 * at most AMOUNT_SORT_DAYS days given by `from` and `to`: no index orders a tenant's rows by amount, so
 * the period bounds what is sorted.
 */
export function sortOf(
  f: ListFilters,
  q: Pick<Narrowable, 'amount'>,
  period: { from?: Date; until?: Date },
): Sort {
  const v = f.sort?.trim() || 'newest';
  const sort = SORTS.find((s) => s === v);
  if (!sort || (sort.startsWith('amount') && !q.amount)) {
    throw new DomainError('validation_failed', 'the filter sort is not one this list has', { field: 'sort' });
  }
  if (sort.startsWith('amount')) {
    const { from, until } = period;
    if (!from || !until || until.getTime() - from.getTime() > AMOUNT_SORT_DAYS * 86_400_000) {
      throw new DomainError(
        'validation_failed',
        `sorting by amount needs the dates from and to, at most ${AMOUNT_SORT_DAYS} days apart`,
        { field: 'sort' },
      );
    }
  }
  return sort;
}

/** An amount as a person writes it in the currency's major units: "10", "10.5", "0.000001" */
const MAJOR = /^\d{1,15}(\.\d{1,18})?$/;

/**
 * The rows whose amount is at least `minAmount` and at most `maxAmount`, both in major units of the
 * row's own currency (a list may hold several): compared in minor units, each currency's decimals from
 * the assets this build knows. An amount with more decimals than a currency has is compared exactly.
 */
export function amountWithin(q: Pick<Narrowable, 'amount'>, f: ListFilters): RawBuilder<boolean>[] {
  if (!q.amount) return [];
  const { column, currency } = q.amount;
  const scale = sql`power(10::numeric, CASE ${sql.ref(currency)} ${sql.join(
    listAssets().map((a) => sql`WHEN ${a.code} THEN ${a.exponent}::int`),
    sql` `,
  )} END)`;
  const conditions: RawBuilder<boolean>[] = [];
  for (const [name, compare] of [
    ['minAmount', sql`>=`],
    ['maxAmount', sql`<=`],
  ] as const) {
    const v = f[name]?.trim();
    if (!v) continue;
    if (!MAJOR.test(v)) {
      throw new DomainError('validation_failed', `the filter ${name} is not an amount (like 10.50)`, {
        field: name,
      });
    }
    conditions.push(sql<boolean>`${sql.ref(column)} ${compare} ${v}::numeric * ${scale}`);
  }
  return conditions;
}
