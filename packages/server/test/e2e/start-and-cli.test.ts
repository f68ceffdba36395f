// The README's promises, on the real binary: `serve` starts on the embedded Postgres and prints what an
// operator needs; `npx tessera admin …` works beside it; SIGTERM stops everything cleanly; a second
// start reuses the data; production refuses to start without its settings.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aDataDir, runCli, ServerProcess } from '../harness/server-process.ts';

let data: Awaited<ReturnType<typeof aDataDir>>;
let dataDir: string;

beforeAll(async () => {
  data = await aDataDir();
  dataDir = data.dir;
});
afterAll(async () => {
  await data.remove();
});

const startServer = () => ServerProcess.start({ TESSERA_DATA_DIR: dataDir });
const run = (args: string[], env: Record<string, string> = {}) =>
  runCli(args, { TESSERA_DATA_DIR: dataDir, ...env });

describe('tessera serve', () => {
  it('starts, serves, works with the admin CLI, stops on SIGTERM and restarts on the same data', async () => {
    const first = await startServer();
    expect(first.output()).toMatch(/Card issuing API\s+http:\/\/127\.0\.0\.1:\d+\/issuing\/v1/);
    expect(first.output()).toMatch(/Payments API\s+http:\/\/127\.0\.0\.1:\d+\/payments/);
    expect(first.output()).toMatch(/Crypto merchant API\s+http:\/\/127\.0\.0\.1:\d+\/crypto\/api/);
    expect(first.output()).toMatch(/API docs \(OpenAPI\)\s+http:\/\/127\.0\.0\.1:\d+\/docs/);
    expect(first.adminToken).toMatch(/^adm_/);
    // Piped output is a log: the generated token is not in it.
    expect(first.output()).not.toContain(first.adminToken);
    expect(first.output()).toMatch(/Admin token\s+\(in .*secrets\.json/);
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
    const made = JSON.parse(merchant.stdout) as { id: number; sites: { id: number; secretKey: string }[] };
    expect(made.sites[0]).toMatchObject({
      name: 'web',
      ipnUrl: 'https://shop.example/ipn',
      secretKey: expect.stringMatching(/^sk_test_[A-Za-z0-9]{32}$/),
    });
    // A site's secret key is rotated from the shell: a new one shown, the old one valid for the overlap.
    const rotated = await run([
      'admin',
      'rotate-site-key',
      '--merchant',
      String(made.id),
      '--site',
      String(made.sites[0]?.id),
      '--overlap-seconds',
      '60',
    ]);
    const shown = JSON.parse(rotated.stdout) as { secretKey: string; previousKeyValidUntil: string };
    expect(shown.secretKey).toMatch(/^sk_test_/);
    expect(shown.secretKey).not.toBe(made.sites[0]?.secretKey);
    expect(shown.previousKeyValidUntil).toEqual(expect.any(String));
    for (const key of [shown.secretKey, made.sites[0]?.secretKey]) {
      const answer = await fetch(`${first.baseUrl}/payments/order`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(answer.status).toBe(200);
    }
    const store = await run(['admin', 'create-store', '--name', 'CLI Store', '--currency', 'usdc:eth']);
    expect(JSON.parse(store.stdout).currencies).toEqual([{ currency: 'USDC', network: 'ETH' }]);

    // A console member from the shell: a generated password printed once, which signs in.
    const person = await run([
      'admin',
      'create-console-user',
      '--email',
      'ops@shop.example',
      '--tenant',
      `merchant:${made.id}`,
      '--role',
      'finance',
    ]);
    const user = JSON.parse(person.stdout) as { role: string; tenant: unknown; password: string };
    expect(user).toMatchObject({ role: 'finance', tenant: { kind: 'merchant', id: String(made.id) } });
    const signInPage = await fetch(`${first.baseUrl}/console/sign-in`);
    const signInCookie = signInPage.headers.getSetCookie()[0]?.split(';')[0] ?? '';
    const csrf = /name="csrf" value="([^"]+)"/.exec(await signInPage.text())?.[1] ?? '';
    const signedIn = await fetch(`${first.baseUrl}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: signInCookie,
        origin: first.baseUrl,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ csrf, email: 'ops@shop.example', password: user.password }),
    });
    expect(signedIn.headers.get('location')).toBe('/console');
    expect(
      (await run(['admin', 'create-console-user', '--email', 'x@shop.example', '--tenant', 'bank:1'])).code,
    ).toBe(2);
    expect(
      (await run(['admin', 'create-console-user', '--email', 'x@shop.example', '--role', 'owner'])).code,
    ).toBe(2);

    const listed = await fetch(`${first.baseUrl}/admin/partners`, {
      headers: { authorization: `Bearer ${first.adminToken}` },
    });
    expect(((await listed.json()) as { data: { id: string }[] }).data.map((p) => p.id)).toContain(created.id);

    expect((await first.stop('SIGTERM')).code).toBe(0);
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);

    const second = await startServer();
    expect(second.adminToken).toBe(first.adminToken);
    const again = await fetch(`${second.baseUrl}/admin/partners/${created.id}`, {
      headers: { authorization: `Bearer ${second.adminToken}` },
    });
    expect(again.status).toBe(200);
    // A second serve beside a live one refuses, naming the other process and the fix; no stack trace.
    const beside = await run(['serve']);
    expect(beside.code).toBe(1);
    expect(beside.stderr).toMatch(new RegExp(`another Tessera process \\(pid ${second.pid}\\)`));
    expect(beside.stderr).toMatch(/Fix: /);
    expect(beside.stderr).not.toMatch(/\n\s+at /);
    expect((await second.stop('SIGINT')).code).toBe(0);
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);

    // A lock file left by a crash, naming a live process that is not Postgres (pid reuse), is cleared.
    await writeFile(join(dataDir, 'postgres', 'postmaster.pid'), `${process.pid}\n${dataDir}\n`);
    const third = await startServer();
    expect((await third.request('GET', '/readyz')).status).toBe(200);
    expect((await third.stop('SIGTERM')).code).toBe(0);
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
    expect(usage.stderr).toMatch(/required option '--name <name>'/);
    expect(usage.stderr).toContain('tessera --help');
    const unknown = await run(['admin', 'create-partner', '--name', 'x', '--bogus']);
    expect(unknown.code).toBe(2);
    const badUrl = await run(['admin', 'create-partner', '--name', 'x', '--webhook-url', 'ftp://x']);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toMatch(/must use http or https/);
    expect((await run(['frobnicate'])).code).toBe(2);
  });
});
