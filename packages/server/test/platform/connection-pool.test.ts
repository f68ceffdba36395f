// No request holds one connection while waiting for another: three times as many concurrent writes as
// the pool has connections, on a fresh database (where system ledger accounts are opened on first use),
// all complete. And the guard that makes a nested acquisition fail loudly.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NestedAcquisitionError } from '../../src/platform/db/connection-scope.ts';
import { runTransaction } from '../../src/platform/db/transact.ts';
import { aStore, orderDocument } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';
import { aCustomer, aMerchant, anOrder } from '../harness/payments-builders.ts';

const POOL = 4;
let h: Harness;
beforeAll(async () => {
  h = await Harness.start({ env: { TESSERA_DB_POOL_SIZE: String(POOL) } });
});
afterAll(async () => {
  await h.close();
});

/** Settles within the deadline, or fails the test instead of hanging it. */
function within<T>(promise: Promise<T>, ms = 20_000): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms)),
  ]);
}

describe(`a pool of ${POOL} connections`, () => {
  it(`serves ${3 * POOL} concurrent payments orders (with and without keys) on a fresh database`, async () => {
    const merchant = await aMerchant(h);
    const customerId = await aCustomer(h, merchant);
    const orders = Array.from({ length: 3 * POOL }, (_, i) =>
      h.request('POST', '/payments/order', {
        headers: {
          ...merchant.auth,
          ...(i % 2 ? { 'idempotency-key': randomBytes(8).toString('hex') } : {}),
        },
        // Several currencies: each opens its own site account and receivable shards on first use.
        form: anOrder(customerId, { currency: ['EUR', 'USD', 'RON'][i % 3] ?? 'EUR' }),
      }),
    );
    const answers = await within(Promise.all(orders));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 201));
    await expectLedgerInvariants(h);
  });

  it(`serves ${3 * POOL} concurrent card authorizations and crypto orders`, async () => {
    const partner = await h.admin<{ apiKey: string }>('POST', '/partners', {
      json: { name: 'Pool partner' },
    });
    const cardholder = await aCardholder(h, partner.body.apiKey, 1_000_000n);
    const store = await aStore(h);
    const work = Array.from({ length: 3 * POOL }, (_, i) =>
      i % 2
        ? h.request('POST', '/sandbox/issuing/authorizations', {
            headers: { authorization: `Bearer ${h.adminToken}`, 'idempotency-key': `auth-${i}` },
            json: { cardId: cardholder.cardId, amount: '1.00', currency: 'EUR', merchant: 'Pool shop' },
          })
        : h.request('POST', '/crypto/api/stores/orders', { headers: store.auth, json: orderDocument() }),
    );
    const answers = await within(Promise.all(work));
    for (const answer of answers) expect(answer.status, answer.text).toBeLessThan(300);
    await expectLedgerInvariants(h);
  });
});

describe('the nested-acquisition guard', () => {
  it('fails a query on the pool from inside a transaction, loudly', async () => {
    const { db } = h.services;
    await expect(
      runTransaction(db, async () => {
        await db.selectFrom('partners').select('id').execute();
      }),
    ).rejects.toBeInstanceOf(NestedAcquisitionError);
    // The transaction's own queries and queries after it are fine.
    await runTransaction(db, (tx) => tx.selectFrom('partners').select('id').execute());
    await db.selectFrom('partners').select('id').execute();
  });
});
