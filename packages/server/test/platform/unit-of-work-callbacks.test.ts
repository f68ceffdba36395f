// A unit of work (a request with an Idempotency-Key) runs its transactions as savepoints. What a step asked
// to run after the commit belongs to that step: when the step rolls back, it must not run when the unit
// commits (it did: a refused payout opened a site's balance accounts, rolled them back, and still cached
// their ids, so the site's next keyed capture posted to accounts that did not exist — a 500).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { afterCommit } from '../../src/platform/db/connection-scope.ts';
import { StatementBatch } from '../../src/platform/db/statement-batch.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments } from '../harness/payments-builders.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(() => h.close());

describe('after-commit work inside a unit of work', () => {
  it('runs for the steps that stood, never for a step that rolled back', async () => {
    const ran: string[] = [];
    const unit = h.services.createUnit();
    await unit.begin();
    await unit.run(async () => {
      await h.services.transact(async () => afterCommit(() => ran.push('kept')));
      await h.services
        .transact(async () => {
          afterCommit(() => ran.push('rolled back'));
          throw new Error('refused');
        })
        .catch(() => undefined);
      await h.services.transact(async () => afterCommit(() => ran.push('after')));
    });
    await unit.finish('commit');
    expect(ran).toEqual(['kept', 'after']);
  });

  it('a keyed refusal that touched a site’s balance leaves its next keyed capture working', async () => {
    const m = await aMerchant(h);
    const siteId = String(m.sites[0]?.id);
    const keyed = (key: string) => ({ ...m.auth, 'idempotency-key': key });
    // Nothing to pay out: a 400, after the balance's accounts were opened inside the refused step.
    const refused = await h.request('POST', '/payments/payout', {
      headers: keyed('refused-payout'),
      form: { siteId, currency: 'EUR' },
    });
    expect(refused.status).toBe(400);
    const customer = await aCustomer(h, m);
    const order = await h.request('POST', '/payments/order', {
      headers: keyed('first-capture'),
      form: anOrder(customer, { siteId, amount: '12.00' }),
    });
    expect(order.status, order.text).toBe(201);
    expect((await payments(h, m, 'GET', `/balance?siteId=${siteId}`)).body.data[0]).toMatchObject({
      pending: '12.00',
    });
  });

  it('a lazy unit keeps a one-statement write for its commit, and a read after it sees it', async () => {
    const db = h.services.db;
    await sql`CREATE TABLE IF NOT EXISTS test_deferred (id text PRIMARY KEY)`.execute(db);
    const opened: string[] = [];
    const unit = h.services.createUnit();
    unit.beginLazily(async (begin) => {
      opened.push(String((await begin('SELECT 1 AS one'))[0]?.one));
    });
    const found = await unit.run(async () => {
      const batch = new StatementBatch();
      batch.add({ sql: 'INSERT INTO test_deferred (id) VALUES ($1)', parameters: ['kept'] });
      await batch.run(db, { deferrable: true });
      // Deferred: nothing was sent yet, so the unit has not opened.
      expect(opened).toEqual([]);
      return { inside: await sql<{ id: string }>`SELECT id FROM test_deferred`.execute(db) };
    });
    // The read inside the unit opened it (BEGIN with its statement) and sent the write first.
    expect(opened).toEqual(['1']);
    expect(found.inside.rows).toEqual([{ id: 'kept' }]);
    await unit.commitWith({
      sql: 'INSERT INTO test_deferred (id) VALUES ($1)',
      parameters: ["it's the answer"],
    });
    const after = await sql<{ id: string }>`SELECT id FROM test_deferred ORDER BY id`.execute(db);
    expect(after.rows.map((r) => r.id)).toEqual(["it's the answer", 'kept']);
  });
});
