// A site's balance is split in shards so its captures do not queue on one row: captures credit one
// shard, debits (refunds, credits to a card) draw on all of them, fullest first. Under concurrent
// captures, refunds and credits nothing deadlocks, no shard goes below zero, the balance is exactly what
// was captured less what was paid out, and a debit larger than any one shard is taken from several.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';
import { aCustomer, aMerchant, anOrder, payments, type TestMerchant } from '../harness/payments-builders.ts';

let h: Harness;
let merchant: TestMerchant;
let customer: number;
let siteId: number;

beforeAll(async () => {
  h = await Harness.start({ env: { TESSERA_RATE_LIMIT_PER_MINUTE: '1000000' } });
  merchant = await aMerchant(h);
  customer = await aCustomer(h, merchant);
  siteId = merchant.sites[0]?.id as number;
});
afterAll(() => h?.close());

const shards = async () =>
  (
    await sql<{ posted: string; available: string }>`
      SELECT posted::text, (posted - pending_debits)::text AS available FROM ledger_balances
      WHERE owner_type = 'payments_site' AND owner_id = ${String(siteId)} ORDER BY purpose`.execute(
      h.services.db,
    )
  ).rows.map((row) => ({ posted: BigInt(row.posted), available: BigInt(row.available) }));

const balance = () => h.services.payments.transactions.siteBalance(siteId, 'EUR');

describe('a site balance in shards', () => {
  it('takes concurrent captures, refunds and credits exactly, without a deadlock or a negative shard', async () => {
    const orders = await Promise.all(
      Array.from({ length: 32 }, () =>
        payments(h, merchant, 'POST', '/order', anOrder(customer, { amount: '10.00' })),
      ),
    );
    expect(orders.map((o) => o.status)).toEqual(orders.map(() => 201));
    expect(await balance()).toBe(320_00n);
    const credited = (await shards()).filter((shard) => shard.posted > 0n);
    expect(credited.length).toBeGreaterThan(1);

    // Refunds of half the orders race new captures and credits to cards.
    const refunds = orders
      .slice(0, 16)
      .map((o) =>
        payments(h, merchant, 'DELETE', `/transaction/${o.body.data.transactionId}`, { amount: '10.00' }),
      );
    const captures = Array.from({ length: 16 }, () =>
      payments(h, merchant, 'POST', '/order', anOrder(customer, { amount: '5.00' })),
    );
    const credits = Array.from({ length: 4 }, () =>
      payments(
        h,
        merchant,
        'POST',
        '/order',
        anOrder(customer, { amount: '7.00', orderType: 'credit', cardTransactionMode: 'credit' }),
      ),
    );
    const answers = await Promise.all([...refunds, ...captures, ...credits]);
    expect(answers.map((a) => a.status).filter((status) => status >= 300)).toEqual([]);
    expect(await balance()).toBe(320_00n - 16n * 10_00n + 16n * 5_00n - 4n * 7_00n);
    for (const shard of await shards()) expect(shard.available).toBeGreaterThanOrEqual(0n);
    await expectLedgerInvariants(h);
  });

  it('draws a debit larger than any shard from several, and refuses one larger than them all', async () => {
    const total = await balance();
    const largest = (await shards()).reduce(
      (max, shard) => (shard.available > max ? shard.available : max),
      0n,
    );
    expect(total).toBeGreaterThan(largest);
    const credit = (amountMinor: bigint) =>
      payments(
        h,
        merchant,
        'POST',
        '/order',
        anOrder(customer, {
          amount: `${amountMinor / 100n}.${String(amountMinor % 100n).padStart(2, '0')}`,
          orderType: 'credit',
          cardTransactionMode: 'credit',
        }),
      );
    const spread = await credit(largest + 1_00n);
    expect(spread.status).toBe(201);
    expect(await balance()).toBe(total - largest - 1_00n);

    const refused = await credit((await balance()) + 1n);
    expect(refused.status).toBe(402);
    expect(await balance()).toBe(total - largest - 1_00n);
    for (const shard of await shards()) expect(shard.available).toBeGreaterThanOrEqual(0n);
    await expectLedgerInvariants(h);
  });
});
