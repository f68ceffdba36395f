// The per-owner indexes on an 8-byte hash of the owner's id (platform/db/owner-hash.ts): a card
// transaction's partner and cardholder (migration 0082), a ledger entry's account (0085), a crypto order's
// store (0086), an event's tenant (0088). Postgres uses an expression index only for a read that names the very expression it was
// built on; a read whose condition drifted from its migration's would scan the table and still answer
// right. So each read's shape is planned here with sequential scans priced out, and must search its index.
import { type CompiledQuery, type RawBuilder, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/platform/db/database.ts';
import { ownedBy, ownedByAny } from '../../src/platform/db/owner-hash.ts';
import { madeBefore, madeSince } from '../../src/platform/events/events-service.ts';
import { Harness } from '../harness/harness.ts';
import { planWithoutSeqScans, searchedByHash } from '../harness/query-plans.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(async () => {
  await h.close();
});

/** The indexes a read searches by an owner's hash, with sequential scans priced out */
const searched = (query: { compile(db: Db): CompiledQuery }) =>
  searchedByHash(h.services.db, query.compile(h.services.db));

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
      expect(await searched(list)).toEqual(['crypto_orders_store_hash']);
    }
  });
});

/** A page of events newest first, on the conditions the events service reads them by */
const newestEvents = (...conditions: RawBuilder<boolean>[]) => {
  let query = h.services.db.selectFrom('events as e').select('e.id');
  for (const condition of conditions) query = query.where(condition);
  return query.orderBy('e.id', 'desc').limit(26);
};

describe('an event’s per-tenant index', () => {
  it('serves a tenant’s events newest first, after a cursor, from a time, and a scope of several tenants', async () => {
    const page = newestEvents(sql`e.api = 'issuing'`, ownedBy('e.tenant_id', 'ptn_1'), sql`e.id < 'evt_9'`);
    expect(await searched(page)).toEqual(['events_tenant_hash']);
    const since = newestEvents(ownedBy('e.tenant_id', '2001'), madeSince(new Date('2026-12-01')));
    expect(await searched(since)).toEqual(['events_tenant_hash']);
    const sites = newestEvents(sql`e.api = 'payments'`, ownedByAny('e.tenant_id', ['2001', '2002']));
    expect(await searched(sites)).toEqual(['events_tenant_hash']);
  });

  it('leaves the operator’s time windows to the primary key, as ranges of ids (migration 0089)', async () => {
    const window = newestEvents(madeSince(new Date('2026-11-01')), madeBefore(new Date('2026-12-01')));
    const plan = await planWithoutSeqScans(h.services.db, window.compile());
    // The primary key searched by the window's ids (a bitmap on a table this small)
    expect(plan.join('\n')).toMatch(
      /Index (Only )?Scan (Backward )?(using|on) events_pkey[^\n]*\n\s+Index Cond: \(\(id >=/,
    );
  });
});
