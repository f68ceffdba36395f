// The console over HTTP, as a browser speaks to it (cookies, forms, Origin and Sec-Fetch-Site): sign-in
// refusals (CSRF, another site, lockout), console users through the admin API, a resubmitted refund form
// that refunds once, filters refused by name, and tenant isolation: every object page the operator can
// reach (after every sandbox trigger has run) answers 404 to a member of a tenant that owns none of them,
// and no console page answers a 5xx.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConsoleUsers,
  LOCKOUT_MINUTES,
  MAX_FAILED_SIGNINS,
  SESSION_HOURS,
} from '../../src/platform/console/console-users.ts';
import { Encryptor } from '../../src/platform/crypto/encryption.ts';
import { ConsoleClient } from '../harness/console-client.ts';
import { Harness } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import { aCustomer, aMerchant, anOrder, payments } from '../harness/payments-builders.ts';

let h: Harness;

beforeAll(async () => {
  // The crawl below reaches over a thousand pages in well under a minute: more than one client's default limit.
  h = await Harness.start({ env: { TESSERA_RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(async () => {
  await h.close();
});

const operator = () => ConsoleClient.operator(h);

async function member(kind: 'merchant' | 'store' | 'partner', id: string | number): Promise<ConsoleClient> {
  const email = `m-${randomBytes(4).toString('hex')}@console.example`;
  const password = 'correct horse battery staple';
  const created = await h.admin('POST', '/console-users', {
    json: { email, password, role: 'member', tenant: { kind, id: String(id) } },
  });
  expect(created.status).toBe(201);
  const b = new ConsoleClient(h.baseUrl);
  expect((await b.signIn({ email, password })).location).toBe('/console');
  return b;
}

describe('signing in', () => {
  it('sends a stranger to the sign-in page and refuses forms without the page’s token or from another site', async () => {
    const b = new ConsoleClient(h.baseUrl);
    expect(await b.get('/console/payments/orders')).toMatchObject({
      status: 303,
      location: '/console/sign-in?next=%2Fconsole%2Fpayments%2Forders',
    });
    const csrf = await b.csrf('/console/sign-in');
    expect((await b.post('/console/sign-in', { token: h.adminToken })).status).toBe(403);
    expect((await b.post('/console/sign-in', { csrf: 'forged', token: h.adminToken })).status).toBe(403);
    expect(
      (await b.post('/console/sign-in', { csrf, token: h.adminToken }, { 'sec-fetch-site': 'cross-site' }))
        .status,
    ).toBe(403);
    expect((await b.post('/console/sign-in', { csrf, token: 'not-the-token' })).status).toBe(401);
    const fresh = await b.csrf('/console/sign-in');
    // After signing in, `next` leads back, and never to another site (each sign-in page has a fresh token).
    expect(
      await b.post('/console/sign-in', { csrf: fresh, token: h.adminToken, next: '//evil.example/' }),
    ).toMatchObject({
      status: 303,
      location: '/console',
    });
    expect((await b.get('/console/payments/orders')).status).toBe(200);
    // A signed-in form without the session's token changes nothing.
    expect((await b.post('/console/sign-out', { csrf: 'forged' })).status).toBe(403);
    expect((await b.get('/console')).status).toBe(200);
    expect((await b.post('/console/sign-out', { csrf: await b.csrf('/console') })).location).toBe(
      '/console/sign-in',
    );
    expect((await b.get('/console')).status).toBe(303);
  });

  it('locks an account after repeated wrong passwords, even against the right one', async () => {
    const email = 'locked@console.example';
    await h.admin('POST', '/console-users', {
      json: { email, password: 'the right password', role: 'operator' },
    });
    const b = new ConsoleClient(h.baseUrl);
    for (let i = 1; i < MAX_FAILED_SIGNINS; i++)
      expect((await b.signIn({ email, password: `wrong ${i}` })).status).toBe(401);
    const locked = await b.signIn({ email, password: 'wrong again' });
    expect(locked.status).toBe(429);
    expect(locked.text).toContain('locked until');
    expect((await b.signIn({ email, password: 'the right password' })).status).toBe(429);
    expect(
      (
        await h.admin<{ data: { email: string; lockedUntil: string | null }[] }>('GET', '/console-users')
      ).body.data.find((u) => u.email === email)?.lockedUntil,
    ).not.toBeNull();
  });

  it('ends a lockout and a session on time (the users service on a clock of its own)', async () => {
    let now = new Date('2030-01-01T00:00:00Z');
    const users = new ConsoleUsers({
      db: h.services.db,
      encryptor: new Encryptor(randomBytes(32)),
      now: () => now,
    });
    await users.create({
      email: 'clocked@console.example',
      password: 'a fine long password',
      role: 'operator',
    });
    for (let i = 0; i < MAX_FAILED_SIGNINS; i++) await users.signIn('clocked@console.example', 'nope');
    expect((await users.signIn('clocked@console.example', 'a fine long password')).outcome).toBe('locked');
    now = new Date(now.getTime() + LOCKOUT_MINUTES * 60_000 + 1000);
    const signedIn = await users.signIn('Clocked@Console.example ', 'a fine long password');
    expect(signedIn.outcome).toBe('signed_in');
    const token = signedIn.outcome === 'signed_in' ? signedIn.token : '';
    expect(await users.session(token)).toBeDefined();
    now = new Date(now.getTime() + SESSION_HOURS * 3_600_000 + 1000);
    expect(await users.session(token)).toBeUndefined();
  });
});

describe('console users through the admin API', () => {
  it('refuses bad users naming the field, shows a generated password once, and removing a user ends their sessions', async () => {
    const bad = async (json: unknown) =>
      (await h.admin<{ error: { field?: string } }>('POST', '/console-users', { json })).body.error;
    expect((await bad({ email: 'not-an-email', role: 'operator' })).field).toBe('email');
    expect((await bad({ email: 'a@b.example', password: 'short', role: 'operator' })).field).toBe('password');
    expect((await bad({ email: 'a@b.example', role: 'member' })).field).toBe('tenant');
    expect(
      (await bad({ email: 'a@b.example', role: 'member', tenant: { kind: 'store', id: 'str_nope' } })).field,
    ).toBe('tenant.id');
    expect(
      (await bad({ email: 'a@b.example', role: 'operator', tenant: { kind: 'merchant', id: '1' } })).field,
    ).toBe('tenant');
    const created = await h.admin<{ id: string; password: string }>('POST', '/console-users', {
      json: { email: 'generated@console.example', role: 'operator' },
    });
    expect(created.status).toBe(201);
    expect(created.body.password).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(
      (
        await h.admin('POST', '/console-users', {
          json: { email: 'GENERATED@console.example', role: 'operator' },
        })
      ).status,
    ).toBe(409);
    const listed = await h.admin<{ data: Record<string, unknown>[] }>('GET', '/console-users');
    expect(JSON.stringify(listed.body)).not.toContain(created.body.password);

    const b = new ConsoleClient(h.baseUrl);
    expect(
      (await b.signIn({ email: 'generated@console.example', password: created.body.password })).location,
    ).toBe('/console');
    expect((await h.admin('DELETE', `/console-users/${created.body.id}`)).status).toBe(204);
    expect((await b.get('/console')).status).toBe(303);
    expect((await h.admin('DELETE', `/console-users/${created.body.id}`)).status).toBe(404);
  });
});

describe('acting from the console', () => {
  it('a refund form sent twice with its key refunds once, and a refused refund names its field', async () => {
    const m = await aMerchant(h);
    const paid = await payments(h, m, 'POST', '/order', anOrder(await aCustomer(h, m), { amount: '20.00' }));
    const transactionId = paid.body.data.transactionId as number;
    const b = await operator();
    const path = `/console/payments/transactions/${transactionId}/refund`;
    const form = { csrf: await b.csrf(path), idempotencyKey: randomBytes(8).toString('hex'), amount: '5.00' };
    const first = await b.post(path, form);
    const again = await b.post(path, form);
    expect(first.status).toBe(303);
    // The second answer is the first one replayed: it leads to the same refund.
    expect(again.status).toBe(303);
    expect(again.text).toContain(`href="${first.location}"`);
    const deposit = await payments(h, m, 'GET', `/transaction/${transactionId}`);
    expect(deposit.body.data.refundedAmount).toBe(5);
    const tooMuch = await b.post(path, { ...form, idempotencyKey: 'another', amount: '50.00' });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.text).toContain('aria-invalid="true"');
    expect(tooMuch.text).toContain('exceeds what is left to refund');
    const malformed = await b.post(path, { ...form, idempotencyKey: 'a third', amount: 'five' });
    expect(malformed.status).toBe(400);
    expect((await payments(h, m, 'GET', `/transaction/${transactionId}`)).body.data.refundedAmount).toBe(5);
  });

  it('shows an issued card by its BIN and last four, so cards can be told apart', async () => {
    const partner = (await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Cards' } }))
      .body;
    const holder = await aCardholder(h, partner.apiKey);
    const row = await h.services.db
      .selectFrom('issuing_cards')
      .select(['bin', 'last4'])
      .where('id', '=', holder.cardId)
      .executeTakeFirstOrThrow();
    const b = await operator();
    const page = await b.get(`/console/issuing/cards/${holder.cardId}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`${row.bin}•• •••• ${row.last4}`);
    expect((await b.get('/console/issuing/cards')).text).toContain(`•• •••• ${row.last4}`);
  });

  it('answers a malformed evidence upload with a 400 page, never a 500', async () => {
    const b = await operator();
    for (const [contentType, body] of [
      ['multipart/form-data', 'no boundary'],
      ['multipart/form-data; boundary=zz', '--zz\r\nContent-Disposition: form-data; name="notes"\r\n\r\ncut'],
    ] as const) {
      const answer = await b.postBody('/console/payments/disputes/1/evidence', contentType, body);
      // A body the parser cannot read is a 400; one it reads to its end without the form's token, 403.
      expect([400, 403], body).toContain(answer.status);
      if (answer.status === 400) expect(answer.text).toContain('multipart body is malformed');
    }
  });

  it('refuses a malformed filter, naming it', async () => {
    const b = await operator();
    const answer = await b.get('/console/payments/orders?customerId=abc');
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('customerId');
  });
});

describe('tenant isolation and no 5xx', () => {
  it('after every trigger, the operator reaches every page without a 5xx; a member of an empty tenant gets 404 for each object', async () => {
    const admin = { authorization: `Bearer ${h.adminToken}` };
    await h.admin('POST', '/partners', { json: { name: 'Isolation partner' } });
    await h.admin('POST', '/stores', { json: { name: 'Isolation store' } });
    await aMerchant(h);
    const triggers = await h.request<{ data: { event: string }[] }>('GET', '/sandbox/triggers', {
      headers: admin,
    });
    for (const { event } of triggers.body.data) {
      expect((await h.request('POST', `/sandbox/triggers/${event}`, { headers: admin })).status).toBe(201);
    }

    const op = await operator();
    const seen = new Set<string>();
    const queue = ['/console'];
    const failures: string[] = [];
    while (queue.length > 0 && seen.size < 600) {
      const path = queue.shift() ?? '';
      if (seen.has(path)) continue;
      seen.add(path);
      const page = await op.get(path);
      if (page.status >= 500) failures.push(`${path}: ${page.status}`);
      if (page.status === 303 && page.location?.startsWith('/console')) queue.push(page.location);
      for (const match of page.text.matchAll(/href="(\/console[^"#]*)"/g)) {
        const href = (match[1] ?? '').replace(/&amp;/g, '&');
        if (!href.includes('/assets/') && !seen.has(href)) queue.push(href);
      }
    }
    expect(failures).toEqual([]);
    const objectPages = [...seen].filter((p) =>
      /^\/console\/(payments\/(orders|transactions|customers|sites)|crypto\/(orders|refunds|stores)|issuing\/(partners|customers|cards|transactions|accounts)|ledger\/accounts|developers\/events|money\/payouts)\/[^/?]+(\/[^?]+)?$/.test(
        p,
      ),
    );
    expect(objectPages.length).toBeGreaterThan(40);
    for (const action of ['/evm-wallet', '/keys/new', '/refund', '/ipn-url'])
      expect(
        objectPages.some((p) => p.endsWith(action)),
        action,
      ).toBe(true);

    const emptyMerchant = await aMerchant(h);
    const emptyStore = await h.admin<{ id: string }>('POST', '/stores', { json: { name: 'Empty store' } });
    const emptyPartner = await h.admin<{ id: string }>('POST', '/partners', {
      json: { name: 'Empty partner' },
    });
    for (const m of [
      await member('merchant', emptyMerchant.id),
      await member('store', emptyStore.body.id),
      await member('partner', emptyPartner.body.id),
    ]) {
      const leaks: string[] = [];
      for (const path of objectPages) {
        // An object page, or one of its action pages (a form: refund, revoke, the EVM wallet…).
        const own = [emptyMerchant.sites[0]?.id, emptyStore.body.id, emptyPartner.body.id].some(
          (id) => path.endsWith(`/${id}`) || path.includes(`/${id}/`),
        );
        const status = (await m.get(path)).status;
        if (!own && status !== 404) leaks.push(`${path}: ${status}`);
      }
      expect(leaks).toEqual([]);
    }
  }, 180_000);
});
