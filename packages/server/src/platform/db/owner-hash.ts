// Per-owner indexes on an 8-byte hash of the owner's text id (migration 0082), instead of the id itself:
// a 24-byte index tuple where the 30-character id made a 48-byte one, about 50 bytes less of the
// write-ahead log per insert (docs/benchmarks.md, issue 54). Postgres uses such an index only for a read
// that names its very expression, so every read of one goes through here: the hash of the column compared
// with the hash of the value sought, and the column itself beside it, since two owners may share a hash.
import { type RawBuilder, sql } from 'kysely';

/** `column = value`, served by an index on (hashtextextended(column, 0), …); value is a text or an SQL expression */
export function ownedBy(column: string, value: string | RawBuilder<unknown>): RawBuilder<boolean> {
  const ref = sql.ref(column);
  const sought = typeof value === 'string' ? sql`${value}::text` : value;
  return sql<boolean>`hashtextextended(${ref}, 0) = hashtextextended(${sought}, 0) AND ${ref} = ${sought}`;
}

/** `column IN (values)`, served by the same index: one of the values' hashes, then the value itself */
export function ownedByAny(column: string, values: readonly string[]): RawBuilder<boolean> {
  if (values.length === 1) return ownedBy(column, values[0] as string);
  const ref = sql.ref(column);
  const texts = values.map((v) => sql`${v}::text`);
  return sql<boolean>`hashtextextended(${ref}, 0) IN (${sql.join(texts.map((t) => sql`hashtextextended(${t}, 0)`))})
    AND ${ref} IN (${sql.join(texts)})`;
}
