// The ledger's invariants over the whole test database: per asset the entries sum to zero, no bounded
// account is negative, and every balance equals the sum of its posted entries. The writes that post are
// the hot paths, so their references without a foreign key are checked with them (reference-invariants.ts).
import { sql } from 'kysely';
import { expect } from 'vitest';
import type { Harness } from './harness.ts';
import { expectReferencesHold } from './reference-invariants.ts';

export async function expectLedgerInvariants(h: Harness): Promise<void> {
  const db = h.services.db;
  expect(
    (await sql`SELECT asset FROM ledger_entries GROUP BY asset HAVING sum(amount) <> 0`.execute(db)).rows,
  ).toEqual([]);
  expect(
    (
      await sql`SELECT id FROM ledger_accounts WHERE is_bounded AND (posted < 0 OR posted - pending_debits < 0)`.execute(
        db,
      )
    ).rows,
  ).toEqual([]);
  const drift = await sql`
    SELECT a.id FROM ledger_balances a
    WHERE a.posted <> coalesce((SELECT sum(e.amount) FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
                                 WHERE e.account_id = a.id AND t.status = 'posted'), 0)`.execute(db);
  expect(drift.rows).toEqual([]);
  // One leg per account and transaction, with no key to hold it (migration 0077): ledger_post merges them.
  expect(
    (
      await sql`SELECT transaction_id FROM ledger_entries GROUP BY transaction_id, account_id HAVING count(*) > 1`.execute(
        db,
      )
    ).rows,
  ).toEqual([]);
  await expectReferencesHold(h);
}

/** `GET /admin/reconcile` for the sandbox clock's day: clean, or the findings said */
export async function expectReconciledToday(h: Harness): Promise<void> {
  const clock = await h.request<{ now: string }>('GET', '/sandbox/clock', {
    headers: { authorization: `Bearer ${h.adminToken}` },
  });
  const reconcile = await h.admin<{ clean: boolean; findings: unknown[] }>(
    'GET',
    `/reconcile?date=${clock.body.now.slice(0, 10)}`,
  );
  expect(reconcile.body, JSON.stringify(reconcile.body.findings)).toMatchObject({ clean: true });
}
