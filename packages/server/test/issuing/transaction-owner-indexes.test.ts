// A card transaction's per-owner indexes are on a hash of the owner's id (migration 0082, owner-hash.ts),
// and Postgres uses an expression index only for a read that names the very expression it was built on. If
// a read's condition and the migration's drifted apart, the lists would scan the table and still answer
// right: so each read's shape is planned here with sequential scans priced out, and must search its index.
import { type RawBuilder, sql } from 'kysely';
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

/** The indexes a query searches by an owner's hash, with sequential scans priced out */
const searched = (query: RawBuilder<unknown>) => searchedByHash(h.services.db, query.compile(h.services.db));

describe('a card transaction’s per-owner indexes', () => {
  it('serve the console’s list of a partner’s transactions, newest first', async () => {
    const list = sql`SELECT t.id FROM issuing_transactions t WHERE ${ownedBy('t.partner_id', 'ptn_1')}
      ORDER BY t.seq DESC LIMIT 26`;
    expect(await searched(list)).toEqual(['issuing_transactions_partner_hash']);
  });

  it('serve the lists of a cardholder’s transactions (the console’s filter, the API’s list)', async () => {
    const list = sql`SELECT t.id FROM issuing_transactions t WHERE ${ownedBy('t.partner_id', 'ptn_1')}
      AND ${ownedBy('t.customer_id', 'cust_1')} ORDER BY t.seq DESC LIMIT 26`;
    expect(await searched(list)).toContain('issuing_transactions_customer_hash');
    const api = sql`SELECT id FROM issuing_transactions WHERE ${ownedBy('customer_id', 'cust_1')}
      ORDER BY seq DESC LIMIT 20`;
    expect(await searched(api)).toEqual(['issuing_transactions_customer_hash']);
  });

  it('serve the rapid-movement scenario’s sum of what a cardholder spent after a topup', async () => {
    const spent = sql`SELECT (SELECT coalesce(sum(x.amount), 0) FROM issuing_transactions x
      WHERE ${ownedBy('x.customer_id', sql.ref('t.customer_id'))} AND x.created_at >= t.completed_at)
      FROM issuing_topups t`;
    expect(await searched(spent)).toEqual(['issuing_transactions_customer_hash']);
  });
});
