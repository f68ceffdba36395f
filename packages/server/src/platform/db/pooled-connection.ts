// A pg client taken from the pool, as kysely's connection: statements (prepared where named), scripts of
// several statements in one round trip, and the cut that tests use to play a crash.
import type { CompiledQuery, DatabaseConnection, QueryResult } from 'kysely';
import type pg from 'pg';
import { inSpan, isTracing, SpanKind } from '../observability/tracing.ts';
import { statementName } from './prepared.ts';

/** Test-only: sees every statement before it is sent (fault injection between statements). */
export type StatementObserver = (sql: string, connection: { destroy(): void }) => void;

/** A pg client from the pool. */
export class PooledConnection implements DatabaseConnection {
  private released = false;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly observe: StatementObserver | undefined,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!isTracing()) return this.run(query);
    // The statement's text has placeholders, never values (docs/operations.md, Traces).
    const verb = /^\s*(\w+)/.exec(query.sql)?.[1]?.toUpperCase() ?? 'SQL';
    return inSpan(
      `db ${verb}`,
      { 'db.system.name': 'postgresql', 'db.query.text': query.sql.slice(0, 2000) },
      () => this.run<R>(query),
      { kind: SpanKind.CLIENT },
    );
  }

  private async run<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    this.observe?.(query.sql, { destroy: () => this.destroy() });
    const name = statementName(query);
    const values = query.parameters as unknown[];
    const result = await (name
      ? this.client.query({ name, text: query.sql, values })
      : this.client.query(query.sql, values));
    const { command, rowCount, rows } = result;
    const isWrite =
      command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
    return {
      numAffectedRows: isWrite ? BigInt(rowCount ?? 0) : undefined,
      rows: (rows ?? []) as R[],
    };
  }

  // biome-ignore lint/correctness/useYield: the interface requires the method; nothing streams here
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported');
  }

  /**
   * Several statements in one round trip (the simple protocol: no parameters, so values are written in
   * with `literal`); answers the last statement's rows. A failing statement stops the rest.
   */
  async script(text: string): Promise<Record<string, unknown>[]> {
    if (!isTracing()) return this.runScript(text);
    // A script has its values written in: its text is not recorded, only that it ran.
    return inSpan('db script', { 'db.system.name': 'postgresql' }, () => this.runScript(text), {
      kind: SpanKind.CLIENT,
    });
  }

  private async runScript(text: string): Promise<Record<string, unknown>[]> {
    this.observe?.(text, { destroy: () => this.destroy() });
    const result = (await this.client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
    const last = Array.isArray(result) ? result[result.length - 1] : result;
    return (last?.rows ?? []) as Record<string, unknown>[];
  }

  /** A string as a quoted SQL literal, escaped by the driver. */
  literal(value: string): string {
    return this.client.escapeLiteral(value);
  }

  /** Back to the pool; with an error the client is discarded instead. */
  release(err?: Error): void {
    if (this.released) return;
    this.released = true;
    this.client.release(err);
  }

  /** Cuts the connection as a crash would: the server rolls back whatever was open. */
  destroy(): void {
    (this.client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  }
}
