// Where the block scanner starts. A deposit address handed out before the scanner's first sweep must be
// covered: the scan's starting block is recorded at boot, or in the transaction that hands out the first
// address when the boot could not (the node was down then). A payment mined before the first sweep is
// credited either way.
import pg from 'pg';
import { type Hex, parseEther } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Anvil, anvilAccount, serverOnChain } from '../harness/anvil.ts';
import { anOrder, aStore, chooseOnPayPage, orderOf } from '../harness/crypto-builders.ts';
import { freePort, Harness } from '../harness/harness.ts';

const CONFIRMATIONS = 3;
let anvil: Anvil;

beforeAll(async () => {
  anvil = await Anvil.start();
  await anvil.mine(5);
}, 60_000);

afterAll(() => anvil?.stop());

async function payTo(address: Hex, amount: string): Promise<void> {
  await anvil.wallet(anvilAccount(0).account).sendTransaction({ to: address, value: parseEther(amount) });
}

/**
 * A fresh Tessera on the chain (its own database) whose sweeps run only when the test advances the clock;
 * closed after the test's body.
 */
async function onChain(rpcUrl: string, body: (h: Harness, db: pg.Client) => Promise<void>): Promise<void> {
  const { env } = await serverOnChain(rpcUrl, { TESSERA_EVM_CONFIRMATIONS: String(CONFIRMATIONS) });
  const { DATABASE_URL: _db, TESSERA_ADMIN_TOKEN: _t, TESSERA_ENCRYPTION_KEY: _k, ...chainEnv } = env;
  const h = await Harness.start({ env: chainEnv });
  const db = new pg.Client({ connectionString: h.databaseUrl });
  await db.connect();
  try {
    await body(h, db);
  } finally {
    await db.end();
    await h.close();
  }
}

const scanState = async (db: pg.Client) =>
  (await db.query<{ block_number: string }>('SELECT block_number FROM evm_scan_state')).rows[0];

describe('the scanner starts before any address is handed out', () => {
  it('credits a payment mined before the first sweep (the start recorded at boot)', async () => {
    await onChain(anvil.url, async (h) => {
      const store = await aStore(h);
      const order = await anOrder(h, store, { total: '15.00' });
      const { address, amount } = await chooseOnPayPage(h, order.id, 'ETH:ETH');
      await payTo(address, amount);
      await anvil.mine(CONFIRMATIONS + 1);
      await h.advanceClock(1); // the scanner's first sweep
      await h.advanceClock(1);
      const paid = await orderOf(h, store, order.id);
      expect(paid.status).toBe('paid');
      expect(paid.transfers).toHaveLength(1);
    });
  });

  it('records the start in the transaction that hands out the first address when boot could not', async () => {
    await onChain(anvil.url, async (h, db) => {
      // As if the node had been down at boot: no scan position yet.
      await db.query('DELETE FROM evm_blocks');
      await db.query('DELETE FROM evm_scan_state');
      const store = await aStore(h);
      const order = await anOrder(h, store, { total: '16.00' });
      const head = await anvil.public.getBlockNumber();
      const { address, amount } = await chooseOnPayPage(h, order.id, 'ETH:ETH');
      expect(await scanState(db)).toEqual({ block_number: String(head) });
      await payTo(address, amount);
      await anvil.mine(CONFIRMATIONS);
      await h.advanceClock(1);
      const paid = await orderOf(h, store, order.id);
      expect(paid.status).toBe('paid');
      expect(paid.transfers).toHaveLength(1);
    });
  });

  it('hands out no address while the node cannot say where the scan starts (503, nothing written)', async () => {
    await onChain(`http://127.0.0.1:${await freePort()}`, async (h, db) => {
      const store = await aStore(h);
      const order = await anOrder(h, store, { total: '17.00' });
      const chosen = await h.request('POST', `/crypto/pay/${order.id}/choose`, {
        form: { option: 'ETH:ETH' },
      });
      expect(chosen.status).toBe(503);
      expect(chosen.text).not.toContain('127.0.0.1');
      expect((await db.query('SELECT 1 FROM evm_addresses')).rowCount).toBe(0);
      expect(await scanState(db)).toBeUndefined();
    });
  });
});
