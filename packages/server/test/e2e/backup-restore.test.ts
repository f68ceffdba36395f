// `tessera backup FILE` while the server runs and takes writes, then `tessera restore FILE` into a fresh
// data directory: every row written before the backup is there, the restored database is consistent
// (the ledger balances, every order has its transaction), and the sandbox's secrets came along.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aDataDir, runCli, ServerProcess } from '../harness/server-process.ts';

let source: Awaited<ReturnType<typeof aDataDir>>;
let target: Awaited<ReturnType<typeof aDataDir>>;
beforeAll(async () => {
  source = await aDataDir();
  target = await aDataDir();
});
afterAll(async () => {
  await source.remove();
  await target.remove();
});

async function connect(dataDir: string): Promise<pg.Client> {
  const secrets = JSON.parse(await readFile(join(dataDir, 'secrets.json'), 'utf8')) as {
    postgresPassword: string;
  };
  const owner = JSON.parse(await readFile(join(dataDir, 'postgres.owner'), 'utf8')) as { port: number };
  const client = new pg.Client({
    connectionString: `postgres://tessera:${encodeURIComponent(secrets.postgresPassword)}@127.0.0.1:${owner.port}/tessera`,
  });
  await client.connect();
  return client;
}

/** Rows per table of the public schema. */
async function rowCounts(db: pg.Client): Promise<Record<string, number>> {
  const tables = await db.query<{ tablename: string }>(
    `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
  );
  const counts: Record<string, number> = {};
  for (const { tablename } of tables.rows) {
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${db.escapeIdentifier(tablename)}`,
    );
    counts[tablename] = Number(rows[0]?.n);
  }
  return counts;
}

const card = {
  cardNumber: '4111111111111111',
  cardExpiryDate: `12/${(new Date().getUTCFullYear() + 3) % 100}`,
  cardCvv: '123',
  cardHolderName: 'Ada Lovelace',
  cardHolderCountry: 'RO',
};

describe('backup and restore of the embedded database', () => {
  it('copies a running server consistently, writes going on, into a fresh data directory', async () => {
    const server = await ServerProcess.start({ TESSERA_DATA_DIR: source.dir });
    const merchant = await server.admin<{ apiKey: string }>('POST', '/merchants', {
      name: 'Backed',
      sites: [{ name: 'web' }],
    });
    const auth = { authorization: `Bearer ${merchant.body.apiKey}` };
    const customer = await server.request<{ data: { id: number } }>('POST', '/payments/customer', {
      headers: auth,
      form: { identifier: 'b-1', email: 'b@example.com', firstName: 'B', lastName: 'K', country: 'RO' },
    });
    const order = (ref: string) =>
      server.request('POST', '/payments/order', {
        headers: auth,
        form: {
          amount: '7.00',
          currency: 'EUR',
          orderType: 'purchase',
          customerId: String(customer.body.data.id),
          externalOrderId: ref,
          ...card,
        },
      });
    for (let i = 0; i < 20; i++) expect((await order(`before-${i}`)).status).toBe(201);
    const source_db = await connect(source.dir);
    const before = await rowCounts(source_db);

    // Writes go on while the backup is taken.
    let writing = true;
    const load = (async () => {
      let n = 0;
      while (writing) await order(`during-${n++}-${randomBytes(3).toString('hex')}`);
      return n;
    })();
    const backupFile = join(source.dir, '..', 'tessera.backup.tgz');
    const backedUp = await runCli(['backup', backupFile], { TESSERA_DATA_DIR: source.dir });
    writing = false;
    const during = await load;
    expect(backedUp.code, backedUp.stderr).toBe(0);
    expect(during).toBeGreaterThan(0);
    await source_db.end();
    await server.stop();

    const restored = await runCli(['restore', backupFile], { TESSERA_DATA_DIR: target.dir });
    expect(restored.code, restored.stderr).toBe(0);
    // Restoring over a database is refused: nothing is overwritten.
    const again = await runCli(['restore', backupFile], { TESSERA_DATA_DIR: target.dir });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds a database/);

    const copy = await ServerProcess.start({ TESSERA_DATA_DIR: target.dir });
    try {
      expect(copy.adminToken).toBe(server.adminToken);
      const db = await connect(target.dir);
      try {
        const after = await rowCounts(db);
        for (const [table, count] of Object.entries(before)) {
          // Rows that come and go: processes, rate windows, and ledger deltas and credits the rollup folds away.
          if (
            [
              'tessera_processes',
              'rate_limit_windows',
              'ledger_account_deltas',
              'ledger_account_credits',
            ].includes(table)
          )
            continue;
          expect(after[table], table).toBeGreaterThanOrEqual(count);
        }
        const beforeOrders = await db.query(
          `SELECT 1 FROM payments_orders WHERE external_order_id LIKE 'before-%'`,
        );
        expect(beforeOrders.rowCount).toBe(20);
        const unbalanced = await db.query(
          `SELECT asset FROM ledger_entries GROUP BY asset HAVING sum(amount) <> 0`,
        );
        expect(unbalanced.rows).toEqual([]);
        const orphans = await db.query(
          `SELECT o.id FROM payments_orders o WHERE NOT EXISTS (SELECT 1 FROM payments_transactions t WHERE t.order_id = o.id)`,
        );
        expect(orphans.rows).toEqual([]);
      } finally {
        await db.end();
      }
      // The copy works: the merchant's key (checked against its stored hash) still pays.
      const paid = await copy.request('POST', '/payments/order', {
        headers: auth,
        form: {
          amount: '1.00',
          currency: 'EUR',
          orderType: 'purchase',
          customerId: String(customer.body.data.id),
          ...card,
        },
      });
      expect(paid.status).toBe(201);
    } finally {
      await copy.stop();
    }
  }, 180_000);

  it('says what to do instead with DATABASE_URL, and names a missing file', async () => {
    const external = await runCli(['backup', '/tmp/x.tgz'], {
      TESSERA_DATA_DIR: target.dir,
      DATABASE_URL: 'postgres://u:p@127.0.0.1:1/db',
    });
    expect(external.code).toBe(2);
    expect(external.stderr).toMatch(/pg_dump/);
    const missing = await runCli(['restore', '/nonexistent/backup.tgz'], {
      TESSERA_DATA_DIR: join(target.dir, 'fresh'),
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no such backup file/);
    expect((await runCli(['backup'], { TESSERA_DATA_DIR: target.dir })).code).toBe(2);
  });
});
