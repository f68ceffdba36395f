// How the risk signals' indexes are searched (migration 0079). They are on an 8-byte hash of what a read
// names: the tenant and the decision point, and for a velocity key also the key's value, joined by a space
// (a tenant or a point name has none) — not on the text, which cost every signal some 100 bytes of the
// write-ahead log per index. A read names the same hash as the index (the expression over the row's
// columns, compared with the one over the values sought) and the columns themselves beside it: two keys
// that share a hash are both found by the index, and the row's own columns keep the one asked for.
import { type RawBuilder, sql } from 'kysely';

/** The columns a velocity key is kept in, each with an index of its own */
export type SignalKeyColumn = 'ip' | 'email' | 'card_fingerprint' | 'customer_id';

/** The hash of parts (SQL text) joined by a space, as the indexes have it */
const hashOf = (parts: string[]) => `hashtextextended(${parts.join(` || ' ' || `)}, 0)`;

/**
 * The indexed expression over a signal's row (`alias.` before each column when given): the tenant's and
 * point's index without `column`, a key's index with it. Text, as the index was made: the planner matches
 * an index by its expression, so this must stay the migration's, character for character in meaning.
 */
export function signalHashOfRow(alias: string, column?: SignalKeyColumn): string {
  const of = (name: string) => (alias ? `${alias}.${name}` : name);
  return hashOf([of('tenant'), of('decision_point'), ...(column ? [of(column)] : [])]);
}

/** The same hash over the values sought: SQL expressions (parameters, columns of another row) */
export function signalHashOf(tenant: string, point: string, value?: string): string {
  return hashOf([tenant, point, ...(value === undefined ? [] : [value])].map((v) => `${v}::text`));
}

/**
 * The condition that a signal row (`alias`) is the tenant's at the point, with `column` equal to `value`
 * (an SQL expression) when given, for the backtests and the tenant's windows: the index's hash first, the
 * columns to recheck it. (velocity.ts writes its own with numbered parameters: signalHashOf.)
 * test/risk/signal-indexes.test.ts plans each read and fails if one stops searching its index.
 */
export function signalsMatching(
  alias: string,
  r: { tenant: string; point: string },
  key?: { column: SignalKeyColumn; value: RawBuilder<unknown> },
): RawBuilder<unknown> {
  const ref = (name: string) => sql.ref(alias ? `${alias}.${name}` : name);
  const sought = [sql`${r.tenant}::text`, sql`${r.point}::text`, ...(key ? [sql`${key.value}::text`] : [])];
  const probe = sql`hashtextextended(${sql.join(sought, sql` || ' ' || `)}, 0)`;
  const keyed = key ? sql` AND ${ref(key.column)} = ${key.value}` : sql``;
  return sql`${sql.raw(signalHashOfRow(alias, key?.column))} = ${probe}
    AND ${ref('tenant')} = ${r.tenant} AND ${ref('decision_point')} = ${r.point}${keyed}`;
}
