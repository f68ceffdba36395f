// `npm run bench:scale`: the reads of the APIs and the console on a year of data. One tenant of each API
// is made through the real API (orders, payments, authorizations, keyed writes), every read is measured
// (median of 5, ms), then the tenant's rows are multiplied by SQL from those real rows — orders,
// transactions, crypto orders, card transactions, events, ledger entries, idempotency keys, spread over a
// year — the tables vacuumed and analyzed as a year of autovacuum leaves them, and the same reads measured
// again. Sizes: BENCH_SCALE_ORDERS payments orders (default 200,000; the figure in docs/scale.md used
// 2,000,000), and the others in proportion. Writes bench/scale-results.json. Docs: docs/scale.md.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { backupCluster } from '../packages/server/src/platform/db/backup.ts';
import {
  ensureDatabase,
  startEmbeddedPostgres,
} from '../packages/server/src/platform/db/embedded-postgres.ts';
import { migrate } from '../packages/server/src/platform/db/migrate.ts';
import type { ConsoleClient } from '../packages/server/test/harness/console-client.ts';
import { makeScene, type Scene } from './scale-scene.ts';
import { seed } from './scale-seed.ts';
import { startTessera } from './servers.ts';

const ORDERS = Number(process.env.BENCH_SCALE_ORDERS ?? 200_000);
const RUNS = 5;

async function main() {
  const directory = await mkdtemp(join(tmpdir(), 'tessera-scale-'));
  await chmod(directory, 0o755);
  const server = await startEmbeddedPostgres({
    directory: join(directory, 'data'),
    password: randomBytes(12).toString('hex'),
  });
  await ensureDatabase(server.connectionString('postgres'), 'tessera_scale');
  const databaseUrl = server.connectionString('tessera_scale');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  await migrate(databaseUrl);
  const tessera = await startTessera(databaseUrl, { workers: 1, dataDir: join(directory, 'server') });
  try {
    const scene = await makeScene(tessera, pool);
    process.stdout.write(`Scale bench: ${ORDERS.toLocaleString('en')} payments orders in the big tenant\n\n`);
    const small = await measureReads(scene);
    const seeded = await seed(pool, scene, ORDERS);
    const size = await databaseSize(pool);
    // What `tessera backup` costs at this size: the same function, on the running cluster.
    const backupStarted = performance.now();
    const backedUp = await backupCluster({
      superuserUrl: server.connectionString('postgres'),
      clusterDir: join(directory, 'data'),
      secretsFile: join(directory, 'no-secrets.json'),
      file: join(directory, 'backup.tgz'),
    });
    const backup = {
      seconds: Math.round((performance.now() - backupStarted) / 100) / 10,
      archiveMiB: Math.round(backedUp.bytes / 2 ** 20),
    };
    await rm(backedUp.file);
    process.stdout.write(`tessera backup: ${backup.archiveMiB} MiB in ${backup.seconds} s\n`);
    process.stdout.write(
      `seeded in ${seeded.seconds} s: ${JSON.stringify(seeded.rows)}; database ${size}\n\n`,
    );
    const big = await measureReads(scene);
    const results = Object.keys(small).map((read) => {
      const [s, b] = [small[read] ?? 0, big[read] ?? 0];
      return { read, smallMs: s, bigMs: b, ratio: Math.round((b / Math.max(s, 0.1)) * 100) / 100 };
    });
    for (const r of results) {
      process.stdout.write(
        `${r.read.padEnd(58)} small ${r.smallMs.toFixed(1).padStart(7)} ms   big ${r.bigMs.toFixed(1).padStart(7)} ms   ×${r.ratio.toFixed(2)}\n`,
      );
    }
    await writeFile(
      new URL('./scale-results.json', import.meta.url),
      `${JSON.stringify(
        {
          results,
          seeded,
          database: size,
          backup,
          meta: {
            date: new Date().toISOString(),
            machine: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
            orders: ORDERS,
          },
        },
        null,
        2,
      )}\n`,
    );
    process.stdout.write('\nwritten to bench/scale-results.json\n');
  } finally {
    await tessera.stop();
    await pool.end();
    if (process.env.BENCH_SCALE_KEEP) {
      // For a look at the plans: the database stays up until this process is stopped.
      process.stdout.write(`kept: psql ${databaseUrl}\n`);
      await new Promise(() => undefined);
    }
    await server.stop();
    await rm(directory, { recursive: true, force: true });
  }
}

/** Every read, the median of RUNS calls each, ms. */
async function measureReads(scene: Scene): Promise<Record<string, number>> {
  const api = (path: string, headers: Record<string, string>) => async () => {
    const res = await fetch(`${scene.tessera.base}${path}`, { headers });
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${(await res.text()).slice(0, 200)}`);
    await res.arrayBuffer();
  };
  const page = (client: ConsoleClient, path: string) => async () => {
    const res = await client.get(path);
    // A search that finds one object sends the browser to it (303); one that finds none answers 404.
    if (![200, 303, 404].includes(res.status)) throw new Error(`console ${path}: ${res.status}`);
  };
  const payments = { authorization: `Bearer ${scene.merchant.apiKey}` };
  const crypto = { authorization: `Bearer ${scene.store.key}` };
  const { merchant, store, operator } = scene.console;
  // Pages as long on the small database as on the big one (perPage within what the scene made), so the
  // figures compare the database's work, not the size of the answer.
  const reads: Record<string, () => Promise<void>> = {
    'payments GET /order page 1': api('/payments/order?perPage=40', payments),
    'payments GET /order, the window’s last page (100 × 100)': api(
      '/payments/order?perPage=100&page=100',
      payments,
    ),
    'payments GET /order?externalOrderId=': api(
      `/payments/order?externalOrderId=${scene.externalOrderId}`,
      payments,
    ),
    'payments GET /order?customerId=': api(
      `/payments/order?customerId=${scene.merchant.customers[3]}&perPage=2`,
      payments,
    ),
    'payments GET /transaction page 1': api('/payments/transaction?perPage=40', payments),
    'payments GET /order/{id}': api(`/payments/order/${scene.orderId}`, payments),
    'crypto GET /stores/orders/{id}': api(`/crypto/api/stores/orders/${scene.cryptoOrderId}`, crypto),
    'console overview, 90 days (merchant)': page(merchant, '/console/?days=90'),
    'console overview, 90 days (operator)': page(operator, '/console/?days=90'),
    'console search: an order id': page(operator, `/console/search?q=${scene.orderId}`),
    'console search: a merchant order id': page(operator, `/console/search?q=${scene.externalOrderId}`),
    'console search: a crypto reference': page(operator, `/console/search?q=${scene.cryptoReference}`),
    'console search: unknown text': page(operator, '/console/search?q=no-such-thing'),
    'console payments orders (merchant)': page(merchant, '/console/payments/orders'),
    'console crypto orders (store)': page(store, '/console/crypto/orders'),
    'console payments orders (operator)': page(operator, '/console/payments/orders'),
    'console card transactions (operator)': page(operator, '/console/issuing/transactions'),
    'console ledger account of the busy site': page(
      merchant,
      `/console/ledger/accounts/${scene.siteAccountId}`,
    ),
    'console events (operator)': page(operator, '/console/developers/events'),
  };
  const medians: Record<string, number> = {};
  for (const [name, read] of Object.entries(reads)) {
    await read(); // warm: plans, caches
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      await read();
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    medians[name] = Math.round((times[Math.floor(RUNS / 2)] ?? 0) * 10) / 10;
  }
  return medians;
}

async function databaseSize(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ size: string }>(
    'SELECT pg_size_pretty(pg_database_size(current_database())) AS size',
  );
  return rows[0]?.size ?? '?';
}

await main();
