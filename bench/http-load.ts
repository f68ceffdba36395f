// Drives one HTTP load from the client process (bench/load-client.mjs) and reads the CPU the server and
// Postgres spent while it measured.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type Measurement, summarize } from './measure.ts';
import { treeCpuMs } from './process-cpu.ts';

const CLIENT = fileURLToPath(new URL('./load-client.mjs', import.meta.url));

export interface HttpTarget {
  base: string;
  path: string;
  headers: Record<string, string>;
  bodies: string[];
  /** Text every successful answer contains */
  expect: string;
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

export function runHttpLoad(
  name: string,
  target: HttpTarget,
  shape: LoadShape,
  pids: { server: number; postgres: number | undefined },
): Promise<HttpMeasurement> {
  const url = new URL(target.base);
  // No loader: the client is plain JavaScript, and should cost only what its requests cost.
  const child = fork(CLIENT, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const sample = () => ({
    server: treeCpuMs(pids.server),
    postgres: pids.postgres ? treeCpuMs(pids.postgres) : null,
  });
  let started = sample();
  let ended = started;
  return new Promise((resolve, reject) => {
    child.on(
      'message',
      (message: {
        phase: string;
        latencies: number[];
        errors: number;
        firstError: string;
        clientCpuMs: number;
      }) => {
        if (message.phase === 'measuring') started = sample();
        else if (message.phase === 'done') ended = sample();
        else if (message.phase === 'result') {
          const summary = summarize(name, message.latencies, shape.seconds, message.errors);
          const perOp = (a: number | null, b: number | null) =>
            a === null || b === null || summary.operations === 0
              ? null
              : Math.round(((b - a) / summary.operations) * 1000) / 1000;
          resolve({
            ...summary,
            serverCpuMsPerOp: perOp(started.server, ended.server),
            dbCpuMsPerOp: perOp(started.postgres, ended.postgres),
            clientCpuMsPerOp:
              summary.operations === 0
                ? 0
                : Math.round((message.clientCpuMs / summary.operations) * 1000) / 1000,
            firstError: message.firstError,
          });
        }
      },
    );
    child.once('error', reject);
    // Settles nothing once the result has resolved the promise; otherwise the client died.
    child.once('exit', (code) => reject(new Error(`the load client exited (${code}) without a result`)));
    child.send({
      origin: url.origin,
      path: `${url.pathname.replace(/\/$/, '')}${target.path}`,
      headers: target.headers,
      bodies: target.bodies,
      expect: target.expect,
      ...shape,
    });
  });
}
