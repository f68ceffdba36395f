// Tessera as a real process (`tessera serve` on the bin), for tests that signal it: SIGTERM while it
// works, kill -9 in the middle of a load, restarts on the same data, two processes on one database.

import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const BIN = fileURLToPath(new URL('../../bin/tessera.mjs', import.meta.url));

/** A data directory the embedded Postgres can use (also when the tests run as root). */
export async function aDataDir(): Promise<{ dir: string; remove(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), 'tessera-proc-'));
  await chmod(root, 0o755);
  return { dir: join(root, 'data'), remove: () => rm(root, { recursive: true, force: true }) };
}

/** The environment of a child: the test's own, without its DATABASE_URL unless given. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _ignored, ...rest } = process.env;
  return { ...rest, PORT: '0', LOG_LEVEL: 'warn', ...extra };
}

export class ServerProcess {
  private exit: Promise<number | null>;

  private constructor(
    readonly child: ChildProcess,
    readonly baseUrl: string,
    readonly adminToken: string,
    private readonly log: { text: string },
  ) {
    this.exit = new Promise((resolve) => {
      if (child.exitCode !== null) resolve(child.exitCode);
      child.once('exit', (code) => resolve(code));
    });
  }

  /** Starts `tessera serve` (the bin, or another entry point such as the compiled dist/main.js) and waits for its banner. */
  static async start(
    env: Record<string, string>,
    args: string[] = ['serve'],
    bin = BIN,
    options: { ownProcessGroup?: boolean } = {},
  ): Promise<ServerProcess> {
    const child = spawn(process.execPath, [bin, ...args], {
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, as a shell gives a command: a terminal's Ctrl-C reaches the whole group.
      detached: options.ownProcessGroup === true,
    });
    const log = { text: '' };
    child.stdout?.on('data', (chunk) => {
      log.text += String(chunk);
    });
    child.stderr?.on('data', (chunk) => {
      log.text += String(chunk);
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner in time:\n${log.text}`)), 90_000);
      const check = () => {
        if (/\n {2}Database\s+\S/.test(log.text)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on('data', check);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`exited with ${code}:\n${log.text}`));
      });
    });
    const baseUrl = /Admin API\s+(http:\/\/\S+)\/admin/.exec(log.text)?.[1] ?? '';
    // Not a terminal: a generated token is in the data directory, never in the output.
    const generated = env.TESSERA_DATA_DIR
      ? (
          JSON.parse(await readFile(join(env.TESSERA_DATA_DIR, 'secrets.json'), 'utf8')) as {
            adminToken: string;
          }
        ).adminToken
      : '';
    return new ServerProcess(child, baseUrl, env.TESSERA_ADMIN_TOKEN ?? generated, log);
  }

  output(): string {
    return this.log.text;
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** Resolves with the exit code once the process has exited. */
  exited(): Promise<number | null> {
    return this.exit;
  }

  /**
   * Sends the signal and waits for the exit; answers the code and how long the stop took. `group`: to
   * every process of its group, as a terminal's Ctrl-C does (started with ownProcessGroup).
   */
  async stop(
    signal: NodeJS.Signals = 'SIGTERM',
    options: { group?: boolean } = {},
  ): Promise<{ code: number | null; ms: number }> {
    const started = Date.now();
    if (options.group) process.kill(-this.pid, signal);
    else this.child.kill(signal);
    const code = await this.exit;
    return { code, ms: Date.now() - started };
  }

  async request<T = unknown>(
    method: string,
    path: string,
    options: { headers?: Record<string, string>; json?: unknown; form?: Record<string, string> } = {},
  ): Promise<{ status: number; body: T; text: string; headers: Headers }> {
    const headers: Record<string, string> = { ...options.headers };
    let body: string | undefined;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    } else if (options.form) {
      body = new URLSearchParams(options.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, ...(body ? { body } : {}) });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: response.status, body: parsed as T, text, headers: response.headers };
  }

  admin<T = unknown>(method: string, path: string, json?: unknown) {
    return this.request<T>(method, `/admin${path}`, {
      headers: { authorization: `Bearer ${this.adminToken}` },
      ...(json !== undefined ? { json } : {}),
    });
  }
}

/** A card the simulated network approves, as the payments API's form fields. */
export const APPROVED_CARD = {
  cardNumber: '4111111111111111',
  cardExpiryDate: `12/${(new Date().getUTCFullYear() + 3) % 100}`,
  cardCvv: '123',
  cardHolderName: 'Ada Lovelace',
  cardHolderCountry: 'RO',
};

/** A merchant with one site and one customer, made through a running server's real API. */
export async function aPaymentsMerchant(
  server: ServerProcess,
  name: string,
): Promise<{ merchantAuth: Record<string, string>; customerId: number; merchantId: number; siteId: number }> {
  const merchant = await server.admin<{ id: number; apiKey: string; sites: { id: number }[] }>(
    'POST',
    '/merchants',
    {
      name,
      sites: [{ name: 'web' }],
    },
  );
  const merchantAuth = { authorization: `Bearer ${merchant.body.apiKey}` };
  const customer = await server.request<{ data: { id: number } }>('POST', '/payments/customer', {
    headers: merchantAuth,
    form: {
      identifier: `${name}-customer`,
      email: 'a@example.com',
      firstName: 'Ada',
      lastName: 'L',
      country: 'RO',
    },
  });
  return {
    merchantAuth,
    customerId: customer.body.data.id,
    merchantId: merchant.body.id,
    siteId: merchant.body.sites[0]?.id as number,
  };
}

/**
 * A site paid out only on demand (a manual schedule, no settlement delay) with a bank account, and one
 * order of `amount` captured on it: its money is available at once.
 */
export async function aManualPayoutSite(
  server: ServerProcess,
  name: string,
  amount: string,
): Promise<{ siteId: number; auth: Record<string, string> }> {
  const { merchantAuth: auth, customerId, merchantId, siteId } = await aPaymentsMerchant(server, name);
  const site = `/merchants/${merchantId}/sites/${siteId}`;
  await server.admin('PUT', `${site}/payout-schedule`, { interval: 'manual', delayDays: 0 });
  await server.admin('PUT', `${site}/bank-account`, { iban: 'DE89370400440532013000', holderName: name });
  const order = await server.request('POST', '/payments/order', {
    headers: auth,
    form: {
      amount,
      currency: 'EUR',
      orderType: 'purchase',
      customerId: String(customerId),
      ...APPROVED_CARD,
    },
  });
  if (order.status !== 201) throw new Error(`order: ${order.status} ${order.text}`);
  return { siteId, auth };
}

/** Runs one CLI command to its end. */
export function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c) => {
      stdout += String(c);
    });
    child.stderr?.on('data', (c) => {
      stderr += String(c);
    });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The pid of the embedded postmaster running on a data directory, if any. */
/** The connection string of the embedded Postgres a server process runs on its data directory. */
export async function dataDirDatabaseUrl(dataDir: string): Promise<string> {
  const secrets = JSON.parse(await readFile(join(dataDir, 'secrets.json'), 'utf8')) as {
    postgresPassword: string;
  };
  const owner = JSON.parse(await readFile(join(dataDir, 'postgres.owner'), 'utf8')) as { port: number };
  return `postgres://tessera:${encodeURIComponent(secrets.postgresPassword)}@127.0.0.1:${owner.port}/tessera`;
}

/** A client of that database, connected. */
export async function openDataDirDatabase(dataDir: string): Promise<pg.Client> {
  const db = new pg.Client({ connectionString: await dataDirDatabaseUrl(dataDir) });
  await db.connect();
  return db;
}

export async function postmasterPid(dataDir: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
    return isAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
