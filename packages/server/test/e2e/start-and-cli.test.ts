// The README's promises, on the real binary: `serve` starts on the embedded Postgres and prints what an
// operator needs; `npx tessera admin …` works beside it; SIGTERM stops everything cleanly; a second
// start reuses the data; production refuses to start without its settings.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/tessera.mjs', import.meta.url));
let dataDir: string;

beforeAll(async () => {
  const root = await mkdtemp(join(tmpdir(), 'tessera-e2e-'));
  await chmod(root, 0o755);
  dataDir = join(root, 'data');
});
afterAll(async () => {
  await rm(join(dataDir, '..'), { recursive: true, force: true });
});

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { DATABASE_URL: _ignored, ...rest } = process.env;
  return { ...rest, TESSERA_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', ...extra };
}

interface Started {
  child: ChildProcess;
  baseUrl: string;
  adminToken: string;
  output: () => string;
}

async function startServer(): Promise<Started> {
  const child = spawn(process.execPath, [BIN, 'serve'], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += String(chunk);
  });
  child.stderr?.on('data', (chunk) => {
    output += String(chunk);
  });
  const banner = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner in time:\n${output}`)), 90_000);
    const check = () => {
      if (/Database\s+embedded/.test(output)) {
        clearTimeout(timer);
        resolve(output);
      }
    };
    child.stdout?.on('data', check);
    child.on('exit', (code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
  const baseUrl = /Admin API\s+(http:\/\/\S+)\/admin/.exec(banner)?.[1] ?? '';
  const adminToken = /Admin token\s+(\S+)/.exec(banner)?.[1] ?? '';
  return { child, baseUrl, adminToken, output: () => output };
}

function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
  return new Promise((resolve) => {
    child.on('exit', (code) => resolve(code));
    child.kill(signal);
  });
}

function run(
  args: string[],
  extraEnv: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: env(extraEnv),
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

describe('tessera serve', () => {
  it('starts, serves, works with the admin CLI, stops on SIGTERM and restarts on the same data', async () => {
    const first = await startServer();
    expect(first.output()).toMatch(/Card issuing API\s+http:\/\/127\.0\.0\.1:\d+\/issuing\/v1/);
    expect(first.output()).toMatch(/Payments API\s+http:\/\/127\.0\.0\.1:\d+\/payments/);
    expect(first.output()).toMatch(/Crypto merchant API\s+http:\/\/127\.0\.0\.1:\d+\/crypto\/api/);
    expect(first.output()).toMatch(/API docs \(OpenAPI\)\s+http:\/\/127\.0\.0\.1:\d+\/docs/);
    expect(first.adminToken).toMatch(/^adm_/);
    expect(await (await fetch(`${first.baseUrl}/readyz`)).json()).toEqual({ status: 'ready' });

    const cli = await run([
      'admin',
      'create-partner',
      '--name',
      'CLI Partner',
      '--webhook-url',
      'http://127.0.0.1:9/hooks',
    ]);
    expect(cli.code).toBe(0);
    const created = JSON.parse(cli.stdout) as {
      id: string;
      apiKey: string;
      webhookSigningKey: string;
      partnerId: string;
    };
    expect(created).toMatchObject({ name: 'CLI Partner', webhookUrl: 'http://127.0.0.1:9/hooks' });
    expect(created.apiKey).toMatch(/^ptk_/);
    const merchant = await run([
      'admin',
      'create-merchant',
      '--name',
      'CLI Shop',
      '--site',
      'web=https://shop.example/ipn',
    ]);
    expect(JSON.parse(merchant.stdout).sites[0]).toMatchObject({
      name: 'web',
      ipnUrl: 'https://shop.example/ipn',
    });
    const store = await run(['admin', 'create-store', '--name', 'CLI Store', '--currency', 'usdc:eth']);
    expect(JSON.parse(store.stdout).currencies).toEqual([{ currency: 'USDC', network: 'ETH' }]);

    const listed = await fetch(`${first.baseUrl}/admin/partners`, {
      headers: { authorization: `Bearer ${first.adminToken}` },
    });
    expect(((await listed.json()) as { data: { id: string }[] }).data.map((p) => p.id)).toContain(created.id);

    expect(await stop(first.child, 'SIGTERM')).toBe(0);
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);

    const second = await startServer();
    expect(second.adminToken).toBe(first.adminToken);
    const again = await fetch(`${second.baseUrl}/admin/partners/${created.id}`, {
      headers: { authorization: `Bearer ${second.adminToken}` },
    });
    expect(again.status).toBe(200);
    expect(await stop(second.child, 'SIGINT')).toBe(0);
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  }, 180_000);

  it('production refuses to start without its settings, naming each', async () => {
    const result = await run(['serve'], { TESSERA_MODE: 'production' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/TESSERA_ADMIN_TOKEN is required in production/);
    expect(result.stderr).toMatch(/TESSERA_ENCRYPTION_KEY is required in production/);
    expect(result.stderr).toMatch(/DATABASE_URL is required in production/);
  });

  it('the admin CLI explains its usage and refuses bad input', async () => {
    const usage = await run(['admin', 'create-partner']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/usage:/);
    const unknown = await run(['admin', 'create-partner', '--name', 'x', '--bogus']);
    expect(unknown.code).toBe(2);
    const badUrl = await run(['admin', 'create-partner', '--name', 'x', '--webhook-url', 'ftp://x']);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toMatch(/must use http or https/);
    expect((await run(['frobnicate'])).code).toBe(2);
  });
});
