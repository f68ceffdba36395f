// The block scanner killed mid-scan: a real `tessera serve` on anvil falls ~300 blocks behind (it was
// down while the buyers paid), is SIGKILLed while it works through them, and starts again. It resumes
// from the last block it committed: every payment is seen and confirmed exactly once.
import pg from 'pg';
import { type Hex, parseEther } from 'viem';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Anvil, anvilAccount, serverOnChain } from '../harness/anvil.ts';
import { anOrder, aStore, chooseOnPayPage } from '../harness/crypto-builders.ts';
import { ServerProcess } from '../harness/server-process.ts';

const ORDERS = 6;
const BLOCKS_BETWEEN_PAYMENTS = 50;
let anvil: Anvil;
let env: Record<string, string>;
let db: pg.Client;

beforeAll(async () => {
  anvil = await Anvil.start();
  const chain = await serverOnChain(anvil.url, { TESSERA_EVM_CONFIRMATIONS: '3' });
  env = chain.env;
  db = new pg.Client({ connectionString: chain.databaseUrl });
  await db.connect();
}, 60_000);

afterAll(async () => {
  await db?.end();
  anvil?.stop();
});

const scannedTo = async () =>
  BigInt((await db.query<{ n: string }>('SELECT block_number AS n FROM evm_scan_state')).rows[0]?.n ?? '-1');

it('resumes from the last committed block after kill -9, each payment seen and confirmed once', async () => {
  let server = await ServerProcess.start(env);
  const store = await aStore(server);
  const auth = store.auth;
  const targets: { id: string; address: Hex; amount: string }[] = [];
  for (let i = 0; i < ORDERS; i++) {
    const created = await anOrder(server, store, { total: '20.00' });
    const { address, amount } = await chooseOnPayPage(server, created.id, 'ETH:ETH');
    targets.push({ id: created.id, address, amount });
  }
  await expect.poll(scannedTo, { timeout: 10_000 }).toBeGreaterThanOrEqual(0n);
  const start = await scannedTo();
  await server.stop('SIGKILL');

  // While it is down, the buyers pay, a payment every 50 blocks.
  const buyer = anvil.wallet(anvilAccount(0).account);
  for (const t of targets) {
    await buyer.sendTransaction({ to: t.address, value: parseEther(t.amount) });
    await anvil.mine(BLOCKS_BETWEEN_PAYMENTS);
  }
  const head = await anvil.public.getBlockNumber();

  server = await ServerProcess.start(env);
  await expect.poll(scannedTo, { timeout: 20_000, interval: 5 }).toBeGreaterThan(start + 60n);
  const killedAt = await scannedTo();
  await server.stop('SIGKILL');
  expect(killedAt).toBeLessThan(head);

  server = await ServerProcess.start(env);
  await expect.poll(scannedTo, { timeout: 20_000 }).toBe(head);
  const transfers = await db.query<{ id: string; status: string }>(
    "SELECT id, status FROM evm_transfers WHERE direction = 'in'",
  );
  expect(transfers.rows).toHaveLength(ORDERS);
  expect(transfers.rows.every((r) => r.status === 'confirmed')).toBe(true);
  for (const t of targets) {
    const order = await server.request<{ data: { attributes: { status: string; transfers: unknown[] } } }>(
      'GET',
      `/crypto/api/stores/orders/${t.id}`,
      { headers: auth },
    );
    expect(order.body.data.attributes.status).toBe('paid');
    expect(order.body.data.attributes.transfers).toHaveLength(1);
  }
  const detected = await db.query<{ type: string; n: string }>(
    "SELECT type, count(*) AS n FROM events WHERE type IN ('ORDER.PAYMENT.DETECTED', 'ORDER.PAYMENT.RECEIVED') GROUP BY type",
  );
  expect(Object.fromEntries(detected.rows.map((r) => [r.type, Number(r.n)]))).toEqual({
    'ORDER.PAYMENT.DETECTED': ORDERS,
    'ORDER.PAYMENT.RECEIVED': ORDERS,
  });
  const ledger = await db.query<{ asset: string; total: string }>(
    'SELECT asset, sum(amount) AS total FROM ledger_entries GROUP BY asset',
  );
  for (const row of ledger.rows) expect(row.total, row.asset).toBe('0');
  await server.stop();
}, 120_000);

it('a first process that never swept: the payment mined while it was down, 300 blocks ago, is credited', async () => {
  // A fresh database whose first process hands out an address and dies before its first sweep.
  const chain = await serverOnChain(anvil.url, { TESSERA_EVM_CONFIRMATIONS: '3' });
  const fresh = new pg.Client({ connectionString: chain.databaseUrl });
  await fresh.connect();
  try {
    let server = await ServerProcess.start({ ...chain.env, TESSERA_SWEEP_INTERVAL_MS: '3600000' });
    const store = await aStore(server);
    const created = await anOrder(server, store, { total: '21.00' });
    const { address, amount } = await chooseOnPayPage(server, created.id, 'ETH:ETH');
    await server.stop('SIGKILL');

    await anvil.wallet(anvilAccount(0).account).sendTransaction({ to: address, value: parseEther(amount) });
    await anvil.mine(300);

    server = await ServerProcess.start(chain.env);
    const statusOf = async () =>
      (
        await server.request<{ data: { attributes: { status: string } } }>(
          'GET',
          `/crypto/api/stores/orders/${created.id}`,
          { headers: store.auth },
        )
      ).body.data.attributes.status;
    await expect.poll(statusOf, { timeout: 20_000 }).toBe('paid');
    const transfers = await fresh.query("SELECT 1 FROM evm_transfers WHERE direction = 'in'");
    expect(transfers.rowCount).toBe(1);
    await server.stop();
  } finally {
    await fresh.end();
  }
}, 120_000);
