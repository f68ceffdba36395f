// A part may take an earlier part's parameter (StatementBatch.shared): the value is sent once and both
// parts' placeholders name it. The ledger's fallback takes the transaction's and the entries' values so.
import type { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/harness/test-database.ts';
import { type DatabaseHandle, type Executor, openDatabase } from './database.ts';
import { StatementBatch } from './statement-batch.ts';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = openDatabase(await createTestDatabase(), { max: 1 });
});
afterAll(async () => {
  await handle.close();
});

/** The executor that also keeps each query it sends */
function recording(sent: CompiledQuery[]): Executor {
  return new Proxy(handle.db, {
    get(target, property, receiver) {
      if (property !== 'executeQuery') return Reflect.get(target, property, receiver);
      return (query: CompiledQuery) => {
        sent.push(query);
        return target.executeQuery(query);
      };
    },
  });
}

describe('shared parameters', () => {
  it('sends a shared value once, and each part reads it where it named it', async () => {
    const batch = new StatementBatch();
    const first = batch.add({
      sql: 'SELECT $1::text AS id, $2::int AS n',
      parameters: ['a', 2],
      returns: true,
    });
    batch.add({
      sql: 'SELECT $1::int + $2::int AS sum, $3::text AS id, $4::text AS own',
      parameters: [batch.shared(first, 2), 40, batch.shared(first, 1), 'b'],
      returns: true,
    });
    const sent: CompiledQuery[] = [];
    const rows = await batch.run(recording(sent));
    expect(rows.get(0)).toEqual([{ id: 'a', n: 2 }]);
    expect(rows.get(1)).toEqual([{ sum: 42, id: 'a', own: 'b' }]);
    expect(sent[0]?.parameters).toEqual(['a', 2, 40, 'b']);
    expect(sent[0]?.sql).toContain('SELECT $2::int + $3::int AS sum, $1::text AS id, $4::text AS own');
  });

  it('keeps apart the statements of the same parts shared differently', async () => {
    const run = async (position: number) => {
      const batch = new StatementBatch();
      const first = batch.add({
        sql: 'SELECT $1::int AS a, $2::int AS b',
        parameters: [1, 2],
        returns: true,
      });
      batch.add({ sql: 'SELECT $1::int AS c', parameters: [batch.shared(first, position)], returns: true });
      return (await batch.run(handle.db)).get(1);
    };
    expect(await run(1)).toEqual([{ c: 1 }]);
    expect(await run(2)).toEqual([{ c: 2 }]);
  });

  it('refuses to share what the part does not have, or itself shares', () => {
    const batch = new StatementBatch();
    const first = batch.add({ sql: 'SELECT $1::int AS a', parameters: [1], returns: true });
    const second = batch.add({
      sql: 'SELECT $1::int AS b',
      parameters: [batch.shared(first, 1)],
      returns: true,
    });
    expect(() => batch.shared(first, 2)).toThrow(/no own parameter \$2/);
    expect(() => batch.shared(second, 1)).toThrow(/no own parameter \$1/);
    expect(() => batch.shared(7, 1)).toThrow(/part 7/);
  });
});
