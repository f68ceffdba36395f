// One business step's writes as one SQL statement: each module adds the statement for its own tables
// (the order, the network's record, the outbox event, the ledger posting) and the batch sends them
// together as data-modifying CTEs, one round trip, atomic even in autocommit. The parts run on one
// snapshot and in no fixed order, so they must write different rows and none may read what another
// writes: rows go in with their final state, never inserted and then updated. A part that must refuse
// (the ledger's bounds) raises, and then nothing of the statement is written.
// The text depends only on which parts were added, so it is sent as a named prepared statement.
import { createHash } from 'node:crypto';
import type { CompiledQuery } from 'kysely';
import { currentUnit } from './connection-scope.ts';
import type { Executor } from './database.ts';
import { preparedStatement } from './prepared.ts';

export interface StatementPart {
  /** One statement with $1… placeholders: an INSERT/UPDATE (RETURNING optional) or a SELECT of a function */
  sql: string;
  parameters: readonly unknown[];
  /** Its rows are wanted (it has RETURNING, or is a SELECT, which only runs when read) */
  returns?: boolean;
}

/**
 * The part that inserts one row with these columns, in this order: the text is built once, each row
 * gives its values by column name.
 */
export function rowInsert<Row, Column extends keyof Row & string>(
  table: string,
  columns: readonly Column[],
): (row: Row) => StatementPart {
  const sql = `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`;
  return (row) => ({ sql, parameters: columns.map((column) => row[column]) });
}

/**
 * A parameter of a part that is the value of an earlier part's parameter, sent once: Postgres converts
 * each parameter it is sent (an array, a timestamp, a JSON document) on every execution, whether or not
 * the part that reads it runs. The earlier parameter's type is the one both parts read it as.
 */
export class SharedParameter {
  constructor(
    /** The earlier part's index, as `add` answered it */
    readonly part: number,
    /** Its placeholder's number, 1 for $1 */
    readonly position: number,
  ) {}
}

export class StatementBatch {
  private readonly parts: StatementPart[] = [];

  /** Adds a part; answers its index, under which `run` returns its rows. */
  add(part: StatementPart): number {
    this.parts.push(part);
    return this.parts.length - 1;
  }

  /** Parameter `position` of part `part` (added before), to give a later part as one of its parameters. */
  shared(part: number, position: number): SharedParameter {
    const parameters = this.parts[part]?.parameters ?? [];
    if (position < 1 || position > parameters.length || parameters[position - 1] instanceof SharedParameter) {
      throw new Error(`part ${part} has no own parameter $${position} to share`);
    }
    return new SharedParameter(part, position);
  }

  get isEmpty(): boolean {
    return this.parts.length === 0;
  }

  /**
   * Sends every part as one statement; answers the rows of each returning part, by index. With
   * `deferrable` (a step that reads none of its rows back) inside a lazy unit of work (a keyed request
   * that has not written yet), the statement is kept and sent at the unit's commit with the key's answer
   * as one more part: then nothing is answered here. A step that the statement itself may refuse (it
   * raises) says which errors are that refusal with `refusedBy`, and answers as if it were not refused:
   * when it is, at the commit, the request runs again with the statement sent here (UnitOfWork,
   * DeferredWriteRefused).
   */
  async run(
    executor: Executor,
    options: { deferrable?: boolean; refusedBy?: (err: unknown) => boolean } = {},
  ): Promise<Map<number, Record<string, unknown>[]>> {
    if (
      options.deferrable &&
      currentUnit()?.deferBatch({
        send: (execute, last) => this.send(execute, last),
        refusedBy: options.refusedBy,
      })
    ) {
      return new Map();
    }
    const { rows } = await executor.executeQuery<{ part: number; row: Record<string, unknown> }>(
      this.compile(),
    );
    const byPart = new Map<number, Record<string, unknown>[]>();
    for (const row of rows) byPart.set(row.part, [...(byPart.get(row.part) ?? []), row.row]);
    return byPart;
  }

  private async send(
    execute: (query: CompiledQuery) => Promise<unknown>,
    last: StatementPart | undefined,
  ): Promise<void> {
    await execute(this.compile(last));
  }

  private compile(last?: StatementPart): CompiledQuery {
    const parts = last ? [...this.parts, last] : this.parts;
    const parameters: unknown[] = [];
    for (const part of parts) {
      for (const value of part.parameters) if (!(value instanceof SharedParameter)) parameters.push(value);
    }
    const { name, text } = statementOf(parts);
    return preparedStatement(name, text, parameters);
  }
}

interface BatchStatement {
  name: string;
  text: string;
}

/**
 * The statement of each combination of parts met so far: a write path sends the same parts on every
 * request, so its text (placeholders renumbered, CTEs joined) and its name (a hash of the text) are built
 * once, not per request. The combinations are fixed by the code; the bound only guards against a caller
 * that builds its SQL per request. They are found part by part (a tree of maps keyed by each part's
 * text), not by the parts' texts joined: a joined key is a new string of some kilobytes on every request,
 * copied and hashed for one lookup (13 of the 43 µs a staged transfer cost Node before it is sent).
 */
interface StatementNode {
  next: Map<string, StatementNode>;
  statement?: BatchStatement;
}
let statements: StatementNode = { next: new Map() };
let statementsKept = 0;
const STATEMENTS_KEPT = 1_000;

function statementOf(parts: readonly StatementPart[]): BatchStatement {
  let node = statements;
  for (const part of parts)
    node = childOf(childOf(node, `${part.returns ? 'r' : 'w'}${sharing(part)}`), part.sql);
  if (!node.statement) {
    // past the bound, the tree starts over (this statement is built, not kept)
    if (++statementsKept > STATEMENTS_KEPT) {
      statements = { next: new Map() };
      statementsKept = 0;
      return buildStatement(parts);
    }
    node.statement = buildStatement(parts);
  }
  return node.statement;
}

function childOf(node: StatementNode, key: string): StatementNode {
  const found = node.next.get(key);
  if (found) return found;
  const child: StatementNode = { next: new Map() };
  node.next.set(key, child);
  return child;
}

function buildStatement(parts: readonly StatementPart[]): BatchStatement {
  const [only] = parts;
  // One part alone is sent as it is (a plain INSERT needs no CTE around it).
  if (parts.length === 1 && only && !only.returns) return { name: nameOf(only.sql), text: only.sql };
  // Each part's placeholders renumbered: its own parameters in the order sent, a shared one as the
  // number of the parameter it shares.
  let sent = 0;
  const numbers: number[][] = [];
  const statements: string[] = [];
  const selects: string[] = [];
  parts.forEach((part, index) => {
    const own = part.parameters.map((value) =>
      value instanceof SharedParameter ? (numbers[value.part]?.[value.position - 1] as number) : ++sent,
    );
    numbers.push(own);
    statements.push(part.sql.replace(/\$(\d+)/g, (_, n: string) => `$${own[Number(n) - 1]}`));
    if (part.returns) selects.push(`SELECT ${index} AS part, to_jsonb(p${index}.*) AS row FROM p${index}`);
  });
  const ctes = (count: number) => statements.slice(0, count).map((sql, index) => `p${index} AS (${sql})`);
  const last = statements.at(-1) as string;
  let text: string;
  if (selects.length > 0) text = `WITH ${ctes(parts.length).join(',\n')}\n${selects.join('\nUNION ALL\n')}`;
  // Nothing wanted back: the last write is the statement itself, which answers no rows (no row
  // description for the driver to read). A part with a WITH of its own can only be a CTE.
  else if (/^\s*(INSERT|UPDATE|DELETE)\b/i.test(last))
    text = `WITH ${ctes(parts.length - 1).join(',\n')}\n${last}`;
  else
    text = `WITH ${ctes(parts.length).join(',\n')}\nSELECT NULL::int AS part, NULL::jsonb AS row WHERE false`;
  return { name: nameOf(text), text };
}

/** Which of a part's parameters are shared, and with what: they change its text, so they key it too. */
function sharing(part: StatementPart): string {
  let key = '';
  part.parameters.forEach((value, i) => {
    if (value instanceof SharedParameter) key += `$${i + 1}=${value.part}.${value.position};`;
  });
  return key;
}

const nameOf = (text: string) => `batch_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
