// Console roles (docs/console.md, Roles): a person signed in with each role walks every page and action the
// console has (permissions.ts lists them all; the server refuses to start with one missing) and is
// refused exactly those their role lacks — 403 naming the role, before anything runs — while every other
// answers as it would (a page, or a 404 for the made-up id). The operator changes a role through the
// admin API and the open session takes it at the next request.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allows, PERMISSIONS } from '../../src/platform/console/permissions.ts';
import type { ConsoleRole } from '../../src/platform/db/schema.ts';
import { ConsoleClient } from '../harness/console-client.ts';
import { Harness } from '../harness/harness.ts';
import { aMerchant } from '../harness/payments-builders.ts';

let h: Harness;
let merchantId: number;
beforeAll(async () => {
  h = await Harness.start({ env: { TESSERA_RATE_LIMIT_PER_MINUTE: '100000' } });
  merchantId = (await aMerchant(h)).id;
});
afterAll(() => h.close());

async function signedIn(role: ConsoleRole): Promise<{ client: ConsoleClient; id: string }> {
  const email = `${role}-${randomBytes(4).toString('hex')}@console.example`;
  const password = 'correct horse battery staple';
  const operator = role === 'operator' || role === 'operator-viewer' || role === 'compliance';
  const created = await h.admin<{ id: string; role: string }>('POST', '/console-users', {
    json: {
      email,
      password,
      role,
      ...(operator ? {} : { tenant: { kind: 'merchant', id: String(merchantId) } }),
    },
  });
  expect(created.status, created.text).toBe(201);
  expect(created.body.role).toBe(role);
  const client = new ConsoleClient(h.baseUrl);
  expect((await client.signIn({ email, password })).location).toBe('/console');
  return { client, id: created.body.id };
}

const refused = (answer: { status: number; text: string }) =>
  answer.status === 403 && answer.text.includes('Your role');

describe('console roles', () => {
  const roles: ConsoleRole[] = [
    'viewer',
    'developer',
    'finance',
    'admin',
    'operator-viewer',
    'compliance',
    'operator',
  ];

  it.each(roles)('%s: every page and action answers as the role allows', async (role) => {
    const { client } = await signedIn(role);
    const csrf = await client.csrf('/console/account');
    expect(csrf).not.toBe('');
    const wrong: string[] = [];
    for (const [route, permission] of Object.entries(PERMISSIONS)) {
      const [method, template = ''] = route.split(' ');
      // Signing out would end the walk; every role may.
      if (method === 'POST' && permission === 'self') continue;
      const path = `/console${template.replace(/:[A-Za-z]+/g, 'unknown')}`.replace(/\/$/, '');
      const answer = method === 'GET' ? await client.get(path) : await client.post(path, { csrf });
      const expected = allows(role, permission);
      if (refused(answer) === expected || answer.status >= 500)
        wrong.push(`${route} (${permission}) → ${answer.status}`);
    }
    expect(wrong).toEqual([]);
    // The menu offers only what the role may open.
    const overview = await client.get('/console');
    const nav = /<nav aria-label="Sections">([\s\S]*?)<\/nav>/.exec(overview.text)?.[1] ?? '';
    const offered = [...nav.matchAll(/href="([^"]+)"/g)].map((m) => m[1] as string);
    expect(offered.length).toBeGreaterThan(2);
    for (const href of offered) expect(refused(await client.get(href)), href).toBe(false);
    expect(offered.includes('/console/money/reports')).toBe(allows(role, 'finance'));
    expect(offered.includes('/console/developers/keys')).toBe(allows(role, 'developer'));
  });

  it('a role changed by the operator applies to the open session at once', async () => {
    const { client, id } = await signedIn('viewer');
    expect(refused(await client.get('/console/money/reports'))).toBe(true);
    const changed = await h.admin<{ role: string }>('PUT', `/console-users/${id}/role`, {
      json: { role: 'finance' },
    });
    expect(changed.body.role).toBe('finance');
    const reports = await client.get('/console/money/reports');
    expect(reports.status).toBe(200);
    // A member's role stays a member's, an operator's an operator's.
    const crossing = await h.admin<{ error: { field: string } }>('PUT', `/console-users/${id}/role`, {
      json: { role: 'operator' },
    });
    expect(crossing.status).toBe(400);
    expect(crossing.body.error.field).toBe('role');
    expect(
      (await h.admin('PUT', '/console-users/usr_unknown/role', { json: { role: 'viewer' } })).status,
    ).toBe(404);
    expect((await h.admin('PUT', `/console-users/${id}/role`, { json: { role: 'owner' } })).status).toBe(400);
  });

  it('a tenant’s admin adds people, changes their roles and removes them — never their own, never another tenant’s', async () => {
    const { client: admin, id: selfId } = await signedIn('admin');
    const add = async (form: Record<string, string>) => {
      const page = await admin.get('/console/members/new');
      const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
      const idempotencyKey = /name="idempotencyKey" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
      return admin.post('/console/members/new', { csrf, idempotencyKey, ...form });
    };
    const email = `added-${randomBytes(4).toString('hex')}@console.example`;
    expect((await add({ email, role: 'operator' })).status).toBe(400); // not a member's role
    expect((await add({ email: 'not an email', role: 'viewer' })).status).toBe(400);
    const added = await add({ email, role: 'viewer' });
    expect(added.status).toBe(200);
    const password = /data-field="password">([^<]+)</.exec(added.text)?.[1] as string;
    expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
    const person = new ConsoleClient(h.baseUrl);
    expect((await person.signIn({ email, password })).location).toBe('/console');
    expect(refused(await person.get('/console/money/reports'))).toBe(true);

    const list = await admin.get('/console/members');
    const id = /\/console\/members\/(usr_[0-9A-Z]+)\/role/.exec(
      list.text.slice(list.text.indexOf(email)),
    )?.[1];
    expect(id).toBeDefined();
    const post = async (path: string, form: Record<string, string> = {}) =>
      admin.post(path, { csrf: await admin.csrf(path), ...form });
    expect((await post(`/console/members/${id}/role`, { role: 'finance' })).status).toBe(303);
    expect((await person.get('/console/money/reports')).status).toBe(200);
    // Their own role and membership are another admin's to change.
    expect((await post(`/console/members/${selfId}/role`, { role: 'viewer' })).status).toBe(409);
    expect((await post(`/console/members/${selfId}/remove`)).status).toBe(409);
    // Another tenant's people and the operators are not theirs: not found.
    const { id: operatorId } = await signedIn('operator');
    const stranger = await h.admin<{ id: string }>('POST', '/console-users', {
      json: {
        email: `other-${randomBytes(4).toString('hex')}@console.example`,
        role: 'viewer',
        tenant: { kind: 'merchant', id: String((await aMerchant(h)).id) },
      },
    });
    for (const other of [operatorId, stranger.body.id]) {
      expect((await admin.get(`/console/members/${other}/role`)).status).toBe(404);
      expect((await post(`/console/members/${other}/remove`)).status).toBe(404);
    }
    expect((await post(`/console/members/${id}/remove`)).status).toBe(303);
    expect((await person.get('/console')).status).toBe(303);
    const trail = await h.admin<{ data: { action: string }[] }>(
      'GET',
      `/audit-events?tenant=merchant:${merchantId}`,
    );
    const actions = trail.body.data.map((r) => r.action);
    expect(actions).toEqual(
      expect.arrayContaining(['console_user.created', 'console_user.role_changed', 'console_user.removed']),
    );
  });

  it('a member created with the name before roles is an admin', async () => {
    const created = await h.admin<{ role: string }>('POST', '/console-users', {
      json: {
        email: 'legacy@console.example',
        role: 'member',
        tenant: { kind: 'merchant', id: String(merchantId) },
      },
    });
    expect(created.body.role).toBe('admin');
  });
});
