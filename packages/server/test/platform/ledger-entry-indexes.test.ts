// A ledger entry's per-account index is on a hash of the account's id (migration 0085, owner-hash.ts), and
// Postgres uses an expression index only for a read that names the very expression it was built on. A read
// whose condition drifted from the migration's would scan every entry and still answer right: so each
// read's shape is planned here with sequential scans priced out, and must search the index.
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

const searched = (query: RawBuilder<unknown>) => searchedByHash(h.services.db, query.compile(h.services.db));

describe('a ledger entry’s per-account index', () => {
  it('serves the console’s page of an account’s entries, newest first', async () => {
    const page = sql`SELECT e.transaction_id FROM ledger_entries e
      JOIN ledger_transactions t ON t.id = e.transaction_id
      WHERE ${ownedBy('e.account_id', 'lac_1')} AND e.transaction_id < 'ltx_9'
      ORDER BY e.transaction_id DESC LIMIT 26`;
    expect(await searched(page)).toEqual(['ledger_entries_account_hash']);
  });

  it('serves an issuing statement’s opening balance and its month of movements', async () => {
    const opening = sql`SELECT sum(e.amount) FROM ledger_entries e
      JOIN ledger_transactions t ON t.id = e.transaction_id
      WHERE ${ownedBy('e.account_id', 'lac_1')} AND t.status = 'posted' AND t.created_at < '2026-12-01'`;
    expect(await searched(opening)).toEqual(['ledger_entries_account_hash']);
  });

  it('serves the balances’ probe for an account with entries and reconcile’s totals per account', async () => {
    const probe = sql`SELECT a.asset FROM ledger_accounts a WHERE a.owner_type = 'payments_site'
      AND (SELECT 1 FROM ledger_entries e WHERE ${ownedBy('e.account_id', sql.ref('a.id'))} LIMIT 1) IS NOT NULL`;
    expect(await searched(probe)).toEqual(['ledger_entries_account_hash']);
    const totals = sql`SELECT a.asset, x.total FROM ledger_accounts a CROSS JOIN LATERAL (
        SELECT sum(e.amount) AS total FROM ledger_entries e WHERE ${ownedBy('e.account_id', sql.ref('a.id'))}
      ) x WHERE a.owner_type = 'platform'`;
    expect(await searched(totals)).toEqual(['ledger_entries_account_hash']);
  });
});
