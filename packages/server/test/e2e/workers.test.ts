// TESSERA_WORKERS=2 on the real binary: one primary, two HTTP workers on one port over the embedded
// Postgres. Requests are answered while a worker is killed (the primary starts another); the sandbox
// clock moved through one worker is read by the other; SIGTERM stops the workers, then Postgres.
import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aDataDir, isAlive, postmasterPid, ServerProcess } from '../harness/server-process.ts';

let data: Awaited<ReturnType<typeof aDataDir>>;
beforeAll(async () => {
  data = await aDataDir();
});
afterAll(async () => {
  await data.remove();
});

/** The node processes the primary started (its workers; the embedded Postgres is not node). */
function workersOf(primary: number): number[] {
  const out = execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(primary)], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([, comm]) => comm === 'node')
    .map(([pid]) => Number(pid));
}

/**
 * A GET on a new connection each time, so the primary spreads them over the workers. A connection the
 * primary handed to a worker just as it was killed is lost: like any client, this one times out and
 * tries again.
 */
async function freshGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await new Promise((resolve, reject) => {
        const req = request(url, { headers, agent: false, timeout: 3000 }, (res) => {
          let body = '';
          res.on('data', (chunk) => {
            body += String(chunk);
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('timeout', () => req.destroy(new Error('timed out')));
        req.on('error', reject);
        req.end();
      });
    } catch (err) {
      if (attempt === 3) throw err;
    }
  }
}

async function until<T>(check: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('TESSERA_WORKERS=2', () => {
  it('serves from two workers, replaces a killed one, shares the clock, and stops cleanly', async () => {
    const server = await ServerProcess.start({ TESSERA_DATA_DIR: data.dir, TESSERA_WORKERS: '2' });
    const workers = await until(() => {
      const found = workersOf(server.pid);
      return found.length === 2 ? found : undefined;
    });
    const merchant = await server.admin<{ apiKey: string }>('POST', '/merchants', {
      name: 'Clustered',
      sites: [{ name: 'web' }],
    });
    expect(merchant.status).toBe(201);
    const auth = { authorization: `Bearer ${merchant.body.apiKey}` };
    const list = () => freshGet(`${server.baseUrl}/payments/order`, auth);
    for (let i = 0; i < 10; i++) expect((await list()).status).toBe(200);

    // One worker dies: the other answers meanwhile, and the primary starts a replacement.
    process.kill(workers[0] as number, 'SIGKILL');
    for (let i = 0; i < 10; i++) expect((await list()).status).toBe(200);
    const replaced = await until(() => {
      const found = workersOf(server.pid);
      return found.length === 2 && !found.includes(workers[0] as number) ? found : undefined;
    });
    expect(replaced).toContain(workers[1]);

    // Each request may land on either worker: every one sees the clock as advanced.
    const admin = { authorization: `Bearer ${server.adminToken}` };
    const advanced = await server.request<{ now: string }>('POST', '/sandbox/clock/advance', {
      headers: admin,
      json: { seconds: 86_400 },
    });
    expect(advanced.status).toBe(200);
    for (let i = 0; i < 6; i++) {
      const read = JSON.parse((await freshGet(`${server.baseUrl}/sandbox/clock`, admin)).body) as {
        now: string;
      };
      expect(Date.parse(read.now)).toBeGreaterThanOrEqual(Date.parse(advanced.body.now));
    }

    const postgres = await postmasterPid(data.dir);
    const { code, ms } = await server.stop('SIGTERM');
    expect(code).toBe(0);
    expect(ms).toBeLessThan(15_000);
    for (const pid of replaced) expect(isAlive(pid)).toBe(false);
    expect(postgres && isAlive(postgres)).toBeFalsy();
  }, 120_000);
});
