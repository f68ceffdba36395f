// A keyed write is one unit of work: its effect, its events and its key's answer commit together. Here
// the connection is cut before each statement of a request in turn (what the database sees when the
// process dies at that point), then the client retries with the same key. Whatever the crash point,
// the retry gets one answer and exactly one effect exists.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentUnit } from '../../src/platform/db/connection-scope.ts';
import { keyDigest } from '../../src/platform/idempotency/idempotency-store.ts';
import { aStore, orderDocument } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';
import { aCustomer, aMerchant, anOrder, type TestMerchant } from '../harness/payments-builders.ts';

/**
 * Cuts the connection before the n-th statement of a keyed request (its unit of work) seen while armed
 * (1-based); counts when n is 0. Statements outside a unit — the outbox and webhook workers the commit
 * wakes, whose timing varies with load — are not counted: cutting one of those instead would make a
 * crash point the request never felt.
 */
class CrashPoint {
  armed = false;
  crashAt = 0;
  seen = 0;

  /** Statements counted although no unit is current (those the answer's hook sends) */
  alsoCounts: (sql: string) => boolean = () => false;

  arm(crashAt: number, alsoCounts: (sql: string) => boolean = () => false) {
    this.armed = true;
    this.crashAt = crashAt;
    this.seen = 0;
    this.alsoCounts = alsoCounts;
  }

  disarm(): number {
    this.armed = false;
    return this.seen;
  }

  observe = (sql: string, connection: { destroy(): void }) => {
    if (!this.armed || !(currentUnit() || this.alsoCounts(sql))) return;
    this.seen++;
    if (this.seen === this.crashAt) connection.destroy();
  };
}

const crash = new CrashPoint();
let h: Harness;
let merchant: TestMerchant;
let customerId: number;

beforeAll(async () => {
  h = await Harness.start({ observeStatement: crash.observe });
  merchant = await aMerchant(h);
  customerId = await aCustomer(h, merchant);
});
afterAll(async () => {
  await h.close();
});

const orderRequest = (key: string, externalOrderId: string) => () =>
  h.request<{ data: { orderId: number } }>('POST', '/payments/order', {
    headers: { ...merchant.auth, 'idempotency-key': key },
    form: anOrder(customerId, { externalOrderId }),
  });

async function ordersWith(externalOrderId: string) {
  return h.services.db
    .selectFrom('payments_orders')
    .select(['id', 'status'])
    .where('external_order_id', '=', externalOrderId)
    .execute();
}

describe('a crash between any two statements of a keyed request', () => {
  it('never loses, doubles or strands a payments order', async () => {
    // How many statements one keyed order takes (the first order also opens ledger accounts).
    await orderRequest(`warm-${randomBytes(4).toString('hex')}`, 'warm-up')();
    crash.arm(0);
    const counted = await orderRequest(`count-${randomBytes(4).toString('hex')}`, 'count')();
    const statements = crash.disarm();
    expect(counted.status).toBe(201);
    // The customer and ids read, then the order's writes with the key's answer as one statement.
    expect(statements).toBeGreaterThanOrEqual(2);

    // Two more points than counted: a run can take a few statements more (a receivable shard's first
    // use opens its account), and a point past the commit is a crash after it: the answer is lost.
    for (let point = 1; point <= statements + 2; point++) {
      const key = `crash-${point}-${randomBytes(4).toString('hex')}`;
      const externalOrderId = `crash-${point}`;
      crash.arm(point);
      const crashed = await orderRequest(key, externalOrderId)();
      const ran = crash.disarm();
      const hasCrashed = point <= ran;
      if (hasCrashed) {
        expect(crashed.status, `statement ${point}`).toBeGreaterThanOrEqual(500);
        expect(await ordersWith(externalOrderId), `statement ${point}`).toHaveLength(0);
      }

      const retried = await orderRequest(key, externalOrderId)();
      expect(retried.status, `retry after statement ${point}: ${retried.text}`).toBe(201);
      expect(retried.headers.get('idempotency-replayed')).toBe(hasCrashed ? null : 'true');
      const again = await orderRequest(key, externalOrderId)();
      expect(again.headers.get('idempotency-replayed')).toBe('true');
      expect(again.text).toBe(retried.text);
      const orders = await ordersWith(externalOrderId);
      expect(orders, `statement ${point}`).toHaveLength(1);
      expect(orders[0]?.id).toBe(retried.body.data.orderId);
    }
    // Nothing half-written anywhere: no event, delivery or ledger movement of a crashed attempt.
    await expectLedgerInvariants(h);
    const orphanTransactions = await sql`
      SELECT t.id FROM payments_transactions t LEFT JOIN payments_orders o ON o.id = t.order_id WHERE o.id IS NULL
    `.execute(h.services.db);
    expect(orphanTransactions.rows).toEqual([]);
  }, 120_000);

  it('never loses or doubles a crypto order', async () => {
    const store = await aStore(h);
    const request = (key: string, reference: string) =>
      h.request<{ data: { id: string } }>('POST', '/crypto/api/stores/orders', {
        headers: { ...store.auth, 'idempotency-key': key },
        json: orderDocument({ reference }),
      });
    crash.arm(0);
    expect((await request('count-crypto', 'count-crypto')).status).toBe(201);
    const statements = crash.disarm();
    // One statement: the order with the key’s answer.
    expect(statements).toBeGreaterThanOrEqual(1);
    for (let point = 1; point <= statements + 2; point++) {
      const key = `crypto-crash-${point}`;
      crash.arm(point);
      const crashed = await request(key, key);
      const hasCrashed = point <= crash.disarm();
      if (hasCrashed) expect(crashed.status).toBeGreaterThanOrEqual(500);
      const retried = await request(key, key);
      expect(retried.status, retried.text).toBe(201);
      expect(retried.headers.get('idempotency-replayed')).toBe(hasCrashed ? null : 'true');
      const rows = await h.services.db
        .selectFrom('crypto_orders')
        .select('id')
        .where('reference', '=', key)
        .execute();
      expect(rows.map((r) => r.id)).toEqual([retried.body.data.id]);
    }
  }, 60_000);
});

describe('a crash between any two statements of a keyed card authorization refused at its commit', () => {
  it('never loses or doubles the decline', async () => {
    // An optimistic write: sent with the key's answer, refused there (the account is short), then the
    // request again the general way, which records the decline. Every statement of both is a crash point.
    const partner = await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Crashing' } });
    const holder = await aCardholder(h, partner.body.apiKey, 1_00n);
    const authorize = (key: string) =>
      h.request<{ transactionId: string; status: string; declineReason: string | null }>(
        'POST',
        '/sandbox/issuing/authorizations',
        {
          headers: { authorization: `Bearer ${h.adminToken}`, 'idempotency-key': key },
          json: { cardId: holder.cardId, amount: '2.00', currency: 'EUR', merchant: key },
        },
      );
    const keyAnswer = (sql: string) => sql.includes('INSERT INTO idempotency_keys');
    const transactionsOf = (key: string) =>
      h.services.db
        .selectFrom('issuing_transactions')
        .select(['id', 'status'])
        .where('merchant', '=', key)
        .execute();
    expect((await authorize('card-warm')).body.declineReason).toBe('insufficient_funds');
    crash.arm(0, keyAnswer);
    expect((await authorize('card-count')).body.declineReason).toBe('insufficient_funds');
    const statements = crash.disarm();
    // The optimistic statement with the key's answer, refused; BEGIN with the key's claim, the statement
    // again (refused), ROLLBACK, the card read; BEGIN with the claim, the decline's writes; its answer
    // with COMMIT. The first and the last are sent by the answer's hook, outside the unit's scope.
    expect(statements).toBeGreaterThanOrEqual(9);
    for (let point = 1; point <= statements + 1; point++) {
      const key = `card-crash-${point}`;
      crash.arm(point, keyAnswer);
      const crashed = await authorize(key);
      crash.disarm();
      // A crash at a ROLLBACK (after a refused statement) loses nothing: the request goes on and answers.
      const failed = crashed.status >= 500;
      if (failed) expect(await transactionsOf(key), `statement ${point}`).toHaveLength(0);
      else expect(crashed.status, `statement ${point}: ${crashed.text}`).toBe(201);
      const retried = await authorize(key);
      expect(retried.status, retried.text).toBe(201);
      expect(retried.body).toMatchObject({ status: 'declined', declineReason: 'insufficient_funds' });
      expect(retried.headers.get('idempotency-replayed')).toBe(failed ? null : 'true');
      if (!failed) expect(retried.text).toBe(crashed.text);
      expect(await transactionsOf(key)).toEqual([{ id: retried.body.transactionId, status: 'declined' }]);
    }
    await expectLedgerInvariants(h);
  }, 60_000);
});

describe('a crash anywhere, then several retries at once', () => {
  it('ends, for every key, with one order and one answer (fast-check)', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 4 }),
        async (crashAt, retries) => {
          const key = `prop-${run++}-${randomBytes(4).toString('hex')}`;
          crash.arm(crashAt);
          await orderRequest(key, key)();
          crash.disarm();
          // Concurrent duplicates: one runs (or replays), the others may meet the key's lock (409).
          const answers = await Promise.all(Array.from({ length: retries }, () => orderRequest(key, key)()));
          for (const answer of answers) expect([201, 409]).toContain(answer.status);
          const final = await orderRequest(key, key)();
          expect(final.status).toBe(201);
          const orders = await ordersWith(key);
          expect(orders).toHaveLength(1);
          expect(orders[0]?.id).toBe(final.body.data.orderId);
          for (const answer of answers.filter((a) => a.status === 201)) {
            expect(answer.body.data.orderId).toBe(final.body.data.orderId);
          }
        },
      ),
      { numRuns: 25 },
    );
    await expectLedgerInvariants(h);
  }, 120_000);
});

describe('keys', () => {
  it('sent many times at once on a one-statement order, run it once and answer it alike', async () => {
    const key = `raced-order-${randomBytes(4).toString('hex')}`;
    const results = await Promise.all(Array.from({ length: 8 }, () => orderRequest(key, 'raced')()));
    const fresh = results.filter((r) => r.status === 201 && r.headers.get('idempotency-replayed') === null);
    expect(fresh).toHaveLength(1);
    for (const r of results) {
      expect(r.status === 201 || r.status === 409, r.text).toBe(true);
      if (r.status === 201) expect(r.text).toBe(fresh[0]?.text);
    }
    expect(await ordersWith('raced')).toHaveLength(1);
    await expectLedgerInvariants(h);
  });

  it('are refused while their request runs, and free the moment its connection dies', async () => {
    // A request that dies after taking the key's lock: the server rolls back at once, so the retry
    // runs at once rather than meeting "in progress" for a day.
    // An order that keeps its card runs the general way: BEGIN, the key's lock and row, then its writes.
    const key = 'dies-holding-the-lock';
    const request = () =>
      h.request('POST', '/payments/order', {
        headers: { ...merchant.auth, 'idempotency-key': key },
        form: anOrder(customerId, { externalOrderId: 'dies', saveCard: '1' }),
      });
    crash.arm(3);
    const crashed = await request();
    crash.disarm();
    expect(crashed.status).toBeGreaterThanOrEqual(500);
    const retried = await request();
    expect(retried.status).toBe(201);
  });

  it('store their answer encrypted, and never run a request twice, even after the answer expired', async () => {
    const created = await h.admin<{ apiKey: string }>('POST', '/partners', {
      headers: { 'idempotency-key': 'secret-answer' },
      json: { name: 'Keyed partner' },
    });
    expect(created.status).toBe(201);
    const stored = await h.services.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('key_digest', '=', keyDigest({ scope: 'admin', key: 'secret-answer' }).digest)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(created.body.apiKey);

    await h.advanceClock(24 * 3600 + 1);
    const purged = await h.services.db
      .selectFrom('idempotency_keys')
      .select(['response_body', 'response_body_enc'])
      .where('key_digest', '=', keyDigest({ scope: 'admin', key: 'secret-answer' }).digest)
      .executeTakeFirstOrThrow();
    expect(purged).toEqual({ response_body: null, response_body_enc: null });
    const late = await h.admin<{ error: { code: string; field: string } }>('POST', '/partners', {
      headers: { 'idempotency-key': 'secret-answer' },
      json: { name: 'Keyed partner' },
    });
    expect(late.status).toBe(422);
    expect(late.body.error).toMatchObject({ code: 'idempotency_key_expired', field: 'Idempotency-Key' });
    const partners = await h.services.db
      .selectFrom('partners')
      .select('id')
      .where('name', '=', 'Keyed partner')
      .execute();
    expect(partners).toHaveLength(1);
  });
});
