// A crypto order's per-store index is on a hash of the store's id (migration 0086, owner-hash.ts), and
// Postgres uses an expression index only for a read that names the very expression it was built on: the
// store's list of its orders (the API's and the console's, newest first) is planned here with sequential
// scans priced out, and must search the index.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownedBy } from '../../src/platform/db/owner-hash.ts';
import { Harness } from '../harness/harness.ts';
import { searchedByHash } from '../harness/query-plans.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(async () => {
  await h.close();
});

describe('a crypto order’s per-store index', () => {
  it('serves a store’s list of its orders, newest first, after a cursor and by status', async () => {
    const db = h.services.db;
    for (const list of [
      db
        .selectFrom('crypto_orders')
        .select(['id', 'seq'])
        .where(ownedBy('store_id', 'sto_1'))
        .where('seq', '<', '1000')
        .orderBy('seq', 'desc')
        .limit(21),
      db
        .selectFrom('crypto_orders as o')
        .select('o.id')
        .where(ownedBy('o.store_id', 'sto_1'))
        .where(sql<boolean>`o.status = 'paid'`)
        .orderBy('o.seq', 'desc')
        .limit(26),
    ]) {
      expect(await searchedByHash(db, list.compile())).toEqual(['crypto_orders_store_hash']);
    }
  });
});
