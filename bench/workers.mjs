// `npm run bench:workers`: how the write paths scale with TESSERA_WORKERS on this machine. For each worker
// count, `tessera serve` on a fresh embedded Postgres (durable defaults), loaded by client processes (undici
// Pool, keep-alive, closed loop) for payments orders, crypto orders and card authorizations, each plain and
// with an Idempotency-Key; pg_stat_activity is sampled during each run for the time backends wait on a lock.
// Plain JavaScript (no tsx) so that it runs wherever Node and the installed app are: docs/benchmarks.md.
//
//   node bench/workers.mjs [workers=1,2,4] [seconds=8] [clients=4] [inFlightPerClient=16] [out.json]
//   WORKERS_ONLY="payments order;card*"  runs the scenarios so named (a trailing * matches a name's start);
//   WORKERS_SITES=8 spreads the payments orders over 8 sites of the merchant; WORKERS_SQL runs on the
//   database after the set-up (to measure what a schema change would gain before making it).
import { fork, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const appDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const [workerList = '1,2,4', secs = '8', nClients = '4', perClient = '16', outFile = ''] =
  process.argv.slice(2);
const SECONDS = Number(secs);
const CLIENTS = Number(nClients);
const IN_FLIGHT = Number(perClient);
const WARMUP_MS = 2000;
const CARDHOLDERS = 64;

if (process.env.WORKERS_CLIENT) await client();
else await main();

/** A load client process: `inFlight` requests always in flight for warm-up + `seconds`; latencies back by IPC. */
async function client() {
  const { Pool } = await import('undici');
  process.once('message', async (job) => {
    const pool = new Pool(job.origin, { connections: job.inFlight, pipelining: 1 });
    const latencies = [];
    let errors = 0;
    let firstError = '';
    const measureFrom = performance.now() + WARMUP_MS;
    const ends = measureFrom + job.seconds * 1000;
    let i = Math.floor(Math.random() * job.bodies.length);
    await Promise.all(
      Array.from({ length: job.inFlight }, async () => {
        for (;;) {
          const t0 = performance.now();
          if (t0 >= ends) return;
          const headers = job.keyed ? { ...job.headers, 'idempotency-key': randomUUID() } : job.headers;
          const body = job.bodies[i++ % job.bodies.length].replaceAll('__UUID__', randomUUID());
          try {
            const answer = await pool.request({ method: 'POST', path: job.path, headers, body });
            const text = await answer.body.text();
            if (answer.statusCode >= 300 || !text.includes(job.expect)) {
              throw new Error(`${answer.statusCode} ${text.slice(0, 200)}`);
            }
            if (t0 >= measureFrom && performance.now() <= ends) latencies.push(performance.now() - t0);
          } catch (err) {
            if (t0 >= measureFrom) {
              errors++;
              firstError ||= String(err.message);
            }
          }
        }
      }),
    );
    await pool.close();
    process.send({ latencies, errors, firstError }, () => process.exit(0));
  });
}

async function main() {
  const results = [];
  for (const workers of workerList.split(',').map(Number)) {
    const server = await startServer(workers);
    try {
      const scenarios = await setUp(server);
      if (process.env.WORKERS_SQL) await runSql(server.databaseUrl, process.env.WORKERS_SQL);
      for (const scenario of scenarios.filter((s) => chosen(s.name))) {
        const result = { workers, cores: cpus().length, ...(await load(server, scenario)) };
        results.push(result);
        console.log(JSON.stringify(result));
        if (outFile) writeFileSync(outFile, `${JSON.stringify(results, null, 1)}\n`);
      }
    } finally {
      await server.stop();
    }
  }
}

function chosen(name) {
  const only = process.env.WORKERS_ONLY;
  if (!only) return true;
  return only
    .split(';')
    .map((entry) => entry.trim())
    .some((entry) => (entry.endsWith('*') ? name.startsWith(entry.slice(0, -1)) : name === entry));
}

async function runSql(databaseUrl, text) {
  const { default: pg } = await import('pg');
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query(text);
  } finally {
    await db.end();
  }
}

async function startServer(workers) {
  const dataDir = mkdtempSync(join(tmpdir(), 'tessera-workers-'));
  // as root the embedded Postgres runs as another user, who must reach its directory
  chmodSync(dataDir, 0o755);
  const port = 19_000 + workers;
  const adminToken = `workers-admin-${randomUUID()}`;
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    TESSERA_ADMIN_TOKEN: adminToken,
    TESSERA_DATA_DIR: dataDir,
    TESSERA_WORKERS: String(workers),
    TESSERA_RATE_LIMIT_PER_MINUTE: '1000000000',
    LOG_LEVEL: 'warn',
    TESSERA_DB_POOL_SIZE: String(Math.max(10, Math.ceil((CLIENTS * IN_FLIGHT) / workers) + 4)),
  };
  const startedAt = Date.now();
  const child = spawn(process.execPath, [join(appDir, 'packages/server/bin/tessera.mjs'), 'serve'], {
    cwd: appDir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let log = '';
  child.stdout.on('data', (d) => (log = (log + d).slice(-4000)));
  child.stderr.on('data', (d) => (log = (log + d).slice(-4000)));
  const base = `http://127.0.0.1:${port}`;
  for (let k = 0; ; k++) {
    if (k === 600) {
      process.kill(-child.pid, 'SIGTERM');
      throw new Error(`the server did not start in a minute:\n${log}`);
    }
    const ready = await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const secrets = JSON.parse(readFileSync(join(dataDir, 'secrets.json'), 'utf8'));
  const owner = JSON.parse(readFileSync(join(dataDir, 'postgres.owner'), 'utf8'));
  const databaseUrl = `postgres://tessera:${encodeURIComponent(secrets.postgresPassword)}@127.0.0.1:${owner.port}/tessera`;
  return {
    base,
    startMs: Date.now() - startedAt,
    admin: { authorization: `Bearer ${adminToken}` },
    databaseUrl,
    async stop() {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {}
      await new Promise((r) => {
        child.once('exit', r);
        setTimeout(r, 15_000);
      });
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The tenants and bodies of the six scenarios, made through the API on a fresh server. */
async function setUp(server) {
  const call = async (method, path, headers, body, type = 'application/json') => {
    const answer = await fetch(server.base + path, {
      method,
      headers: { 'content-type': type, accept: 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await answer.text();
    if (answer.status >= 300) throw new Error(`${method} ${path} ${answer.status} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  const sites = Number(process.env.WORKERS_SITES ?? 1);
  const merchant = await call('POST', '/admin/merchants', server.admin, {
    name: 'workers',
    sites: Array.from({ length: sites }, (_, k) => ({ name: `s${k}` })),
  });
  const merchantKey = { authorization: `Bearer ${merchant.apiKey}` };
  const paymentBodies = [];
  for (let c = 0; c < 64; c++) {
    const site = merchant.sites[c % sites].id;
    const customer = await call('POST', '/payments/customer', merchantKey, {
      siteId: site,
      identifier: `c-${c}`,
      email: `c${c}@example.com`,
    });
    paymentBodies.push(
      new URLSearchParams({
        siteId: String(site),
        amount: '10.90',
        currency: 'EUR',
        orderType: 'purchase',
        cardTransactionMode: 'authAndCapture',
        customerId: String(customer.data.id),
        description: 'workers',
        cardNumber: '4111111111111111',
        cardExpiryDate: '12/29',
        cardCvv: '123',
        cardHolderName: 'S B',
        cardHolderCountry: 'RO',
      }).toString(),
    );
  }
  const store = await call('POST', '/admin/stores', server.admin, { name: 'workers-store' });
  const session = await call(
    'POST',
    '/crypto/api/stores/session',
    {},
    {
      data: { type: 'session', attributes: { client_id: store.clientId, client_secret: store.clientSecret } },
    },
    'application/vnd.api+json',
  );
  const cryptoBody = JSON.stringify({
    data: {
      type: 'orders',
      attributes: {
        order: {
          reference: 'r-__UUID__',
          amount: { total: '25.00', currency: 'EUR' },
          return_urls: { return_url: 'http://127.0.0.1/r' },
          line_items: [{ sku: 'S', name: 'I', price: '25.00', currency: 'EUR', quantity: 1 }],
        },
        customer: { first_name: 'A', last_name: 'L', email: 'a@example.com', country: 'RO' },
      },
    },
  });
  // card holders, each with an account topped up through the bank rail and a virtual card
  const partner = await call('POST', '/admin/partners', server.admin, { name: 'workers-partner' });
  const partnerKey = { 'x-partner-api-key': partner.apiKey };
  const cardBodies = [];
  for (let h = 0; h < CARDHOLDERS; h++) {
    const { customerId } = await call('POST', '/issuing/v1/auth/register/partner', partnerKey, {
      userId: `holder-${h}`,
    });
    await call('POST', `/sandbox/issuing/kyc/${customerId}/decision`, server.admin, { status: 'approved' });
    const { accessToken } = await call('POST', '/issuing/v1/auth/login/partner', partnerKey, { customerId });
    const holder = { authorization: `Bearer ${accessToken}` };
    const { accountId } = await call('POST', '/issuing/v1/accounts', holder, { currency: 'EUR' });
    const topup = await call('POST', '/issuing/v1/topups/fiat', holder, { accountId, amount: '4000.00' });
    await call('POST', `/sandbox/issuing/topups/${topup.topupId}/complete`, server.admin);
    const { cardId } = await call('POST', '/issuing/v1/cards', holder, { isVirtual: true, currency: 'EUR' });
    cardBodies.push(JSON.stringify({ cardId, amount: '0.01', currency: 'EUR', merchant: 'Workers shop' }));
  }
  const form = { ...merchantKey, 'content-type': 'application/x-www-form-urlencoded' };
  const jsonApi = { authorization: `Bearer ${session.data.id}`, 'content-type': 'application/vnd.api+json' };
  const network = { ...server.admin, 'content-type': 'application/json' };
  const label = sites > 1 ? `, ${sites} sites` : '';
  return [false, true]
    .flatMap((keyed) => {
      const suffix = keyed ? ', keyed' : '';
      return [
        {
          name: `payments order${label}${suffix}`,
          path: '/payments/order',
          headers: form,
          bodies: paymentBodies,
          keyed,
          expect: '"data"',
        },
        {
          name: `crypto order${suffix}`,
          path: '/crypto/api/stores/orders',
          headers: jsonApi,
          bodies: [cryptoBody],
          keyed,
          expect: '"data"',
        },
        {
          name: `card authorization${suffix}`,
          path: '/sandbox/issuing/authorizations',
          headers: network,
          bodies: cardBodies,
          keyed,
          expect: '"authorized"',
        },
      ];
    })
    .sort((a, b) => order(a.name) - order(b.name));
}

function order(name) {
  return ['payments', 'crypto', 'card'].findIndex((p) => name.startsWith(p));
}

/** One saturated run of a scenario, with pg_stat_activity sampled over its measured seconds. */
async function load(server, scenario) {
  const { default: pg } = await import('pg');
  const db = new pg.Client({ connectionString: server.databaseUrl, application_name: 'workers-sampler' });
  await db.connect();
  // the WAL's position and the full-page images written so far (pg_stat_wal; a backend adds its own within
  // a second): what a durable commit costs the disk
  const walPosition = async () =>
    (await db.query('SELECT pg_current_wal_lsn()::text AS lsn, wal_fpi::float8 AS fpi FROM pg_stat_wal'))
      .rows[0];
  let walFrom = { lsn: '0/0', fpi: 0 };
  let running = true;
  let samples = 0;
  let lockWaiting = 0;
  const events = new Map();
  const sampler = (async () => {
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    walFrom = await walPosition();
    while (running) {
      const { rows } = await db.query(
        `SELECT wait_event_type || ':' || wait_event AS event, count(*)::int AS n FROM pg_stat_activity
         WHERE application_name = 'tessera' AND state = 'active' AND wait_event IS NOT NULL
           AND wait_event_type <> 'Client' GROUP BY 1`,
      );
      samples++;
      for (const row of rows) {
        if (row.event.startsWith('Lock:')) lockWaiting += row.n;
        events.set(row.event, (events.get(row.event) ?? 0) + row.n);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const outs = await Promise.all(
    Array.from(
      { length: CLIENTS },
      () =>
        new Promise((resolve, reject) => {
          const child = fork(fileURLToPath(import.meta.url), [], {
            cwd: appDir,
            env: { ...process.env, WORKERS_CLIENT: '1' },
            stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
          });
          child.once('message', resolve);
          child.once('error', reject);
          child.send({ origin: server.base, ...scenario, inFlight: IN_FLIGHT, seconds: SECONDS });
        }),
    ),
  );
  running = false;
  await sampler;
  const walTo = await walPosition();
  const { rows } = await db.query('SELECT pg_wal_lsn_diff($1, $2)::float8 AS bytes', [
    walTo.lsn,
    walFrom.lsn,
  ]);
  await db.end();
  const latencies = outs.flatMap((o) => o.latencies).sort((a, b) => a - b);
  const at = (q) => Number((latencies[Math.floor(latencies.length * q)] ?? 0).toFixed(2));
  const perSample = (n) => n / Math.max(1, samples);
  return {
    name: scenario.name,
    opsPerSec: Math.round(latencies.length / SECONDS),
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    // backends waiting on a lock, on average, × the run's length, spread over its operations
    lockMsPerOp: Number(
      ((perSample(lockWaiting) * SECONDS * 1000) / Math.max(1, latencies.length)).toFixed(3),
    ),
    walBytesPerOp: Math.round(rows[0].bytes / Math.max(1, latencies.length)),
    fullPagesPerOp: Number(((walTo.fpi - walFrom.fpi) / Math.max(1, latencies.length)).toFixed(3)),
    topWaits: [...events]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([event, n]) => `${event} ${perSample(n).toFixed(2)}`)
      .join(', '),
    errors: outs.reduce((sum, o) => sum + o.errors, 0),
    firstError: outs.map((o) => o.firstError).find(Boolean) ?? '',
    startMs: server.startMs,
    inFlight: CLIENTS * IN_FLIGHT,
  };
}
