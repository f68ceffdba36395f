// The audit trail (docs/operations.md, Audit trail): an admin API write, a refused one, console sign-ins
// (right and wrong password) and a console action each leave one record, with who, from where, what, on
// which object, the outcome and the request id, and never a secret; the records chain by hash, so
// `tessera audit verify` passes on the real trail and names the first record of one edited or deleted
// behind the trigger's back; the table refuses updates; the operator reads it by filter, by page and as CSV.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAudit } from '../../src/platform/audit/audit-trail.ts';
import { ConsoleClient } from '../harness/console-client.ts';
import { Harness } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import { runCli } from '../harness/server-process.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(() => h.close());

interface Record {
  seq: number;
  actorKind: string;
  actor: string;
  source: string | null;
  action: string;
  objectId: string | null;
  tenant: { kind: string; id: string } | null;
  detail: { [key: string]: unknown };
  outcome: string;
  status: number;
  requestId: string;
  hash: string;
}

const trail = async (query = '') =>
  (await h.admin<{ data: Record[]; nextBefore: number | null }>('GET', `/audit-events${query}`)).body;

describe('the audit trail', () => {
  it('records admin writes and console actions with the request, never a secret', async () => {
    const created = await h.admin<{ id: string; apiKey: string }>('POST', '/partners', {
      json: { name: 'Audited' },
    });
    const patched = await h.admin('PATCH', `/partners/${created.body.id}`, {
      json: { webhookUrl: 'ftp://nope.example' },
    });
    expect(patched.status).toBe(400);
    const [refused, made] = (await trail(`?action=${encodeURIComponent('partner.updated')}`)).data
      .concat((await trail(`?action=${encodeURIComponent('partner.created')}`)).data)
      .slice(0, 2);
    expect(made).toMatchObject({
      action: 'partner.created',
      objectId: created.body.id,
      actorKind: 'admin_token',
      actor: 'admin token',
      source: '127.0.0.1',
      outcome: 'succeeded',
      status: 201,
      detail: { name: 'Audited' },
    });
    expect(refused).toMatchObject({ objectId: created.body.id, outcome: 'refused', status: 400 });
    expect(refused?.requestId).toBe(patched.headers.get('x-request-id'));

    const email = 'auditor@console.example';
    const password = 'correct horse battery staple';
    await h.admin('POST', '/console-users', { json: { email, password, role: 'operator' } });
    const browser = new ConsoleClient(h.baseUrl);
    expect((await browser.signIn({ email, password: 'wrong password here' })).status).toBe(401);
    expect((await browser.signIn({ email, password })).status).toBe(303);
    const signIns = (await trail(`?action=${encodeURIComponent('session.signed_in')}&actor=${email}`)).data;
    expect(signIns.map((r) => r.outcome)).toEqual(['succeeded', 'refused']);
    const csrf = await browser.csrf('/console/account');
    expect(
      (await browser.post('/console/account/totp', { csrf, secret: 'JBSWY3DPEHPK3PXP', code: '000000' }))
        .status,
    ).toBe(400);
    const [action] = (await trail(`?actor=${email}&action=${encodeURIComponent('totp.enabled')}`)).data;
    expect(action).toMatchObject({ actorKind: 'console_user', outcome: 'refused', status: 400 });

    // Nothing secret reaches a record: passwords, keys, codes, the forms' tokens.
    const everything = JSON.stringify((await trail('?limit=500')).data);
    for (const secret of [
      password,
      'wrong password here',
      created.body.apiKey,
      csrf,
      'JBSWY3DPEHPK3PXP',
      h.adminToken,
    ])
      expect(everything).not.toContain(secret);
  });

  it('names the object acted on and a stable action: a key made and revoked in the console, and by the admin API', async () => {
    const merchant = await h.admin<{ id: number; apiKeyId: string }>('POST', '/merchants', {
      json: { name: 'Keyed', sites: [{ name: 'Shop' }] },
    });
    const operator = await ConsoleClient.operator(h);
    const base = `/console/developers/keys/merchants/${merchant.body.id}`;
    const made = await operator.post(`${base}/new`, { csrf: await operator.csrf(`${base}/new`) });
    expect(made.status).toBe(200);
    const keyId = /Key id: ([0-9a-f-]{36})/.exec(made.text)?.[1] as string;
    expect(keyId).toBeDefined();
    const revoked = await operator.post(`${base}/${keyId}/revoke`, {
      csrf: await operator.csrf(`${base}/${keyId}/revoke`),
    });
    expect(revoked.status).toBe(303);
    const records = (await trail(`?objectId=${keyId}`)).data;
    expect(records.map((r) => [r.action, r.outcome])).toEqual([
      ['api_key.revoked', 'succeeded'],
      ['api_key.created', 'succeeded'],
    ]);
    expect(records[0]?.detail.route).toBe(
      'POST /console/developers/keys/merchants/:merchantId/:keyId/revoke',
    );
    // The admin API's revocation of the key made with the merchant: the same action, its own object.
    const byAdmin = await h.admin(
      'POST',
      `/merchants/${merchant.body.id}/api-keys/${merchant.body.apiKeyId}/revoke`,
    );
    expect(byAdmin.status).toBeLessThan(300);
    expect((await trail(`?objectId=${merchant.body.apiKeyId}`)).data.map((r) => r.action)).toEqual([
      'api_key.revoked',
    ]);
    expect((await trail(`?objectId=${merchant.body.id}`)).data.map((r) => r.action)).toContain(
      'merchant.created',
    );
  });

  it('pages newest first and exports CSV', async () => {
    const first = await trail('?limit=2');
    expect(first.data).toHaveLength(2);
    expect(first.data[0]?.seq).toBeGreaterThan(first.data[1]?.seq ?? 0);
    const next = await trail(`?limit=2&before=${first.nextBefore}`);
    expect(next.data[0]?.seq).toBe((first.data[1]?.seq ?? 0) - 1);
    const csv = await h.admin('GET', '/audit-events?format=csv');
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.text.split('\r\n')[0]).toBe(
      'seq,at,actor_kind,actor,source,action,object_id,tenant,outcome,status,request_id,detail,hash',
    );
    expect((await h.admin('GET', '/audit-events?tenant=bank:1')).status).toBe(400);
  });

  it('records `tessera admin` commands and card secrets revealed, each with its action', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-audit-cli-'));
    const env = { DATABASE_URL: h.databaseUrl, TESSERA_ADMIN_TOKEN: h.adminToken, TESSERA_DATA_DIR: dir };
    const made = await runCli(['admin', 'create-partner', '--name', 'From the shell'], env);
    expect(made.code, made.stderr).toBe(0);
    const partnerId = (JSON.parse(made.stdout) as { id: string }).id;
    const [record] = (await trail(`?objectId=${partnerId}`)).data;
    expect(record).toMatchObject({
      actorKind: 'cli',
      source: 'shell',
      action: 'partner.created',
      objectId: partnerId,
      detail: { name: 'From the shell', command: 'tessera admin create-partner' },
      outcome: 'succeeded',
    });
    expect(record?.actor).toMatch(/^.+@.+$/);
    const user = await runCli(
      [
        'admin',
        'create-console-user',
        '--email',
        'shell@audit.example',
        '--password',
        'a shell password 123',
        '--role',
        'viewer',
        '--tenant',
        `partner:${partnerId}`,
      ],
      env,
    );
    expect(user.code, user.stderr).toBe(0);
    const [userRecord] = (await trail(`?action=${encodeURIComponent('console_user.created')}`)).data;
    expect(userRecord).toMatchObject({ tenant: { kind: 'partner', id: partnerId } });
    expect(JSON.stringify(userRecord)).not.toContain('a shell password 123');
    // A refused command changes nothing and records nothing.
    const before = (await trail()).data[0]?.seq;
    const refused = await runCli(
      ['admin', 'set-pricing', '--tenant', 'site:999999', '--percent-bps', '1'],
      env,
    );
    expect(refused.code).not.toBe(0);
    expect((await trail()).data[0]?.seq).toBe(before);

    const partner = await h.admin<{ id: string; apiKey: string }>('POST', '/partners', {
      json: { name: 'Card secrets' },
    });
    const holder = await aCardholder(h, partner.body.apiKey, 0n);
    const secrets = await h.request('GET', `/issuing/v1/cards/${holder.cardId}/secrets`, {
      headers: holder.auth,
    });
    expect(secrets.status).toBe(200);
    const [reveal] = (await trail(`?objectId=${holder.cardId}`)).data.filter(
      (r) => r.action === 'card_secrets.revealed',
    );
    expect(reveal).toMatchObject({
      actorKind: 'issuing_customer',
      actor: holder.customerId,
      tenant: { kind: 'partner', id: partner.body.id },
      source: '127.0.0.1',
      outcome: 'succeeded',
    });
    expect(JSON.stringify(reveal)).not.toMatch(/489537\d{10}/);
  });

  it('shows a tenant’s admin their own tenant’s records in the console, and exports them as CSV', async () => {
    const merchant = await h.admin<{ id: number }>('POST', '/merchants', {
      json: { name: 'Audit readers', sites: [{ name: 'Shop' }] },
    });
    const tenant = { kind: 'merchant', id: String(merchant.body.id) };
    const people: { [role: string]: ConsoleClient } = {};
    for (const role of ['admin', 'finance']) {
      const email = `=${role}@audit-readers.example`;
      await h.admin('POST', '/console-users', {
        json: { email, password: 'correct horse battery staple', role, tenant },
      });
      const client = new ConsoleClient(h.baseUrl);
      await client.signIn({ email, password: 'correct horse battery staple' });
      people[role] = client;
    }
    const admin = people.admin as ConsoleClient;
    const page = await admin.get('/console/audit');
    expect(page.status).toBe(200);
    expect(page.text).toContain('=finance@audit-readers.example');
    expect(page.text).toContain('session.signed_in');
    // Only their tenant's: not the operator's own records, not another tenant's.
    expect(page.text).not.toContain('partner.created');
    expect(page.text).not.toContain('From the shell');
    const csv = await admin.get('/console/audit.csv?actor=%3Dfinance%40audit-readers.example');
    expect(csv.status).toBe(200);
    const lines = csv.text.trim().split('\r\n');
    expect(lines.length).toBeGreaterThan(1);
    // A formula typed as an email stays text in a spreadsheet.
    for (const line of lines.slice(1)) expect(line.split(',')[3]).toBe("'=finance@audit-readers.example");
    // Reading the trail is the admin's, not finance's.
    expect((await (people.finance as ConsoleClient).get('/console/audit')).status).toBe(403);
    const operator = await ConsoleClient.operator(h);
    const all = await operator.get(`/console/audit?tenant=merchant:${merchant.body.id}`);
    expect(all.text).toContain('=admin@audit-readers.example');
    expect((await operator.get('/console/audit?tenant=bank:1')).status).toBe(400);
  });

  it('holds what a change was before and after: a role, a bank account (masked), pricing, a policy', async () => {
    const merchant = await h.admin<{ id: number; sites: { id: number }[] }>('POST', '/merchants', {
      json: { name: 'Before and after', sites: [{ name: 'Shop' }] },
    });
    const site = `/merchants/${merchant.body.id}/sites/${merchant.body.sites[0]?.id}`;
    await h.admin('PUT', `${site}/bank-account`, {
      json: { iban: 'DE89370400440532013000', holderName: 'Old' },
    });
    await h.admin('PUT', `${site}/bank-account`, {
      json: { iban: 'FR1420041010050500013M02606', holderName: 'New' },
    });
    const [account] = (await trail(`?action=${encodeURIComponent('bank_account.set')}`)).data;
    expect(account?.detail.changes).toEqual([
      {
        what: `bank account of site:${merchant.body.sites[0]?.id}`,
        before: { iban_masked: 'DE89**************3000', bic: null, holder_name: 'Old' },
        after: { iban_masked: 'FR14*******************2606', bic: null, holder_name: 'New' },
      },
    ]);
    expect(JSON.stringify(account)).not.toContain('20041010050500013M02606');
    await h.admin('PUT', `${site}/pricing`, { json: { percentBps: 150, fixed: { EUR: '0.25' } } });
    const [pricing] = (await trail(`?action=${encodeURIComponent('pricing.set')}`)).data;
    expect(pricing?.detail.changes).toMatchObject([
      { before: { percentBps: expect.any(Number) }, after: { percentBps: 150, fixed: { EUR: '25' } } },
    ]);
    await h.admin('PUT', `/merchants/${merchant.body.id}/approval-thresholds`, {
      json: { refund: { EUR: '10' } },
    });
    const [policy] = (await trail(`?action=${encodeURIComponent('approval_thresholds.set')}`)).data;
    expect(policy?.detail.changes).toMatchObject([
      { before: { refund: {}, bankAccountChange: false }, after: { refund: { EUR: '1000' } } },
    ]);
    const user = await h.admin<{ id: string }>('POST', '/console-users', {
      json: {
        email: 'changing@audit.example',
        role: 'viewer',
        tenant: { kind: 'merchant', id: String(merchant.body.id) },
      },
    });
    await h.admin('PUT', `/console-users/${user.body.id}/role`, { json: { role: 'finance' } });
    const [role] = (await trail(`?objectId=${user.body.id}`)).data;
    expect(role?.detail.changes).toEqual([
      { what: 'role of changing@audit.example', before: 'viewer', after: 'finance' },
    ]);
  });

  it('is append-only, and verify names the first record edited or removed behind its back', async () => {
    const { db } = h.services;
    expect((await verifyAudit(db)).ok).toBe(true);
    await expect(sql`UPDATE audit_events SET actor = 'someone else'`.execute(db)).rejects.toThrow(
      /append-only/,
    );
    const dir = await mkdtemp(join(tmpdir(), 'tessera-audit-'));
    const env = { DATABASE_URL: h.databaseUrl, TESSERA_ADMIN_TOKEN: h.adminToken, TESSERA_DATA_DIR: dir };
    const intact = await runCli(['audit', 'verify'], env);
    expect(intact.code, intact.stderr).toBe(0);
    expect(intact.stdout).toMatch(/audit trail intact: \d+ records; head: record \d+, hash [0-9a-f]{64}/);
    // From the head it printed (a trusted checkpoint): only the records after it are read.
    const [, headSeq, headHash] = /head: record (\d+), hash ([0-9a-f]{64})/.exec(intact.stdout) ?? [];
    expect(intact.stdout).toContain(`tessera audit verify --from ${headSeq} --hash ${headHash}`);
    await h.admin('POST', '/console-users', {
      json: { email: 'after-checkpoint@audit.example', role: 'viewer' },
    });
    const since = await runCli(
      ['audit', 'verify', '--from', String(headSeq), '--hash', String(headHash)],
      env,
    );
    expect(since.code, since.stderr).toBe(0);
    expect(since.stdout).toMatch(
      new RegExp(
        `audit trail intact: 1 records after record ${headSeq}; head: record ${Number(headSeq) + 1},`,
      ),
    );
    const forged = await runCli(
      ['audit', 'verify', '--from', String(headSeq), '--hash', '0'.repeat(64)],
      env,
    );
    expect(forged.code).toBe(1);
    expect(forged.stderr).toMatch(
      new RegExp(`broken at record ${headSeq}: its hash is not the checkpoint’s`),
    );
    const usage = await runCli(['audit', 'verify', '--hash', String(headHash)], env);
    expect(usage.code).not.toBe(0);
    expect(usage.stderr).toContain('--hash needs --from');

    await sql`ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only`.execute(db);
    try {
      await sql`UPDATE audit_events SET detail = '{"name":"Someone else"}' WHERE seq = 2`.execute(db);
      const edited = await runCli(['audit', 'verify'], env);
      expect(edited.code).toBe(1);
      expect(edited.stderr).toMatch(/broken at record 2: its content does not match its hash/);
      await sql`DELETE FROM audit_events WHERE seq = 2`.execute(db);
      expect(await verifyAudit(db)).toMatchObject({ ok: false, brokenAt: 3, reason: 'record 2 is missing' });
    } finally {
      await sql`ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only`.execute(db);
    }
  });
});
