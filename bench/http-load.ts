// Drives one HTTP load from the client process (bench/load-client.mjs) and reads the CPU the server and
// Postgres spent while it measured.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type Measurement, summarize } from './measure.ts';
import { processesCpuMs, treeCpuMs } from './process-cpu.ts';

const CLIENT = fileURLToPath(new URL('./load-client.mjs', import.meta.url));

export interface HttpTarget {
  base: string;
  path: string;
  headers: Record<string, string>;
  bodies: string[];
  /** Text every successful answer contains */
  expect: string;
  /** Each request carries a new Idempotency-Key */
  keyed?: boolean;
}

export interface LoadShape {
  mode: 'closed' | 'open';
  concurrency: number;
  ratePerSecond: number;
  seconds: number;
  warmupSeconds: number;
}

export interface HttpMeasurement extends Measurement {
  /** CPU of the server's processes per completed operation, ms (null where unmeasured) */
  serverCpuMsPerOp: number | null;
  /** CPU of Postgres (postmaster and backends) per completed operation, ms */
  dbCpuMsPerOp: number | null;
  /** CPU of the load client per completed operation, ms */
  clientCpuMsPerOp: number;
  firstError: string;
}

interface ClientResult {
  latencies: number[];
  errors: number;
  firstError: string;
  clientCpuMs: number;
}

export function runHttpLoad(
  name: string,
  target: HttpTarget,
  shape: LoadShape,
  pids: {
    server: number;
    /** The Postgres backends serving the server under test (their CPU is the database's share) */
    backends: (() => Promise<number[]>) | undefined;
  },
): Promise<HttpMeasurement> {
  const url = new URL(target.base);
  // No loader: the client is plain JavaScript, and should cost only what its requests cost.
  const child = fork(CLIENT, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const sample = async () => ({
    server: treeCpuMs(pids.server),
    backends: pids.backends ? processesCpuMs(await pids.backends()) : undefined,
  });
  let started = sample();
  let ended = started;
  // A backend opened during the run started from nothing; one closed during it is not counted.
  const backendsPerOp = async (operations: number) => {
    const [a, b] = [(await started).backends, (await ended).backends];
    if (!a || !b || operations === 0 || process.platform !== 'linux') return null;
    let used = 0;
    for (const [pid, ms] of b) used += ms - (a.get(pid) ?? 0);
    return Math.round((used / operations) * 1000) / 1000;
  };
  return new Promise((resolve, reject) => {
    let hasResult = false;
    const settle = async (message: ClientResult) => {
      const summary = summarize(name, message.latencies, shape.seconds, message.errors);
      const [from, to] = [await started, await ended];
      const perOp = (ms: number | null) =>
        ms === null || summary.operations === 0 ? null : Math.round((ms / summary.operations) * 1000) / 1000;
      resolve({
        ...summary,
        serverCpuMsPerOp: perOp(from.server === null || to.server === null ? null : to.server - from.server),
        dbCpuMsPerOp: await backendsPerOp(summary.operations),
        clientCpuMsPerOp: perOp(message.clientCpuMs) ?? 0,
        firstError: message.firstError,
      });
    };
    child.on('message', (message: { phase: string } & ClientResult) => {
      if (message.phase === 'measuring') started = sample();
      else if (message.phase === 'done') ended = sample();
      else if (message.phase === 'result') {
        hasResult = true;
        settle(message).catch(reject);
      }
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (!hasResult) reject(new Error(`the load client exited (${code}) without a result`));
    });
    child.send({
      origin: url.origin,
      path: `${url.pathname.replace(/\/$/, '')}${target.path}`,
      headers: target.headers,
      bodies: target.bodies,
      expect: target.expect,
      keyed: target.keyed ?? false,
      ...shape,
    });
  });
}
