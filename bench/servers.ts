// The processes the HTTP scenarios measure: Tessera as an operator runs it (`tessera serve` on the bench
// database, TESSERA_WORKERS processes), and the floor server beside it in the same process model.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { FloorFixture } from './floor-server.ts';

const TESSERA_BIN = fileURLToPath(new URL('../packages/server/bin/tessera.mjs', import.meta.url));
const FLOOR_SERVER = fileURLToPath(new URL('./floor-server.ts', import.meta.url));

/** The floor's connections' application_name: its Postgres backends are told from Tessera's by it. */
export const FLOOR_APPLICATION = 'bench-floor';

export interface RunningServer {
  base: string;
  pid: number;
  stop(): Promise<void>;
}

export interface TesseraServer extends RunningServer {
  adminToken: string;
  admin: Record<string, string>;
  /** A JSON call for setting the scene */
  call<T>(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<T>;
}

function startChild(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  // BENCH_PROFILE=<dir>: each server writes a V8 CPU profile there when it stops (open in Chrome DevTools).
  const profile = process.env.BENCH_PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
    : [];
  const child = spawn(process.execPath, [...profile, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`did not start in time:\n${output}`)), 120_000);
    const onData = (chunk: Buffer) => {
      output += String(chunk);
      const match = ready.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk) => {
      output += String(chunk);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}:\n${output}`));
    });
  });
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
}

export async function startTessera(
  databaseUrl: string,
  options: { workers: number; dataDir: string; env?: Record<string, string> },
): Promise<TesseraServer> {
  const adminToken = `adm_${randomBytes(16).toString('hex')}`;
  const { child, match } = await startChild(
    [TESSERA_BIN, 'serve'],
    {
      DATABASE_URL: databaseUrl,
      TESSERA_ADMIN_TOKEN: adminToken,
      TESSERA_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      TESSERA_DATA_DIR: options.dataDir,
      TESSERA_WORKERS: String(options.workers),
      TESSERA_RATE_LIMIT_PER_MINUTE: '1000000000',
      LOG_LEVEL: 'silent',
      PORT: '0',
      ...options.env,
    },
    /Admin API\s+(http:\/\/\S+)\/admin[\s\S]*\n {2}Database/,
  );
  const base = match[1] as string;
  const admin = { authorization: `Bearer ${adminToken}` };
  const call = async <T>(method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  return { base, pid: child.pid ?? 0, adminToken, admin, call, stop: stopper(child) };
}

export async function startFloor(
  databaseUrl: string,
  options: { workers: number; fixture: FloorFixture },
): Promise<RunningServer> {
  const { child, match } = await startChild(
    ['--import', 'tsx', FLOOR_SERVER],
    {
      DATABASE_URL: databaseUrl,
      TESSERA_WORKERS: String(options.workers),
      BENCH_FLOOR_FIXTURE: JSON.stringify(options.fixture),
      PORT: '0',
    },
    /floor listening on (http:\/\/\S+)/,
  );
  return { base: match[1] as string, pid: child.pid ?? 0, stop: stopper(child) };
}
