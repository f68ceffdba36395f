// The `cli` group of `npm run bench` (docs/benchmarks.md, The command line): how long a person waits
// for `tessera` — `--version`, `--help`, an admin command on the database, and `tessera serve` (what
// `npm start` runs) until /readyz answers, on an existing data directory. Each is a real process,
// timed from spawn to exit (or to ready), the median of BENCH_CLI_RUNS; beside them the floor, `node -e 0`
// (Node's own start), in the same run. The first run of each is left out: it may build (a fresh
// checkout's first command compiles the sources, about a second) or create the data directory.
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../packages/server/bin/tessera.mjs', import.meta.url));
const RUNS = Math.max(3, Number(process.env.BENCH_CLI_RUNS ?? 5));

export interface CliTiming {
  name: string;
  medianMs: number;
  /** Its median over the floor's (`node -e 0`) */
  floorRatio: number;
}

function timeRun(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk);
    });
    child.on('exit', (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`${args.join(' ')}: ${stderr}`)),
    );
  });
}

/** `tessera serve` from spawn until /readyz answers 200, then stopped. */
async function timeServe(env: NodeJS.ProcessEnv, port: number): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...env, PORT: String(port) },
    stdio: 'ignore',
  });
  try {
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) return performance.now() - started;
      if (performance.now() - started > 60_000) throw new Error('tessera serve was not ready in 60 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

export async function cliTimings(): Promise<CliTiming[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tessera-bench-cli-'));
  // Postgres runs as another user when the bench runs as root: it must be able to enter the directory.
  await chmod(dataDir, 0o755);
  // The embedded database of its own data directory, whatever the bench's DATABASE_URL.
  const { DATABASE_URL: _ignored, ...inherited } = process.env;
  const env = { ...inherited, TESSERA_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  const port = 18_000 + Math.floor(Math.random() * 1000);
  const cases: [string, () => Promise<number>][] = [
    ['node -e 0 (floor)', () => timeRun(['-e', '0'], env)],
    ['tessera --version', () => timeRun([BIN, '--version'], env)],
    ['tessera --help', () => timeRun([BIN, '--help'], env)],
    [
      'tessera admin create-partner (embedded Postgres started for it)',
      () => timeRun([BIN, 'admin', 'create-partner', '--name', 'Bench'], env),
    ],
    ['tessera serve until ready (existing data directory)', () => timeServe(env, port)],
  ];
  try {
    const medians: number[] = [];
    for (const [, run] of cases) {
      await run();
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) times.push(await run());
      medians.push(median(times));
    }
    const floor = medians[0] ?? 1;
    return cases.map(([name], i) => ({
      name,
      medianMs: Math.round(medians[i] ?? 0),
      floorRatio: Math.round(((medians[i] ?? 0) / floor) * 10) / 10,
    }));
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** BENCH_ONLY=cli runs only this group: `tsx bench/cli.ts` prints it alone too. */
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const t of await cliTimings()) {
    process.stdout.write(
      `${t.name.padEnd(64)} ${String(t.medianMs).padStart(6)} ms  ×${t.floorRatio} floor\n`,
    );
  }
}
