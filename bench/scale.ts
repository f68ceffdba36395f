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
import { verifyAudit } from '../packages/server/src/platform/audit/audit-trail.ts';
import { backupCluster } from '../packages/server/src/platform/db/backup.ts';
import { openDatabase } from '../packages/server/src/platform/db/database.ts';
import {
  ensureDatabase,
  startEmbeddedPostgres,
} from '../packages/server/src/platform/db/embedded-postgres.ts';
import { migrate } from '../packages/server/src/platform/db/migrate.ts';
import type { ConsoleClient } from '../packages/server/test/harness/console-client.ts';
import { type MoneyOutScene, makeMoneyOutScene, seedMoneyOut } from './scale-money-out.ts';
import { makeScene, type Scene } from './scale-scene.ts';
import { seed } from './scale-seed.ts';
import { measureSweeps } from './scale-sweeps.ts';
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
    const moneyOut = await makeMoneyOutScene(tessera, {
      merchantId: scene.merchant.id,
      siteId: scene.merchant.siteId,
      apiKey: scene.merchant.apiKey,
    });
    process.stdout.write(`Scale bench: ${ORDERS.toLocaleString('en')} payments orders in the big tenant\n\n`);
    const small = await measureReads(scene, moneyOut);
    const seeded = await seed(pool, scene, ORDERS);
    Object.assign(
      seeded.rows,
      await seedMoneyOut(
        pool,
        {
          busyMerchantId: scene.merchant.id,
          busySiteId: scene.merchant.siteId,
          storeId: scene.store.id,
          moneyOut,
        },
        ORDERS,
      ),
    );
    await pool.query('VACUUM ANALYZE');
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
    const big = await measureReads(scene, moneyOut);
    const once = {
      ...(await measureOnce(scene, moneyOut, databaseUrl)),
      ...(await measureSweeps(databaseUrl)),
    };
    for (const [what, figure] of Object.entries(once)) process.stdout.write(`${what}: ${figure}\n`);
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
          once,
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
async function measureReads(scene: Scene, moneyOut: MoneyOutScene): Promise<Record<string, number>> {
  const api =
    (path: string, headers: Record<string, string>, method = 'GET') =>
    async () => {
      const res = await fetch(`${scene.tessera.base}${path}`, { method, headers });
      if (res.status !== 200)
        throw new Error(`${method} ${path}: ${res.status} ${(await res.text()).slice(0, 200)}`);
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
    // An object's page: its transactions and its story (the events naming it, by the GIN index)
    'console payments order page (merchant)': page(merchant, `/console/payments/orders/${scene.orderId}`),
    // A list's CSV export whole: 10,000 rows at most, read 25 at a time as its pages are
    'console orders as CSV, 10,000 rows (merchant)': page(merchant, '/console/payments/orders.csv'),
    // A day half a year back: the dates found as a range of the order ids first (paging.ts), then that
    // range of the merchant's index read
    'console payments orders, one day 200 days back (merchant)': page(
      merchant,
      `/console/payments/orders?from=${dayBack(200)}&to=${dayBack(200)}`,
    ),
    'console card transactions, one day 200 days back (operator)': page(
      operator,
      `/console/issuing/transactions?from=${dayBack(200)}&to=${dayBack(200)}`,
    ),
    ...moneyOutReads(scene, moneyOut, api, page),
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

const DAY_MS = 86_400_000;
const dayBack = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString().slice(0, 10);

/** Money out's reads (the issue's table, docs/scale.md): balances, reports, reconcile, the run, lists. */
function moneyOutReads(
  scene: Scene,
  moneyOut: MoneyOutScene,
  api: (path: string, headers: Record<string, string>, method?: string) => () => Promise<void>,
  page: (client: ConsoleClient, path: string) => () => Promise<void>,
): Record<string, () => Promise<void>> {
  const payments = { authorization: `Bearer ${scene.merchant.apiKey}` };
  const admin = scene.tessera.admin;
  const site = `/admin/merchants/${scene.merchant.id}/sites/${scene.merchant.siteId}`;
  const window = `from=${dayBack(200)}T00:00:00Z&to=${dayBack(199)}T00:00:00Z`;
  return {
    'payments GET /balance': api('/payments/balance', payments),
    'admin site balance': api(`${site}/balance`, admin),
    'console Balances (merchant)': page(scene.console.merchant, '/console/money/balances'),
    'admin GET /reconcile, today': api('/admin/reconcile', admin),
    'admin GET /reconcile, 200 days back': api(`/admin/reconcile?date=${dayBack(200)}`, admin),
    'console Reports (operator)': page(scene.console.operator, '/console/money/reports'),
    'payments balance report, 30 days': api(
      `/payments/balance/report?from=${dayBack(30)}&to=${dayBack(0)}`,
      payments,
    ),
    'payments balance report, 365 days': api(
      `/payments/balance/report?from=${dayBack(365)}&to=${dayBack(0)}`,
      payments,
    ),
    'admin revenue report, 365 days': api(
      `/admin/reports/revenue?from=${dayBack(365)}&to=${dayBack(0)}`,
      admin,
    ),
    'admin audit events, one day 200 days back': api(`/admin/audit-events?${window}`, admin),
    'admin audit events of a tenant, that day': api(
      `/admin/audit-events?${window}&tenant=merchant:${scene.merchant.id}`,
      admin,
    ),
    'payments GET /balance-transaction?type=chargeback': api(
      '/payments/balance-transaction?type=chargeback',
      payments,
    ),
    'console payout page (its items)': page(
      scene.console.merchant,
      `/console/money/payouts/${moneyOut.payoutId}`,
    ),
    'admin POST /payout-runs (a round of the run)': api('/admin/payout-runs', admin, 'POST'),
  };
}

/** What runs once on the big database: the manual site's backlog paid out, and the audit chain verified. */
async function measureOnce(
  scene: Scene,
  moneyOut: MoneyOutScene,
  databaseUrl: string,
): Promise<Record<string, string>> {
  const started = performance.now();
  const res = await fetch(`${scene.tessera.base}/payments/payout`, {
    method: 'POST',
    headers: { authorization: `Bearer ${moneyOut.backlog.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ siteId: moneyOut.backlog.siteId, currency: 'EUR' }),
  });
  if (res.status !== 201) throw new Error(`backlog payout: ${res.status} ${await res.text()}`);
  const paid = ((await res.json()) as { data: { id: string } }).data.id;
  const payoutMs = performance.now() - started;
  const report = performance.now();
  const csv = await fetch(`${scene.tessera.base}/payments/payout/${paid}/report`, {
    headers: { authorization: `Bearer ${moneyOut.backlog.apiKey}` },
  });
  const lines = (await csv.text()).split('\r\n').length - 2;
  const reportMs = performance.now() - report;
  const handle = openDatabase(databaseUrl, { max: 1 });
  try {
    const full = performance.now();
    const verdict = await verifyAudit(handle.db);
    const fullMs = performance.now() - full;
    if (!verdict.ok || !verdict.head) throw new Error(`audit verify: ${JSON.stringify(verdict)}`);
    const from = performance.now();
    await verifyAudit(handle.db, { seq: Math.max(1, verdict.head.seq - 1000), hash: undefined });
    const fromMs = performance.now() - from;
    // A draft risk rule reading velocity, backtested over the busy tenant's year (docs/risk.md).
    const backtested = performance.now();
    const backtest = await fetch(`${scene.tessera.base}/admin/risk/rules/backtest`, {
      method: 'POST',
      headers: { ...scene.tessera.admin, 'content-type': 'application/json' },
      body: JSON.stringify({
        scope: { kind: 'merchant', id: String(scene.merchant.id) },
        decisionPoint: 'payments.charge',
        expression: 'velocity.card.count_24h >= 2 && amount >= 1000 || velocity.ip.declines_1h >= 1',
        from: new Date(Date.now() - 365 * 86_400_000).toISOString(),
        to: new Date().toISOString(),
      }),
    });
    if (backtest.status !== 200) throw new Error(`backtest: ${backtest.status} ${await backtest.text()}`);
    const { evaluated, matched } = (await backtest.json()) as { evaluated: number; matched: number };
    const backtestMs = performance.now() - backtested;
    return {
      'a risk rule backtested over the year (two velocity features)': `${evaluated.toLocaleString('en')} charges (${matched.toLocaleString('en')} matched) in ${(backtestMs / 1000).toFixed(1)} s`,
      'backlog payout (every unpaid item, batches of 10,000)': `${lines.toLocaleString('en')} items in ${(payoutMs / 1000).toFixed(1)} s`,
      'its settlement report, streamed': `${(reportMs / 1000).toFixed(1)} s`,
      'tessera audit verify, whole chain': `${verdict.records.toLocaleString('en')} records in ${(fullMs / 1000).toFixed(1)} s`,
      'tessera audit verify --from (the last 1,000)': `${fromMs.toFixed(0)} ms`,
    };
  } finally {
    await handle.close();
  }
}

async function databaseSize(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ size: string }>(
    'SELECT pg_size_pretty(pg_database_size(current_database())) AS size',
  );
  return rows[0]?.size ?? '?';
}

await main();
