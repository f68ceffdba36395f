// An event's object ids are read from its payload twice over (migration 0081): by the outbox's rule in
// TypeScript for the event's view, and by event_object_ids() in the database for the index that finds an
// object's events. If the two drifted apart, a tenant would see an id on an event that a search by it does
// not find; so here they are held equal over every shape of body, and the search is planned with
// sequential scans priced out and must name the index.
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aboutObject, objectIdsOf } from '../../src/platform/events/object-ids.ts';
import { Harness } from '../harness/harness.ts';
import { planWithoutSeqScans } from '../harness/query-plans.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(async () => {
  await h.close();
});

async function inDatabase(body: unknown): Promise<string[]> {
  const { rows } = await sql<{
    ids: string[];
  }>`SELECT event_object_ids(${JSON.stringify(body)}) AS ids`.execute(h.services.db);
  return rows[0]?.ids ?? [];
}

const sorted = (ids: string[]) => [...new Set(ids)].sort();

const KEYS = [
  'orderId',
  'order_id',
  'Id',
  'eventId',
  'event_id',
  'reference',
  'references',
  'identifier',
  'paid',
];
const value = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom('', 'cust_01M91Z8WDX48A8ETP910DW73KJ', '0d432326-5db8-4595-aacf-0d3ffc1056bc'),
  fc.integer(),
  fc.constantFrom(10.9, -1, 0),
  fc.boolean(),
  fc.constant(null),
  fc.constant({ nested: 'x' }),
  fc.constant(['a']),
);
const record = fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 6 });
const body = fc
  .record(
    {
      top: record,
      data: fc.oneof(record, fc.constant('not an object'), fc.constant([1])),
      resource: record,
    },
    { requiredKeys: ['top'] },
  )
  .map(({ top, ...groups }) => ({ ...top, ...groups }));

describe('an event’s object ids', () => {
  it('are the same by the outbox’s rule and by the database’s', async () => {
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        expect(sorted(await inDatabase(b))).toEqual(sorted(objectIdsOf(b)));
      }),
      { numRuns: 200 },
    );
  });

  it('are found by the events’ index of their hashes', async () => {
    const query = sql`SELECT id FROM events WHERE ${aboutObject('ord_1')}`.compile(h.services.db);
    const plan = (await planWithoutSeqScans(h.services.db, query)).join('\n');
    expect(plan).toMatch(
      /Bitmap Index Scan on events_object_keys .*\n *Index Cond: \(event_object_keys\(payload\) @>/,
    );
  });
});
