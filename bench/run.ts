// `npm run bench`: measures, in one run on this machine, a raw-Postgres baseline (single-row insert
// transactions from 16 concurrent clients) and the platform's hot paths, prints throughput, p50/p99 and
// each figure's ratio to the baseline, and writes bench/results.json. Postgres runs with its durable
// defaults (fsync on), embedded in a fresh directory unless DATABASE_URL is set.
import { randomBytes, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase } from '../packages/server/src/platform/db/database.ts';
import {
  ensureDatabase,
  startEmbeddedPostgres,
} from '../packages/server/src/platform/db/embedded-postgres.ts';
import { migrate } from '../packages/server/src/platform/db/migrate.ts';
import { Ledger, type LedgerAccount } from '../packages/server/src/platform/ledger/ledger.ts';
import { cryptoScenarios } from './crypto.ts';
import { issuingScenarios } from './issuing.ts';
import { type Measurement, measure } from './measure.ts';
import { paymentsScenarios } from './payments.ts';

const CONCURRENCY = 16;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const ACCOUNTS = 1000;

async function main() {
  let stopDatabase = async () => {};
  let databaseUrl = process.env.DATABASE_URL;
  let directory: string | undefined;
  if (!databaseUrl) {
    directory = await mkdtemp(join(tmpdir(), 'tessera-bench-'));
    await chmod(directory, 0o755);
    const server = await startEmbeddedPostgres({
      directory: join(directory, 'data'),
      password: randomBytes(12).toString('hex'),
    });
    await ensureDatabase(server.connectionString('postgres'), 'tessera_bench');
    databaseUrl = server.connectionString('tessera_bench');
    stopDatabase = () => server.stop();
  }
  try {
    await migrate(databaseUrl);
    const settings = { concurrency: CONCURRENCY, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS };
    process.stdout.write(
      `Benchmarks: ${CONCURRENCY} concurrent clients, ${SECONDS} s each after ${WARMUP_SECONDS} s warm-up\n`,
    );

    const baseline = await runBaseline(databaseUrl, settings);
    report(baseline, baseline);
    const results: Measurement[] = [];
    // BENCH_ONLY=payments (a comma-separated list of groups) measures only those, beside the baseline.
    const only = process.env.BENCH_ONLY?.split(',');
    const groups = {
      ledger: ledgerScenarios,
      issuing: issuingScenarios,
      crypto: cryptoScenarios,
      payments: paymentsScenarios,
    };
    const chosen = Object.entries(groups).filter(([name]) => !only || only.includes(name));
    const scenarios = [];
    for (const [, group] of chosen) scenarios.push(...(await group(databaseUrl, settings)));
    for (const scenario of scenarios) {
      const result = await scenario();
      report(result, baseline);
      results.push(result);
    }
    const output = {
      baseline: { opsPerSec: baseline.opsPerSec, p50Ms: baseline.p50Ms, p99Ms: baseline.p99Ms },
      results: results.map((r) => ({
        name: r.name,
        opsPerSec: r.opsPerSec,
        p50Ms: r.p50Ms,
        p99Ms: r.p99Ms,
        ratio: ratio(r, baseline),
      })),
      meta: {
        date: new Date().toISOString(),
        machine: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
        concurrency: CONCURRENCY,
        seconds: SECONDS,
        database: process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded Postgres 17, durable defaults',
      },
    };
    await writeFile(new URL('./results.json', import.meta.url), `${JSON.stringify(output, null, 2)}\n`);
    process.stdout.write('written to bench/results.json\n');
  } finally {
    await stopDatabase();
    if (directory) await rm(directory, { recursive: true, force: true });
  }
}

/** The ceiling: one durable single-row insert transaction per operation (BEGIN, INSERT, COMMIT). */
async function runBaseline(
  databaseUrl: string,
  settings: Parameters<typeof measure>[1],
): Promise<Measurement> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: CONCURRENCY });
  await pool.query(
    'CREATE TABLE IF NOT EXISTS bench_baseline (id bigserial PRIMARY KEY, payload text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())',
  );
  try {
    return await measure('raw Postgres insert transaction (baseline)', settings, async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('INSERT INTO bench_baseline (payload) VALUES ($1)', [randomUUID()]);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    });
  } finally {
    await pool.end();
  }
}

async function ledgerScenarios(databaseUrl: string, settings: Parameters<typeof measure>[1]) {
  const handle = openDatabase(databaseUrl, { max: CONCURRENCY });
  const ledger = new Ledger(() => new Date());
  const owner = randomUUID();
  const open = (purpose: string, isBounded: boolean) =>
    ledger.openAccount(handle.db, { ownerType: 'bench', ownerId: owner, asset: 'EUR', purpose, isBounded });
  const world = await open('world', false);
  const accounts: LedgerAccount[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const account = await open(`account-${i}`, true);
    await handle.db.transaction().execute((tx) =>
      ledger.transfer(tx, {
        operationId: `fund-${account.id}`,
        legs: [
          { accountId: world.id, amount: -1_000_000_000n },
          { accountId: account.id, amount: 1_000_000_000n },
        ],
      }),
    );
    accounts.push(account);
  }
  const hot = await open('hot', true);
  const pick = () => accounts[Math.floor(Math.random() * accounts.length)] as LedgerAccount;
  const transfer = (from: LedgerAccount, to: LedgerAccount) =>
    handle.db.transaction().execute((tx) =>
      ledger.transfer(tx, {
        operationId: randomUUID(),
        legs: [
          { accountId: from.id, amount: -100n },
          { accountId: to.id, amount: 100n },
        ],
      }),
    );
  return [
    () =>
      measure('ledger transfer, random accounts', settings, async () => {
        const from = pick();
        let to = pick();
        while (to.id === from.id) to = pick();
        await transfer(from, to);
      }),
    async () => {
      const result = await measure('ledger transfer into one hot account', settings, () =>
        transfer(pick(), hot).then(() => undefined),
      );
      await handle.close();
      return result;
    },
  ];
}

function ratio(result: Measurement, baseline: Measurement): number {
  return Math.round((result.opsPerSec / Math.max(1, baseline.opsPerSec)) * 100) / 100;
}

function report(result: Measurement, baseline: Measurement) {
  process.stdout.write(
    `${result.name.padEnd(46)} ${String(result.opsPerSec).padStart(7)} ops/s  p50 ${result.p50Ms.toFixed(2).padStart(6)} ms  p99 ${result.p99Ms
      .toFixed(2)
      .padStart(
        7,
      )} ms  ratio ${ratio(result, baseline).toFixed(2)}${result.errors ? `  (${result.errors} errors)` : ''}\n`,
  );
}

await main();
