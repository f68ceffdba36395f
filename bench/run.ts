// `npm run bench`: measures, in one run on this machine, a raw-Postgres baseline, the ledger, and each API
// write path against its floor (the same rows written by a bare route in one statement: bench/floor-server.ts),
// and writes bench/results.json. For each HTTP path: the saturated rate (16 requests always in flight; twice,
// alternating with the floor's),
// p50/p99 at half that rate, and CPU per operation (server, Postgres, client) at a fixed rate, which is the
// figure that survives a noisy shared machine. Postgres runs with its durable defaults (fsync on), embedded
// in a fresh directory unless DATABASE_URL is set. Docs: docs/benchmarks.md.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { type DatabaseHandle, openDatabase } from '../packages/server/src/platform/db/database.ts';
import {
  ensureDatabase,
  startEmbeddedPostgres,
} from '../packages/server/src/platform/db/embedded-postgres.ts';
import { migrate } from '../packages/server/src/platform/db/migrate.ts';
import { StatementBatch } from '../packages/server/src/platform/db/statement-batch.ts';
import { Ledger, type LedgerAccount } from '../packages/server/src/platform/ledger/ledger.ts';
import { type CliTiming, cliTimings } from './cli.ts';
import { setUpCrypto } from './crypto.ts';
import type { FloorFixture } from './floor-server.ts';
import { type HttpMeasurement, type HttpTarget, type LoadShape, runHttpLoad } from './http-load.ts';
import { setUpIssuing } from './issuing.ts';
import { type Measurement, measure } from './measure.ts';
import { type PathSetup, setUpPayments } from './payments.ts';
import { treeCpuMs } from './process-cpu.ts';
import { FLOOR_APPLICATION, startFloor, startTessera } from './servers.ts';
import { operationsBetween, tableWrites, walBreakdown, writesPerOperation } from './table-writes.ts';

/** Requests in flight in the saturated runs (BENCH_CONCURRENCY; 64 is the 16-core figure's) */
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
/** Saturated runs of each HTTP path, its keyed twin and its floor, alternating; and of the ledger's one-statement
 * transfers, alternating with the baseline (BENCH_ROUNDS, at least 2) */
const ROUNDS = Math.max(2, Number(process.env.BENCH_ROUNDS ?? 2));
/** The fixed rate CPU per operation is measured at (requests per second) */
const CPU_RATE = Number(process.env.BENCH_CPU_RATE ?? 100);
const WORKERS = Number(process.env.TESSERA_WORKERS ?? 1);
const ACCOUNTS = 1000;

interface Result {
  name: string;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** To the raw-Postgres baseline of this run */
  ratio: number;
  /** To the path's floor in this run (null where a path has none) */
  floorRatio: number | null;
  /** CPU per operation at the fixed rate, ms: the server's processes and Postgres's together */
  cpuMsPerOp: number | null;
  /** Of which the server's (Node) processes */
  nodeCpuMsPerOp: number | null;
  /** Of which Postgres (postmaster and backends) */
  dbCpuMsPerOp: number | null;
  clientCpuMsPerOp?: number | null;
  halfRate?: { ratePerSecond: number; p50Ms: number; p99Ms: number };
  rowsPerOp?: string;
  /** Sampled during the first saturated run: time its backends spent waiting for a lock, per operation */
  lockWaits?: LockWaits;
  /** To the same path without an Idempotency-Key, in this run (keyed paths only) */
  unkeyedRatio?: number;
  /** To baselines measured alternately with it, ROUNDS times each (the ledger's one-statement transfers) */
  alternatingRatio?: number;
  /** A traced run's rate to the same path untraced in this run */
  untracedRatio?: number;
  /** The path under ten active risk rules, to the same path with none, in this run (alternating) */
  noRulesRatio?: number;
  errors: number;
}

const round2 = (n: number) => Math.round(n * 100) / 100;
const ratioOf = (a: number, b: number) => round2(a / Math.max(1, b));

async function main() {
  let stopDatabase = async () => {};
  let databaseUrl = process.env.DATABASE_URL;
  let directory: string | undefined;
  let postgresPid: number | undefined;
  if (!databaseUrl) {
    directory = await mkdtemp(join(tmpdir(), 'tessera-bench-'));
    await chmod(directory, 0o755);
    const dataDir = join(directory, 'data');
    const server = await startEmbeddedPostgres({
      directory: dataDir,
      password: randomBytes(12).toString('hex'),
      // The WAL of a measured run is read back (walBreakdown): kept past the checkpoints that would recycle it.
      // BENCH_WAL_COMPRESSION (off, pglz, …) compresses full-page images, to weigh it against its CPU.
      postgresFlags: [
        '-c',
        'wal_keep_size=4GB',
        ...(process.env.BENCH_WAL_COMPRESSION
          ? ['-c', `wal_compression=${process.env.BENCH_WAL_COMPRESSION}`]
          : []),
      ],
    });
    await ensureDatabase(server.connectionString('postgres'), 'tessera_bench');
    databaseUrl = server.connectionString('tessera_bench');
    stopDatabase = () => server.stop();
    postgresPid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  }
  const handle = openDatabase(databaseUrl, { max: CONCURRENCY });
  try {
    await migrate(databaseUrl);
    process.stdout.write(
      `Benchmarks: ${SECONDS} s per measurement after ${WARMUP_SECONDS} s warm-up; saturated = ${CONCURRENCY} ` +
        `requests in flight; CPU per operation at ${CPU_RATE}/s; TESSERA_WORKERS=${WORKERS}\n\n`,
    );
    const settings = { concurrency: CONCURRENCY, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS };
    const inProcess = async (name: string, operation: () => Promise<void>): Promise<Result> => {
      const cpuBefore = process.cpuUsage();
      const dbBefore = postgresPid ? treeCpuMs(postgresPid) : null;
      const m = await measure(name, settings, operation);
      const cpu = process.cpuUsage(cpuBefore);
      const dbAfter = postgresPid ? treeCpuMs(postgresPid) : null;
      // Over warm-up and measurement alike: operations are counted the same way.
      const operations = Math.max(1, m.opsPerSec * (SECONDS + WARMUP_SECONDS));
      return {
        ...pick(m),
        ratio: 1,
        floorRatio: null,
        ...cpuFigures(
          round3((cpu.user + cpu.system) / 1000 / operations),
          dbBefore === null || dbAfter === null ? null : round3((dbAfter - dbBefore) / operations),
        ),
      };
    };

    const baseline = await runBaseline(databaseUrl, inProcess);
    const results: Result[] = [];
    const record = (result: Result) => {
      result.ratio = ratioOf(result.opsPerSec, baseline.opsPerSec);
      results.push(result);
      report(result);
    };
    report(baseline);

    // BENCH_ONLY=payments (a comma-separated list of groups) measures only those, beside the baseline.
    const only = process.env.BENCH_ONLY?.split(',');
    const chosen = (group: string) => !only || only.includes(group);
    if (chosen('ledger')) {
      const baselineAgain = () => runBaseline(databaseUrl as string, inProcess);
      for (const result of await ledgerScenarios(handle, inProcess, baselineAgain)) record(result);
    }

    const paths = ['issuing', 'crypto', 'payments'].filter(chosen);
    if (paths.length > 0) {
      const serverDir = await mkdtemp(join(tmpdir(), 'tessera-bench-server-'));
      const tessera = await startTessera(databaseUrl, { workers: WORKERS, dataDir: serverDir });
      try {
        const setups: Record<string, PathSetup<unknown> & { label: string; table: string }> = {};
        const fixture: FloorFixture = {
          payments: {
            merchantId: 0,
            siteId: 0,
            siteBalanceAccounts: [],
            receivableAccounts: [],
            currency: 'EUR',
          },
          issuing: { cards: {}, settlementAccounts: [] },
          crypto: { storeId: '' },
          publicUrl: tessera.base,
        };
        if (chosen('issuing')) {
          const setup = await setUpIssuing(tessera, handle.db);
          fixture.issuing = setup.fixture;
          setups.issuing = { ...setup, label: 'card authorization (no 3DS)', table: 'issuing_transactions' };
        }
        if (chosen('crypto')) {
          const setup = await setUpCrypto(tessera);
          fixture.crypto = setup.fixture;
          setups.crypto = { ...setup, label: 'crypto order creation', table: 'crypto_orders' };
        }
        if (chosen('payments')) {
          const setup = await setUpPayments(tessera, handle.db);
          fixture.payments = setup.fixture;
          setups.payments = {
            ...setup,
            label: 'payments order (purchase, authAndCapture, new card)',
            table: 'payments_orders',
          };
        }
        const floor = await startFloor(databaseUrl, { workers: WORKERS, fixture });
        try {
          for (const path of paths) {
            const setup = setups[path];
            if (!setup) continue;
            const measured = await measurePath(
              setup,
              { tessera: tessera.pid, floor: floor.pid, base: floor.base },
              handle,
            );
            for (const result of measured) record(result);
          }
        } finally {
          await floor.stop();
        }
        if (chosen('risk') && setups.payments) {
          for (const result of await riskOverhead(tessera, setups.payments, handle)) record(result);
        }
        if (chosen('risk') && setups.issuing) {
          for (const result of await issuingRiskOverhead(tessera, setups.issuing, handle)) record(result);
        }
        if (chosen('risk') && setups.crypto) {
          for (const result of await cryptoRiskOverhead(tessera, setups.crypto, handle)) record(result);
        }
        const traced = setups.payments ?? setups.crypto;
        if (chosen('tracing') && traced) {
          for (const result of await tracingOverhead(databaseUrl, traced, tessera.pid, handle))
            record(result);
        }
      } finally {
        await tessera.stop();
        await rm(serverDir, { recursive: true, force: true });
      }
    }

    // How long a person waits for the command line (its own processes, after the servers stopped).
    let cli: CliTiming[] = [];
    if (chosen('cli')) {
      process.stdout.write('\nThe command line (median of real processes; floor: node -e 0)\n');
      cli = await cliTimings();
      for (const t of cli) {
        process.stdout.write(
          `  ${t.name.padEnd(64)} ${String(t.medianMs).padStart(6)} ms  ×${t.floorRatio} floor\n`,
        );
      }
    }

    const output = {
      baseline,
      results,
      cli,
      meta: {
        date: new Date().toISOString(),
        machine: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
        workers: WORKERS,
        concurrency: CONCURRENCY,
        seconds: SECONDS,
        cpuRatePerSecond: CPU_RATE,
        database: process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded Postgres 17, durable defaults',
      },
    };
    await writeFile(new URL('./results.json', import.meta.url), `${JSON.stringify(output, null, 2)}\n`);
    process.stdout.write('\nwritten to bench/results.json\n');
  } finally {
    await handle.close();
    await stopDatabase();
    if (directory) await rm(directory, { recursive: true, force: true });
  }
}

type InProcess = (name: string, operation: () => Promise<void>) => Promise<Result>;

/** The ceiling of any durable write: one single-row insert transaction (BEGIN, INSERT, COMMIT). */
async function runBaseline(databaseUrl: string, inProcess: InProcess): Promise<Result> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: CONCURRENCY });
  await pool.query(
    'CREATE TABLE IF NOT EXISTS bench_baseline (id bigserial PRIMARY KEY, payload text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())',
  );
  try {
    return await inProcess('raw Postgres insert transaction (baseline)', async () => {
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

async function ledgerScenarios(
  handle: DatabaseHandle,
  inProcess: InProcess,
  baselineAgain: () => Promise<Result>,
): Promise<Result[]> {
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
  const pickAccount = () => accounts[Math.floor(Math.random() * accounts.length)] as LedgerAccount;
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
  // As the one-statement write paths post: the transfer staged in a batch, one statement in autocommit.
  const transferAtOnce = async (from: LedgerAccount, to: LedgerAccount) => {
    const batch = new StatementBatch();
    ledger.stageTransfer(batch, {
      operationId: randomUUID(),
      legs: [
        { accountId: from.id, amount: -100n },
        { accountId: to.id, amount: 100n },
      ],
    });
    await batch.run(handle.db);
  };
  const pair = () => {
    const from = pickAccount();
    let to = pickAccount();
    while (to.id === from.id) to = pickAccount();
    return [from, to] as const;
  };
  // An unbounded account every transfer credits (the platform's revenue): a delta, no lock (migration 0034).
  const hotUnbounded = await open('hot-unbounded', false);
  const once = [
    await inProcess('ledger transfer, random accounts', async () => {
      await transfer(...pair());
    }),
    await inProcess('ledger transfer into one hot account', async () => {
      await transfer(pickAccount(), hot);
    }),
  ];
  // The transfers the goals name (≥ 0.5× the baseline between random accounts, ≥ 0.3× into one hot
  // account) are measured ROUNDS times, alternating with the baseline itself, so that a drift of the shared
  // machine falls on both sides of their ratio.
  const alternating: [string, () => Promise<void>][] = [
    ['ledger transfer, random accounts, one statement', () => transferAtOnce(...pair())],
    ['ledger transfer into one hot account, one statement', () => transferAtOnce(pickAccount(), hot)],
  ];
  const baselines: Result[] = [];
  const runs: Result[][] = alternating.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    baselines.push(await baselineAgain());
    for (const [i, [name, operation]] of alternating.entries())
      runs[i]?.push(await inProcess(name, operation));
  }
  const baselineOps = meanResult(baselines).opsPerSec;
  const paired = runs.map((measured) => {
    const mean = meanResult(measured);
    return { ...mean, alternatingRatio: ratioOf(mean.opsPerSec, baselineOps) };
  });
  return [
    ...once,
    ...paired,
    await inProcess('ledger transfer into one hot unbounded account, one statement', async () => {
      await transferAtOnce(pickAccount(), hotUnbounded);
    }),
  ];
}

/** In-process measurements of one thing as one: rates, latencies and CPU figures averaged, errors added. */
function meanResult(runs: readonly Result[]): Result {
  const [first] = runs as [Result];
  const mean = (pick: (r: Result) => number | null) => {
    const values = runs.map(pick);
    return values.some((v) => v === null)
      ? null
      : round3(values.reduce((total: number, v) => total + (v ?? 0), 0) / runs.length);
  };
  return {
    ...first,
    opsPerSec: Math.round(mean((r) => r.opsPerSec) ?? 0),
    p50Ms: round2(mean((r) => r.p50Ms) ?? 0),
    p99Ms: round2(mean((r) => r.p99Ms) ?? 0),
    ...cpuFigures(
      mean((r) => r.nodeCpuMsPerOp),
      mean((r) => r.dbCpuMsPerOp),
    ),
    errors: runs.reduce((total, r) => total + r.errors, 0),
  };
}

/** Measurements of one thing as one: throughput and latencies averaged, errors added. */
function meanOf(runs: readonly HttpMeasurement[]): HttpMeasurement {
  const [first] = runs as [HttpMeasurement];
  const sum = (pick: (m: HttpMeasurement) => number) => runs.reduce((total, m) => total + pick(m), 0);
  const mean = (pick: (m: HttpMeasurement) => number) => Math.round((sum(pick) / runs.length) * 100) / 100;
  return {
    ...first,
    opsPerSec: Math.round(sum((m) => m.opsPerSec) / runs.length),
    p50Ms: mean((m) => m.p50Ms),
    p99Ms: mean((m) => m.p99Ms),
    operations: sum((m) => m.operations),
    errors: sum((m) => m.errors),
    firstError: runs.find((m) => m.firstError)?.firstError ?? '',
  };
}

/** The Postgres backends serving a server: its connections are named (application_name). */
async function backendsOf(handle: DatabaseHandle, applicationName: string): Promise<number[]> {
  const { rows } = await sql<{ pid: number }>`
    SELECT pid FROM pg_stat_activity WHERE application_name LIKE ${applicationName}`.execute(handle.db);
  return rows.map((row) => row.pid);
}

/** A path and its floor: saturated, at half their own saturated rates, and at the fixed CPU rate. */
async function measurePath(
  setup: PathSetup<unknown> & { label: string; table: string },
  processes: { tessera: number; floor: number; base: string },
  handle: DatabaseHandle,
): Promise<Result[]> {
  const sides = [
    { name: setup.label, target: setup.target, server: processes.tessera, applicationName: 'tessera%' },
    {
      name: `${setup.label}, with Idempotency-Key`,
      target: { ...setup.target, keyed: true },
      server: processes.tessera,
      applicationName: 'tessera%',
    },
    {
      name: `${setup.label}: floor`,
      target: { ...setup.floor, base: processes.base },
      server: processes.floor,
      applicationName: FLOOR_APPLICATION,
    },
  ];
  const load = (side: (typeof sides)[number], shape: LoadShape, suffix: string) =>
    runHttpLoad(`${side.name}${suffix}`, side.target, shape, {
      server: side.server,
      backends: () => backendsOf(handle, side.applicationName),
    });
  const saturatedShape: LoadShape = {
    mode: 'closed',
    concurrency: CONCURRENCY,
    ratePerSecond: 0,
    seconds: SECONDS,
    warmupSeconds: WARMUP_SECONDS,
  };
  // Saturated ROUNDS times each, alternating (path, keyed, floor, path, …), so a drift of the shared
  // machine falls on all three; the rows written and the lock waits are read in the first round.
  const rows: string[] = [];
  const waits: LockWaits[] = [];
  const firstRound: HttpMeasurement[] = [];
  let before = await tableWrites(handle.db);
  for (const side of sides) {
    // BENCH_CHECKPOINT: each side starts a checkpoint cycle, so its WAL carries the full-page images every
    // page it touches costs once per cycle (the worst case, the same for every side) rather than by chance
    if (process.env.BENCH_CHECKPOINT) {
      await sql`CHECKPOINT`.execute(handle.db);
      before = await tableWrites(handle.db);
    }
    const sampler = sampleLockWaits(handle, side.applicationName);
    const measured = await load(side, saturatedShape, '');
    firstRound.push(measured);
    waits.push(await sampler.stop(measured.operations));
    const after = await tableWrites(handle.db);
    const operations = operationsBetween(before, after, setup.table);
    rows.push(
      `${writesPerOperation(before, after, setup.table)}\n${''.padEnd(4)}${await walBreakdown(handle.db, before, after, operations)}`,
    );
    before = after;
  }
  const rounds = firstRound.map((measured) => [measured]);
  for (let round = 1; round < ROUNDS; round++) {
    for (const [i, side] of sides.entries()) rounds[i]?.push(await load(side, saturatedShape, ''));
  }
  const saturated = rounds.map(meanOf);
  const atRate = async (ratePerSecond: number, side: (typeof sides)[number]) =>
    load(
      side,
      { mode: 'open', concurrency: 0, ratePerSecond, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS },
      ` at ${ratePerSecond}/s`,
    );
  const half: HttpMeasurement[] = [];
  const fixed: HttpMeasurement[] = [];
  for (const [i, side] of sides.entries()) {
    half.push(await atRate(Math.max(1, Math.round((saturated[i]?.opsPerSec ?? 2) / 2)), side));
  }
  for (const side of sides) fixed.push(await atRate(CPU_RATE, side));
  const floorOps = saturated[2]?.opsPerSec ?? 0;
  const unkeyed = saturated[0]?.opsPerSec ?? 0;
  return sides.map((_, i) => {
    const s = saturated[i] as HttpMeasurement;
    const h = half[i] as HttpMeasurement;
    const f = fixed[i] as HttpMeasurement;
    const firstError = s.firstError || h.firstError || f.firstError;
    if (firstError) process.stdout.write(`  (${s.name}: first error: ${firstError})\n`);
    return {
      ...pick(s),
      ratio: 0,
      floorRatio: ratioOf(s.opsPerSec, floorOps),
      ...cpuFigures(f.serverCpuMsPerOp, f.dbCpuMsPerOp),
      clientCpuMsPerOp: f.clientCpuMsPerOp,
      halfRate: { ratePerSecond: Math.round(s.opsPerSec / 2), p50Ms: h.p50Ms, p99Ms: h.p99Ms },
      rowsPerOp: rows[i] ?? '',
      ...(waits[i] ? { lockWaits: waits[i] } : {}),
      ...(i === 1 ? { unkeyedRatio: ratioOf(s.opsPerSec, unkeyed) } : {}),
      errors: s.errors + h.errors + f.errors,
    };
  });
}

/**
 * What tracing costs (docs/benchmarks.md): the same write path on a second server that exports every span
 * over OTLP/HTTP to a collector here (which reads and discards them), saturated, alternating with the
 * untraced server twice. The traced server has its own merchant or store, set up as the first's.
 */
async function tracingOverhead(
  databaseUrl: string,
  untraced: PathSetup<unknown> & { label: string },
  untracedPid: number,
  handle: DatabaseHandle,
): Promise<Result[]> {
  let spans = 0;
  const collector = createServer((request, response) => {
    let bytes = 0;
    request.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    request.on('end', () => {
      spans += bytes > 0 ? 1 : 0;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  const dir = await mkdtemp(join(tmpdir(), 'tessera-bench-traced-'));
  const traced = await startTessera(databaseUrl, {
    workers: WORKERS,
    dataDir: dir,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: 'tessera-bench' },
  });
  try {
    const setup = untraced.label.startsWith('payments')
      ? await setUpPayments(traced, handle.db)
      : await setUpCrypto(traced);
    const [off, on] = await alternateSaturated(
      [
        { name: `${untraced.label}, tracing off`, target: untraced.target, server: untracedPid },
        { name: `${untraced.label}, traced (OTLP)`, target: setup.target, server: traced.pid },
      ],
      handle,
    );
    process.stdout.write(`  (the collector received ${spans} OTLP exports)\n`);
    return compared(off, on, 'untracedRatio');
  } finally {
    await traced.stop();
    await rm(dir, { recursive: true, force: true });
    await new Promise<void>((resolve) => collector.close(() => resolve()));
  }
}

/** Ten active risk rules that read velocity, a list and plain attributes, and never match a bench order. */
const BENCH_RULES = [
  'velocity.card.count_10m > 100000',
  'velocity.card.sum_24h > 100000000000',
  'velocity.customer.count_1h > 100000',
  'velocity.ip.count_10m > 100000',
  'velocity.ip.declines_1h > 100000',
  'card.bin in list("bench_bins")',
  'amount > 100000000',
  'email_domain == "blocked.example"',
  'card.country == "KP"',
  'customer.age_days < 0',
];

/**
 * `risk`: payments orders of a merchant under ten active rules (velocity on its cards, customers and IPs,
 * a list, attributes; docs/risk.md) against the same orders of a merchant with none, alternating ROUNDS
 * times. Each customer pays with its own card, as velocity by card would see in a shop.
 */
async function riskOverhead(
  tessera: Awaited<ReturnType<typeof startTessera>>,
  plain: PathSetup<unknown> & { label: string },
  handle: DatabaseHandle,
): Promise<Result[]> {
  const setup = await setUpPayments(tessera, handle.db, { cardPerCustomer: true });
  const scope = { kind: 'merchant', id: String(setup.fixture.merchantId) };
  const list = await tessera.call<{ id: string }>('POST', '/admin/risk/lists', tessera.admin, {
    name: 'bench_bins',
    kind: 'bin',
    scope,
  });
  await tessera.call('POST', `/admin/risk/lists/${list.id}/items`, tessera.admin, { items: ['999999'] });
  const rules = { scope, decisionPoint: 'payments.charge', action: 'block', expressions: BENCH_RULES };
  return ruledAgainstPlain(tessera, plain, setup, rules, handle);
}

/** The ten rules written for the ruled side's tenant, then both sides saturated, alternating. */
async function ruledAgainstPlain(
  tessera: Awaited<ReturnType<typeof startTessera>>,
  plain: PathSetup<unknown> & { label: string },
  ruled: PathSetup<unknown>,
  rules: {
    scope: { kind: string; id: string };
    decisionPoint: string;
    action: string;
    expressions: string[];
  },
  handle: DatabaseHandle,
): Promise<Result[]> {
  for (const [i, expression] of rules.expressions.entries()) {
    await tessera.call('POST', '/admin/risk/rules', tessera.admin, {
      name: `bench ${i}`,
      scope: rules.scope,
      decisionPoint: rules.decisionPoint,
      expression,
      action: rules.action,
    });
  }
  const [none, withRules] = await alternateSaturated(
    [
      { name: `${plain.label}, no risk rules`, target: plain.target, server: tessera.pid },
      { name: `${plain.label}, ten risk rules`, target: ruled.target, server: tessera.pid },
    ],
    handle,
  );
  return compared(none, withRules, 'noRulesRatio');
}

/** Ten active rules at issuing.authorization: velocity per card, cardholder and partner, and attributes. */
const BENCH_ISSUING_RULES = [
  'velocity.card.count_10m > 100000',
  'velocity.card.sum_24h > 100000000000',
  'velocity.customer.count_1h > 100000',
  'velocity.tenant.count_10m > 100000000',
  'velocity.card.count_30d > 100000000',
  'issuing.mcc == "7995" && amount > 100000000',
  'issuing.merchant_country == "KP"',
  'issuing.channel == "atm" && amount > 100000000',
  'amount > 100000000',
  'issuing.merchant_id == "blocked-bench-merchant"',
];

/**
 * `risk`, card authorizations: a partner's cards under ten active rules at issuing.authorization against
 * the same authorizations of a partner with none, alternating ROUNDS times.
 */
async function issuingRiskOverhead(
  tessera: Awaited<ReturnType<typeof startTessera>>,
  plain: PathSetup<unknown> & { label: string },
  handle: DatabaseHandle,
): Promise<Result[]> {
  const setup = await setUpIssuing(tessera, handle.db);
  const partner = await handle.db
    .selectFrom('partners')
    .select('id')
    .orderBy('created_at', 'desc')
    .executeTakeFirstOrThrow();
  const rules = {
    scope: { kind: 'partner', id: partner.id },
    decisionPoint: 'issuing.authorization',
    action: 'decline',
    expressions: BENCH_ISSUING_RULES,
  };
  return ruledAgainstPlain(tessera, plain, setup, rules, handle);
}

/** Ten active rules at crypto.order: velocity per buyer email and per store, and attributes. */
const BENCH_CRYPTO_RULES = [
  'velocity.email.count_10m > 100000',
  'velocity.email.sum_24h > 100000000000',
  'velocity.email.count_1h > 100000',
  'velocity.tenant.count_10m > 100000000',
  'velocity.email.count_30d > 100000000',
  'billing_country == "KP"',
  'email_domain == "blocked.example"',
  'order.line_items > 1000',
  'amount > 100000000',
  'order.ttl_seconds < 60',
];

/**
 * `risk`, crypto orders: a store's orders under ten active rules at crypto.order against the same orders
 * of a store with none, alternating ROUNDS times.
 */
async function cryptoRiskOverhead(
  tessera: Awaited<ReturnType<typeof startTessera>>,
  plain: PathSetup<unknown> & { label: string },
  handle: DatabaseHandle,
): Promise<Result[]> {
  const setup = await setUpCrypto(tessera);
  const rules = {
    scope: { kind: 'store', id: setup.fixture.storeId },
    decisionPoint: 'crypto.order',
    action: 'block',
    expressions: BENCH_CRYPTO_RULES,
  };
  return ruledAgainstPlain(tessera, plain, setup, rules, handle);
}

/**
 * Two sides saturated ROUNDS times each, alternating, so that a drift of the shared machine falls on both;
 * the mean of each.
 */
async function alternateSaturated(
  sides: { name: string; target: HttpTarget; server: number }[],
  handle: DatabaseHandle,
): Promise<[HttpMeasurement, HttpMeasurement]> {
  const shape: LoadShape = {
    mode: 'closed',
    concurrency: CONCURRENCY,
    ratePerSecond: 0,
    seconds: SECONDS,
    warmupSeconds: WARMUP_SECONDS,
  };
  const runs: HttpMeasurement[][] = sides.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, side] of sides.entries()) {
      runs[i]?.push(
        await runHttpLoad(side.name, side.target, shape, {
          server: side.server,
          backends: () => backendsOf(handle, 'tessera%'),
        }),
      );
    }
  }
  return runs.map(meanOf) as [HttpMeasurement, HttpMeasurement];
}

/** Both sides as results, the second with its rate to the first's under `ratio`. */
function compared(
  first: HttpMeasurement,
  second: HttpMeasurement,
  ratio: 'untracedRatio' | 'noRulesRatio',
): Result[] {
  return [first, second].map((m, i) => ({
    ...pick(m),
    ratio: 0,
    floorRatio: null,
    ...cpuFigures(m.serverCpuMsPerOp, m.dbCpuMsPerOp),
    ...(i === 1 ? { [ratio]: ratioOf(second.opsPerSec, first.opsPerSec) } : {}),
    errors: m.errors,
  }));
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

interface LockWaits {
  /** Time the server's backends spent waiting for a heavyweight lock (a row, a transaction id), per operation */
  lockMsPerOp: number;
  /** Average number of its backends waiting on anything (locks, WAL, I/O) at a sample */
  waitingBackends: number;
  /** The most frequent wait events, with their share of samples */
  top: string;
}

/**
 * Samples pg_stat_activity every 20 ms while a load runs: how many of the server's backends wait, and on
 * what. A lock wait (wait_event_type 'Lock': a row another transaction holds) per operation is the figure
 * that says whether requests queue behind each other's rows.
 */
function sampleLockWaits(handle: DatabaseHandle, applicationName: string) {
  const intervalMs = 20;
  let samples = 0;
  let lockWaiting = 0;
  let waiting = 0;
  const events = new Map<string, number>();
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await sql<{ event: string; n: number }>`
        SELECT wait_event_type || ':' || wait_event AS event, count(*)::int AS n FROM pg_stat_activity
        WHERE application_name LIKE ${applicationName} AND state = 'active' AND wait_event IS NOT NULL
          AND wait_event_type <> 'Client'
        GROUP BY 1`.execute(handle.db);
      samples++;
      for (const row of rows) {
        waiting += row.n;
        if (row.event.startsWith('Lock:')) lockWaiting += row.n;
        events.set(row.event, (events.get(row.event) ?? 0) + row.n);
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop(operations: number): Promise<LockWaits> {
      running = false;
      await loop;
      const seconds = SECONDS + WARMUP_SECONDS;
      const perSample = (n: number) => n / Math.max(1, samples);
      const top = [...events]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 3)
        .map(([event, n]) => `${event} ${perSample(n).toFixed(2)}`)
        .join(', ');
      return {
        // backends waiting × the run's length, spread over its operations (warm-up ones counted alike)
        lockMsPerOp: round3(
          (perSample(lockWaiting) * seconds * 1000) / Math.max(1, operations * (seconds / SECONDS)),
        ),
        waitingBackends: round2(perSample(waiting)),
        top: top || 'none',
      };
    },
  };
}

function cpuFigures(node: number | null, db: number | null) {
  return {
    cpuMsPerOp: node === null ? null : round3(node + (db ?? 0)),
    nodeCpuMsPerOp: node,
    dbCpuMsPerOp: db,
  };
}

function pick(m: Measurement) {
  return { name: m.name, opsPerSec: m.opsPerSec, p50Ms: m.p50Ms, p99Ms: m.p99Ms, errors: m.errors };
}

function report(r: Result) {
  const ms = (n: number | null | undefined) =>
    n === null || n === undefined ? '   -  ' : n.toFixed(2).padStart(6);
  process.stdout.write(
    `${r.name.padEnd(60)} ${String(r.opsPerSec).padStart(6)} ops/s  p50 ${ms(r.p50Ms)}  p99 ${ms(r.p99Ms)}  ` +
      `ratio ${r.ratio.toFixed(2)}${r.floorRatio === null ? '' : `  floor ${r.floorRatio.toFixed(2)}`}` +
      `  cpu/op ${ms(r.cpuMsPerOp)} ms (node ${ms(r.nodeCpuMsPerOp)} + db ${ms(r.dbCpuMsPerOp)})` +
      (r.halfRate ? `  p99 at ${r.halfRate.ratePerSecond}/s ${ms(r.halfRate.p99Ms)}` : '') +
      (r.unkeyedRatio !== undefined ? `  keyed/unkeyed ${r.unkeyedRatio.toFixed(2)}` : '') +
      (r.alternatingRatio !== undefined
        ? `  to the baseline alternated (${ROUNDS} rounds) ${r.alternatingRatio.toFixed(2)}`
        : '') +
      (r.untracedRatio !== undefined ? `  traced/untraced ${r.untracedRatio.toFixed(2)}` : '') +
      (r.noRulesRatio !== undefined ? `  rules/none ${r.noRulesRatio.toFixed(2)}` : '') +
      (r.errors ? `  (${r.errors} errors)` : '') +
      '\n' +
      (r.rowsPerOp ? `${''.padEnd(4)}rows per op: ${r.rowsPerOp}\n` : '') +
      (r.lockWaits
        ? `${''.padEnd(4)}lock waits per op: ${r.lockWaits.lockMsPerOp.toFixed(3)} ms; ` +
          `backends waiting (avg): ${r.lockWaits.waitingBackends.toFixed(2)}; top waits: ${r.lockWaits.top}\n`
        : ''),
  );
}

await main();
