// Named prepared statements for the hot write paths: Postgres parses and plans such a statement once
// per connection instead of on every call (30–50 % of the database's CPU on those paths), and the text
// is written once instead of compiled by Kysely on every request. Use it for fixed SQL only: each
// distinct name stays prepared on every pooled connection for the connection's life.
import { createHash } from 'node:crypto';
import { CompiledQuery } from 'kysely';

const names = new WeakMap<CompiledQuery, string>();

/** A statement sent as the named prepared statement `name` (the same name must always mean the same text). */
export function preparedStatement(name: string, sql: string, parameters: readonly unknown[]): CompiledQuery {
  const query = CompiledQuery.raw(sql, [...parameters]);
  names.set(query, name);
  return query;
}

const namesByText = new Map<string, string>();

/**
 * A statement whose text is one of a few made from parts (a risk rule set's velocity columns): named
 * `prefix_<hash of the text>`, the hash made once per text.
 */
export function preparedByText(prefix: string, sql: string, parameters: readonly unknown[]): CompiledQuery {
  let name = namesByText.get(sql);
  if (!name) {
    name = `${prefix}_${createHash('sha256').update(sql).digest('hex').slice(0, 16)}`;
    namesByText.set(sql, name);
  }
  return preparedStatement(name, sql, parameters);
}

/** The prepared statement name a query is sent as, if it has one. */
export function statementName(query: CompiledQuery): string | undefined {
  return names.get(query);
}
