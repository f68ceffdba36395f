// The `tessera` command line as a developer meets it, each command a real process: help, version and
// usage mistakes (exit codes, never a stack); `events` and `redeliver` against a running Tessera; and
// `listen --forward-to`, which must post each new event to a local URL exactly as its webhook is signed;
// `risk`: a rule written, a list imported from a CSV file, a held payment approved; `sanctions`: a list file
// imported (whose list read from the file), once; `compliance`: a business profile written from a file,
// submitted, decided, a tenant invited, a case exported.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decryptIpn, verifyCryptoWebhook } from '@tessera/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anOrder as aCryptoOrder, aStore, pay } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments } from '../harness/payments-builders.ts';
import { runCli } from '../harness/server-process.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

const BIN = fileURLToPath(new URL('../../bin/tessera.mjs', import.meta.url));

let h: Harness;
let local: WebhookReceiver;
let env: Record<string, string>;

beforeAll(async () => {
  h = await Harness.start();
  local = await WebhookReceiver.start();
  env = {
    TESSERA_ADMIN_TOKEN: h.adminToken,
    TESSERA_PUBLIC_URL: h.baseUrl,
    TESSERA_DATA_DIR: '/nonexistent',
  };
});
afterAll(async () => {
  await h.close();
  await local.close();
});

describe('help, version and mistakes', () => {
  it('--help lists the commands and exit codes; --version prints the version; both exit 0', async () => {
    const help = await runCli(['--help'], env);
    expect(help.code).toBe(0);
    for (const command of [
      'serve',
      'migrate',
      'backup',
      'restore',
      'admin',
      'events',
      'redeliver',
      'listen',
      'risk',
      'sanctions',
      'compliance',
    ]) {
      expect(help.stdout).toMatch(new RegExp(`\\n  ${command}\\b`));
    }
    expect(help.stdout).toContain('Exit codes');
    const bare = await runCli([], env);
    expect(bare.code).toBe(0);
    expect(bare.stdout).toContain('Usage: tessera');
    const version = await runCli(['--version'], env);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const adminHelp = await runCli(['admin', 'rotate-site-key', '--help'], env);
    expect(adminHelp.code).toBe(0);
    expect(adminHelp.stdout).toContain('--overlap-seconds');
  });

  it('an unknown command, an unknown option or a missing value exits 2 with a pointer to the help, never a stack', async () => {
    for (const args of [
      ['nope'],
      ['events', '--bogus'],
      ['admin', 'create-partner'],
      ['redeliver'],
      ['events', '--limit', 'x'],
    ]) {
      const run = await runCli(args, env);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toContain('tessera --help');
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('a server that does not answer is one line with what to do, exit 1', async () => {
    const run = await runCli(['events', '--server', 'http://127.0.0.1:9'], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/cannot reach Tessera at http:\/\/127\.0\.0\.1:9 .*is it running\?/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('events and redeliver', () => {
  it('lists events (table or JSON) and redelivers one', async () => {
    const store = await aStore(h, { webhookUrl: local.url('/direct') });
    const order = await aCryptoOrder(h, store);
    await pay(h, order.id);
    const listed = await runCli(['events', '--api', 'crypto', '--tenant', store.id, '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    const events = JSON.parse(listed.stdout) as { eventId: string; type: string }[];
    expect(events.map((e) => e.type)).toContain('ORDER.PAYMENT.DETECTED');
    const table = await runCli(['events', '--api', 'crypto', '--tenant', store.id], env);
    expect(table.stdout).toContain('ORDER.PAYMENT.DETECTED');
    const again = await runCli(['redeliver', events[0]?.eventId ?? ''], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/redelivering evt_/);
    expect((await runCli(['redeliver', 'evt_nope'], env)).code).toBe(1);
    // The request a listener forwards: signed as the webhook; an unknown event is not found.
    const request = await h.admin<{ headers: Record<string, string>; body: string }>(
      'GET',
      `/events/${events[0]?.eventId}/webhook-request`,
    );
    expect(request.body.headers['tessera-event-id']).toBe(events[0]?.eventId);
    expect(verifyCryptoWebhook(request.body.body, store.webhookSecret)).toMatchObject({
      event_type: expect.any(String),
    });
    expect((await h.admin('GET', '/events/evt_nope/webhook-request')).status).toBe(404);
  });
});

describe('listen --forward-to', () => {
  let listener: ChildProcess;
  let output = '';

  beforeAll(async () => {
    listener = spawn(
      process.execPath,
      [BIN, 'listen', '--forward-to', local.url('/forwarded'), '--json', '--interval', '100'],
      {
        env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    listener.stdout?.on('data', (c) => {
      output += String(c);
    });
    listener.stderr?.on('data', (c) => {
      output += String(c);
    });
    // Ready once it has taken the existing events as history (it says so on stderr).
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`listen did not start: ${output}`)), 15_000);
      listener.stderr?.on('data', () => {
        if (output.includes('Ready.')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  });
  afterAll(() => {
    listener?.kill('SIGKILL');
  });

  it('forwards each new event signed exactly as its webhook (crypto body signature, IPN encryption) and logs the answer; Ctrl-C exits 0', async () => {
    // A crypto store without a webhook URL: listen is how the developer sees its events.
    const store = await aStore(h);
    const order = await aCryptoOrder(h, store);
    await pay(h, order.id);
    const [crypto] = await local.waitFor(
      1,
      (r) => r.path === '/forwarded' && r.headers['tessera-order-id'] === order.id,
    );
    const hook = verifyCryptoWebhook<{ event_type: string }>(crypto?.body ?? '', store.webhookSecret);
    expect(hook.event_type).toBe('ORDER.PAYMENT.DETECTED');

    const m = await aMerchant(h);
    const customerId = await aCustomer(h, m);
    await payments(h, m, 'POST', '/order', anOrder(customerId));
    const [ipn] = await local.waitFor(
      1,
      (r) => r.path === '/forwarded' && r.body.startsWith('opensslResult='),
    );
    const decrypted = decryptIpn<{ customerId: number }>(
      new URLSearchParams(ipn?.body).get('opensslResult') ?? '',
      m.sites[0]?.ipnSecret ?? '',
    );
    expect(decrypted.customerId).toBe(customerId);

    await expect.poll(() => output).toContain('"type":"ORDER.PAYMENT.DETECTED"');
    const line = JSON.parse(output.split('\n').find((l) => l.includes('ORDER.PAYMENT.DETECTED')) ?? '{}') as {
      status: number;
      api: string;
    };
    expect(line).toMatchObject({ status: 200, api: 'crypto' });
    // Nothing that existed before it started was forwarded.
    expect(
      local.received
        .filter((r) => r.path === '/forwarded')
        .every(
          (r) =>
            r.headers['x-tessera-delivery-id']?.toString().startsWith('listen-') ||
            r.headers['x-service-delivery-id']?.toString().startsWith('listen-'),
        ),
    ).toBe(true);

    // `tessera trigger` makes an event; listen forwards it.
    const list = await runCli(['trigger'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/crypto\s+ORDER\.PAYMENT\.CANCELLED/);
    const triggered = await runCli(
      ['trigger', 'ORDER.PAYMENT.CANCELLED', '--tenant', store.id, '--json'],
      env,
    );
    expect(triggered.code, triggered.stderr).toBe(0);
    const made = JSON.parse(triggered.stdout) as { objects: { orderId: string } };
    await local.waitFor(
      1,
      (r) => r.path === '/forwarded' && r.headers['tessera-order-id'] === made.objects.orderId,
    );
    const unknown = await runCli(['trigger', 'NOPE'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no trigger for NOPE/);

    const exited = new Promise<number | null>((resolve) => listener.once('exit', resolve));
    listener.kill('SIGINT');
    expect(await exited).toBe(0);
  });
});

describe('risk', () => {
  it('writes a rule, imports a list from CSV, and approves a held payment', async () => {
    const m = await aMerchant(h);
    const json = async (args: string[]) => {
      const answer = await runCli(['risk', ...args], env);
      expect(answer.code, answer.stderr).toBe(0);
      return JSON.parse(answer.stdout);
    };
    const added = await json([
      'add-rule',
      '--name',
      'hold large',
      '--point',
      'payments.charge',
      '--tenant',
      `merchant:${m.id}`,
      '--expression',
      'amount >= 50000',
      '--action',
      'review',
    ]);
    expect(added).toMatchObject({ name: 'hold large', decisionPoint: 'payments.charge', action: 'review' });
    const mistaken = await runCli(
      [
        'risk',
        'add-rule',
        '--name',
        'x',
        '--point',
        'payments.charge',
        '--expression',
        'amount >',
        '--action',
        'block',
      ],
      env,
    );
    expect(mistaken.code).not.toBe(0);
    expect(mistaken.stderr).toMatch(/answered 400/);
    expect((await json(['rules', '--tenant', `merchant:${m.id}`])).data).toHaveLength(1);

    const list = await h.admin<{ id: string }>('POST', '/risk/lists', {
      json: { name: 'blocked_ips', kind: 'ip', scope: { kind: 'merchant', id: String(m.id) } },
    });
    const dir = await mkdtemp(join(tmpdir(), 'tessera-risk-cli-'));
    const file = join(dir, 'ips.csv');
    await writeFile(file, 'value,note\n203.0.113.7,seen testing cards\n"198.51.100.0/24",a range\n\n');
    expect(await json(['import-list', list.body.id, file])).toEqual({
      listId: list.body.id,
      read: 2,
      added: 2,
    });
    const items = await h.admin<{ data: { value: string }[] }>('GET', `/risk/lists/${list.body.id}/items`);
    expect(items.body.data.map((i) => i.value)).toEqual(['198.51.100.0/24', '203.0.113.7']);

    const customer = await aCustomer(h, m);
    const held = await payments(h, m, 'POST', '/order', anOrder(customer, { amount: '600.00' }));
    expect(held.status).toBe(201);
    const [review] = (await json(['reviews', '--tenant', `merchant:${m.id}`])).data;
    expect(review).toMatchObject({ decisionPoint: 'payments.charge', status: 'pending' });
    expect(await json(['approve', review.id])).toMatchObject({ id: review.id, status: 'approved' });
  });
});

describe('sanctions', () => {
  it('imports a list file, whose list read from the file, once; and refuses a file that is no list', async () => {
    const fixture = fileURLToPath(new URL('../compliance/fixtures/ofac-sdn.xml', import.meta.url));
    const first = await runCli(['sanctions', 'import', fixture], env);
    expect(first.code, first.stderr).toBe(0);
    const imported = JSON.parse(first.stdout) as { id: string; source: string; entries: number };
    expect(imported).toMatchObject({ source: 'ofac', entries: 160 });
    const again = await runCli(['sanctions', 'import', '--source', 'ofac', fixture], env);
    expect(JSON.parse(again.stdout).id).toBe(imported.id);
    const listed = await runCli(['sanctions', 'imports'], env);
    expect(JSON.parse(listed.stdout).data[0]).toMatchObject({ id: imported.id, importedBy: 'admin token' });

    const dir = await mkdtemp(join(tmpdir(), 'tessera-sanctions-cli-'));
    const notAList = join(dir, 'list.txt');
    await writeFile(notAList, 'name,country\nIvan,RU\n');
    const refused = await runCli(['sanctions', 'import', notAList], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/not a sanctions list/);
    // OFAC's CSV files of the same list, sent together: a new import, not one entry changed
    const csv = ['sdn.csv', 'alt.csv', 'add.csv', 'sdn_comments.csv'].map((name) =>
      fileURLToPath(new URL(`../compliance/fixtures/ofac-csv/${name}`, import.meta.url)),
    );
    const fromCsv = await runCli(['sanctions', 'import', ...csv], env);
    expect(fromCsv.code, fromCsv.stderr).toBe(0);
    expect(JSON.parse(fromCsv.stdout)).toMatchObject({ source: 'ofac', entries: 160, added: 0, changed: 0 });
    const strangeCsv = join(dir, 'list.csv');
    await writeFile(strangeCsv, 'name,country\nIvan,RU\n');
    const notOfac = await runCli(['sanctions', 'import', strangeCsv], env);
    expect(notOfac.code).toBe(2);
    expect(notOfac.stderr).toMatch(/OFAC’s CSV files are sdn.csv/);
    const wrongSource = await runCli(['sanctions', 'import', '--source', 'un', fixture], env);
    expect(wrongSource.code).toBe(1);
    expect(wrongSource.stderr).toMatch(/answered 400/);
  });
});

describe('compliance', () => {
  it('writes a merchant’s profile from a file, submits and decides it, invites, and exports a case', async () => {
    const m = await aMerchant(h);
    const json = async (args: string[]) => {
      const answer = await runCli(['compliance', ...args], env);
      expect(answer.code, answer.stderr).toBe(0);
      return JSON.parse(answer.stdout);
    };
    const dir = await mkdtemp(join(tmpdir(), 'tessera-compliance-cli-'));
    const file = join(dir, 'profile.json');
    await writeFile(
      file,
      JSON.stringify({
        legalName: 'Harbour Lights Ltd',
        registrationNumber: '07654321',
        country: 'GB',
        address: { line1: '1 Quay Street', city: 'Bristol', postalCode: 'BS1 4DJ', country: 'GB' },
        mcc: '5942',
        owners: [
          // A national of a high-risk country (TESSERA_AML_HIGH_RISK_COUNTRIES): a case to export below
          {
            name: 'Ada Pike',
            dateOfBirth: '1980-02-02',
            nationality: 'IR',
            countryOfResidence: 'GB',
            ownershipPercent: 100,
          },
        ],
        directors: [{ name: 'Ada Pike', dateOfBirth: '1980-02-02', nationality: 'GB' }],
      }),
    );
    const tenant = ['--tenant', `merchant:${m.id}`];
    expect(await json(['put-profile', ...tenant, file])).toMatchObject({ status: 'draft' });
    expect(await json(['submit', ...tenant])).toMatchObject({ status: 'submitted' });
    expect(
      await json(['decide', ...tenant, '--decision', 'approved', '--reason', 'registry extract checked']),
    ).toMatchObject({ status: 'approved', decisionReason: 'registry extract checked' });
    expect(await json(['profile', ...tenant])).toMatchObject({ status: 'approved' });
    expect(await json(['invite', ...tenant, '--email', 'ada@harbour.example'])).toMatchObject({
      tenant: `merchant:${m.id}`,
    });
    // Mistakes: a tenant that is no merchant or store (2), a file that is not JSON (2), the API's 400 (1)
    expect((await runCli(['compliance', 'profile', '--tenant', 'partner:1'], env)).code).toBe(2);
    await writeFile(join(dir, 'bad.json'), 'legalName: nope');
    expect((await runCli(['compliance', 'put-profile', ...tenant, join(dir, 'bad.json')], env)).code).toBe(2);
    const refused = await runCli(
      ['compliance', 'decide', ...tenant, '--decision', 'maybe', '--reason', 'x'],
      env,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/answered 400/);

    // The owner's case, and its export: JSON, CSV, a format there is not (2), and goAML refused until the
    // reporting entity is set (the server's 409: 1)
    const cases = (await json(['cases', '--status', 'open'])) as { data: { id: string; subject: string }[] };
    const caseId = cases.data.find((c) => c.subject === `merchant:${m.id}`)?.id as string;
    expect(caseId).toBeDefined();
    expect(await json(['export', caseId])).toMatchObject({ case: { id: caseId } });
    const csv = await runCli(['compliance', 'export', caseId, '--format', 'csv'], env);
    expect(csv.stdout.split('\r\n')[0]).toBe('at,kind,object,detail');
    expect((await runCli(['compliance', 'export', caseId, '--format', 'pdf'], env)).code).toBe(2);
    const goaml = await runCli(
      ['compliance', 'export', caseId, '--format', 'goaml', '--indicators', 'X'],
      env,
    );
    expect(goaml.code).toBe(1);
    expect(goaml.stderr).toMatch(/TESSERA_GOAML_RENTITY_ID/);
  });
});
