// `npm run bench:backtest`: a year of one busy merchant's charges backtested (docs/risk.md, Backtests).
// A merchant is made through the admin API; BENCH_BACKTEST_SIGNALS risk signals (default 2,000,000) are
// written for it by SQL, spread over the last year with keys varied as a shop's are (62,500 IPs, 50,000
// emails, 400,000 cards, one charge in fifty declined); then draft rules are backtested through
// `POST /admin/risk/rules/backtest` over the whole year — one with no velocity, one reading a card's and
// an IP's windows, one reading the merchant's minutes and an email's 30 days, one reading two keys' counts,
// a string ordering, a regular expression on one attribute and on two, a double of a velocity feature,
// a group and a key's velocity indexed by a variable (these hoisted) — each timed (the best of
// BENCH_BACKTEST_RUNS, default 2; BENCH_BACKTEST_ONLY: the rules, one a line, instead), with the server's
// resident memory after. On the same year, the live reads'
// plans: a charge's key velocity (EXPLAIN ANALYZE) and the merchant's minute roll-up, first and then a
// minute on.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase } from '../packages/server/src/platform/db/database.ts';
import {
  ensureDatabase,
  startEmbeddedPostgres,
} from '../packages/server/src/platform/db/embedded-postgres.ts';
import { migrate } from '../packages/server/src/platform/db/migrate.ts';
import type { VelocityFeature } from '../packages/server/src/platform/risk/decision-points.ts';
import { TenantWindows } from '../packages/server/src/platform/risk/tenant-windows.ts';
import { velocityColumns } from '../packages/server/src/platform/risk/velocity.ts';
import { startTessera } from './servers.ts';

const SIGNALS = Number(process.env.BENCH_BACKTEST_SIGNALS ?? 2_000_000);
const RUNS = Number(process.env.BENCH_BACKTEST_RUNS ?? 2);
const RULES = [
  'amount >= 5000',
  'velocity.card.count_24h >= 2 && amount >= 1000 || velocity.ip.declines_1h >= 1',
  'velocity.tenant.count_10m > 5000 || velocity.email.count_30d >= 20 && velocity.tenant.sum_24h > 0',
  // Two keys' counts: the history sorted once per key
  'velocity.card.count_24h >= 2 && velocity.ip.count_1h >= 3',
  // An ordering of strings, judged in the database as CEL orders them (UTF-16 code units)
  'amount >= 5000 && email >= "buyer5"',
  // A regular expression (RE2) has no exact SQL: CEL answers it per distinct email, the rest in the database
  'amount >= 5000 && email.matches("^buyer5")',
  // … and over two, per distinct pair
  'amount >= 5000 && (email + ip).matches("^buyer5")',
  // A double of a velocity feature: per distinct count, over each slice's history kept in a temporary table
  'amount >= 5000 && double(velocity.card.count_24h) > 1.5',
  // A group indexed by a variable: per distinct email, reading the members the emails name (none)
  'amount >= 5000 && card[email] == "400000"',
  // … a key's velocity: the features the emails name (none) counted
  'amount >= 5000 && velocity.card[email] >= 2',
];
if (process.env.BENCH_BACKTEST_ONLY)
  RULES.splice(0, RULES.length, ...process.env.BENCH_BACKTEST_ONLY.split('\n'));

async function main() {
  const directory = await mkdtemp(join(tmpdir(), 'tessera-backtest-'));
  await chmod(directory, 0o755);
  const server = await startEmbeddedPostgres({
    directory: join(directory, 'data'),
    password: randomBytes(12).toString('hex'),
  });
  await ensureDatabase(server.connectionString('postgres'), 'tessera_backtest');
  const databaseUrl = server.connectionString('tessera_backtest');
  await migrate(databaseUrl);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const tessera = await startTessera(databaseUrl, { workers: 1, dataDir: join(directory, 'server') });
  try {
    const merchant = await tessera.call<{ id: number }>('POST', '/admin/merchants', tessera.admin, {
      name: 'Busy merchant',
      sites: [{ name: 'Busy site' }],
    });
    const seeded = performance.now();
    const to = Date.now();
    const from = to - 365 * 86_400_000;
    // The attributes as the risk engine records them (signal-json.ts): amount, currency and email left to
    // their columns ("~": 1 + 2 + 8). The IP is not an attribute here, as it was not before, so the rules
    // over `ip` read "" and their distinct values stay what they were.
    await pool.query(
      `INSERT INTO risk_signals (decision_point, tenant, object_id, at, amount, currency, ip, email,
         card_fingerprint, customer_id, declined, attributes)
       SELECT 'payments.charge', $1, 'year-' || g,
         to_timestamp(($2::float8 + (g::float8 / $4) * ($3::float8 - $2::float8)) / 1000),
         100 + (g * 7919) % 20000, 'EUR',
         '10.' || (g % 250) || '.' || (g / 250 % 250) || '.1', 'buyer' || (g % 50000) || '@example.com',
         md5((g % 400000)::text), (g % 20000)::text, g % 50 = 0,
         jsonb_build_object('email_domain', 'example.com', '~', 11)
       FROM generate_series(1::bigint, $4::bigint) g`,
      [`merchant:${merchant.id}`, from, to, SIGNALS],
    );
    await pool.query('VACUUM ANALYZE risk_signals');
    const seedSeconds = (performance.now() - seeded) / 1000;
    process.stdout.write(
      `Backtest bench: ${SIGNALS.toLocaleString('en')} signals of one merchant over a year (seeded in ${seedSeconds.toFixed(0)} s); ${cpus().length} CPUs\n\n`,
    );
    await liveReads(databaseUrl, pool, `merchant:${merchant.id}`, new Date(to));
    for (const expression of RULES) {
      let best = Number.POSITIVE_INFINITY;
      let answer = { evaluated: 0, matched: 0, judgedIn: '', parts: 1 };
      for (let run = 0; run < RUNS; run++) {
        const started = performance.now();
        answer = await tessera.call<{ evaluated: number; matched: number; judgedIn: string; parts: number }>(
          'POST',
          '/admin/risk/rules/backtest',
          tessera.admin,
          {
            scope: { kind: 'merchant', id: String(merchant.id) },
            decisionPoint: 'payments.charge',
            expression,
            from: new Date(from).toISOString(),
            to: new Date(to).toISOString(),
          },
        );
        best = Math.min(best, performance.now() - started);
      }
      process.stdout.write(
        `${expression}\n  ${answer.evaluated.toLocaleString('en')} evaluated, ${answer.matched.toLocaleString('en')} matched, judged in the ${answer.judgedIn} in ${answer.parts} part(s), best of ${RUNS}: ${(best / 1000).toFixed(1)} s; server resident ${await residentMiB(tessera.pid)} MiB\n`,
      );
    }
  } finally {
    await tessera.stop();
    await pool.end();
    await server.stop();
    await rm(directory, { recursive: true, force: true });
  }
}

/**
 * The live reads on the year: one charge's key velocity (a card's three windows, an IP's two, an email's
 * 30 days) with its plan, and the merchant's windows (a first roll-up of 30 days, then the next minute's).
 */
async function liveReads(databaseUrl: string, pool: pg.Pool, tenant: string, at: Date) {
  const features: VelocityFeature[] = [
    { key: 'card', metric: 'count', window: '10m' },
    { key: 'card', metric: 'sum', window: '24h' },
    { key: 'card', metric: 'count', window: '30d' },
    { key: 'ip', metric: 'count', window: '10m' },
    { key: 'ip', metric: 'declines', window: '1h' },
    { key: 'email', metric: 'count', window: '30d' },
  ];
  const card = await pool.query<{ card_fingerprint: string }>(`SELECT md5('1') AS card_fingerprint`);
  const probe = {
    point: 'payments.charge' as const,
    tenant,
    at,
    currency: 'EUR',
    keys: {
      ip: '10.1.0.1',
      email: 'buyer1@example.com',
      cardFingerprint: card.rows[0]?.card_fingerprint ?? null,
      customerId: '1',
    },
  };
  const columns = velocityColumns(probe, features);
  const plan = await pool.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT ${columns.sql}`,
    columns.parameters,
  );
  process.stdout.write(`A charge's key velocity on the year (six features, three keys):\n`);
  for (const row of plan.rows) process.stdout.write(`  ${row['QUERY PLAN']}\n`);
  const handle = openDatabase(databaseUrl, { max: 2 });
  try {
    const windows = new TenantWindows();
    const tenantFeatures: VelocityFeature[] = [
      { key: 'tenant', metric: 'count', window: '10m' },
      { key: 'tenant', metric: 'sum', window: '24h' },
      { key: 'tenant', metric: 'count', window: '30d' },
    ];
    for (const [what, when] of [
      ['first roll-up (30 days of minutes)', at],
      ['a minute on', new Date(at.getTime() + 60_000)],
      ['the same minute again (memory)', new Date(at.getTime() + 61_000)],
    ] as const) {
      const started = performance.now();
      const read = await windows.read(handle.db, { ...probe, at: when }, tenantFeatures);
      process.stdout.write(
        `The merchant's windows, ${what}: ${(performance.now() - started).toFixed(1)} ms ${JSON.stringify(read, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}\n`,
      );
    }
  } finally {
    await handle.close();
  }
  process.stdout.write('\n');
}

/** A process's resident memory (Linux), MiB */
async function residentMiB(pid: number): Promise<string> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /VmRSS:\s+(\d+)/.exec(status)?.[1];
  return kb ? (Number(kb) / 1024).toFixed(0) : '?';
}

await main();
