// The operator's admin API (README, Onboarding tenants): every route, happy, errors and security.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/platform/crypto/hashing.ts';
import { Harness, OWN_HARNESS_TIMEOUT_MS } from '../harness/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(async () => {
  await h.close();
});

type AdminError = { error: { code: string; message: string; field?: string }; requestId: string };

describe('partners', () => {
  it('creates a partner and shows its credentials once, storing only a hash and a ciphertext', async () => {
    const created = await h.admin<Record<string, string>>('POST', '/partners', {
      json: { name: 'Acme Cards', webhookUrl: 'https://hooks.acme.test/tessera' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Acme Cards', webhookUrl: 'https://hooks.acme.test/tessera' });
    expect(created.body.id).toMatch(/^ptn_/);
    expect(created.body.partnerId).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.body.apiKey).toMatch(/^ptk_[A-Za-z0-9]{40}$/);
    expect(created.body.webhookSigningKey).toMatch(/^whsk_/);
    const row = await h.services.db
      .selectFrom('partners')
      .selectAll()
      .where('id', '=', created.body.id as string)
      .executeTakeFirstOrThrow();
    expect(row.api_key_hash).toBe(hashToken(created.body.apiKey as string));
    expect(JSON.stringify(row)).not.toContain(created.body.apiKey);
    expect(JSON.stringify(row)).not.toContain(created.body.webhookSigningKey);
    expect(await h.services.partners.signingKey(h.services.db, created.body.id as string)).toBe(
      created.body.webhookSigningKey,
    );
    expect((await h.services.partners.findByApiKey(h.services.db, created.body.apiKey as string))?.id).toBe(
      created.body.id,
    );

    const listed = await h.admin<{ data: Record<string, unknown>[] }>('GET', '/partners');
    expect(listed.body.data.find((p) => p.id === created.body.id)).not.toHaveProperty('apiKey');
    const fetched = await h.admin<Record<string, unknown>>('GET', `/partners/${created.body.id}`);
    expect(fetched.body).not.toHaveProperty('webhookSigningKey');
    expect(fetched.body.partnerId).toBe(created.body.partnerId);
  });

  it('changes and clears the webhook URL', async () => {
    const { body } = await h.admin<{ id: string }>('POST', '/partners', { json: { name: 'P' } });
    const patched = await h.admin<{ webhookUrl: string | null; name: string }>(
      'PATCH',
      `/partners/${body.id}`,
      {
        json: { webhookUrl: 'https://new.example/hook', name: 'P2' },
      },
    );
    expect(patched.body).toMatchObject({ webhookUrl: 'https://new.example/hook', name: 'P2' });
    const cleared = await h.admin<{ webhookUrl: string | null }>('PATCH', `/partners/${body.id}`, {
      json: { webhookUrl: null },
    });
    expect(cleared.body.webhookUrl).toBeNull();
  });

  it('names the field of bad input and answers 404 for unknown ids', async () => {
    const cases: [unknown, string][] = [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ name: 'x', webhookUrl: 'ftp://files.example/x' }, 'webhookUrl'],
      [{ name: 'x', webhookUrl: 'not a url' }, 'webhookUrl'],
      [{ name: 'x', webhookUrl: 'https://u:p@example.com/' }, 'webhookUrl'],
      [{ name: 42 }, 'name'],
    ];
    for (const [json, field] of cases) {
      const res = await h.admin<AdminError>('POST', '/partners', { json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'validation_failed', field });
      expect(res.body.requestId).toBe(res.headers.get('x-request-id'));
    }
    expect((await h.admin('GET', '/partners/ptn_unknown')).status).toBe(404);
    expect((await h.admin('PATCH', '/partners/ptn_unknown', { json: { name: 'x' } })).status).toBe(404);
    const before = (await h.admin<{ data: unknown[] }>('GET', '/partners')).body.data.length;
    await h.admin('POST', '/partners', { body: '{"name":', headers: { 'content-type': 'application/json' } });
    expect((await h.admin<{ data: unknown[] }>('GET', '/partners')).body.data.length).toBe(before);
  });
});

describe('merchants', () => {
  it('creates a merchant with sites, a JWT API key and 32-character IPN secrets', async () => {
    const created = await h.admin<{
      id: number;
      apiKey: string;
      apiKeyId: string;
      sites: { id: number; name: string; ipnUrl: string | null; ipnSecret: string }[];
    }>('POST', '/merchants', {
      json: {
        name: 'Shop Ltd',
        sites: [{ name: 'web', ipnUrl: 'https://shop.example/ipn' }, { name: 'app' }],
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.apiKey.split('.')).toHaveLength(3);
    expect(created.body.sites.map((s) => [s.name, s.ipnUrl])).toEqual([
      ['web', 'https://shop.example/ipn'],
      ['app', null],
    ]);
    for (const site of created.body.sites) {
      expect(Number.isInteger(site.id)).toBe(true);
      expect(site.ipnSecret).toMatch(/^[A-Za-z0-9]{32}$/);
      expect(await h.services.merchants.ipnSecret(h.services.db, site.id)).toBe(site.ipnSecret);
    }
    expect(await h.services.merchants.authenticate(h.services.db, created.body.apiKey)).toEqual({
      merchantId: created.body.id,
      apiKeyId: created.body.apiKeyId,
    });
    const fetched = await h.admin<{ sites: Record<string, unknown>[] }>(
      'GET',
      `/merchants/${created.body.id}`,
    );
    expect(fetched.body.sites[0]).not.toHaveProperty('ipnSecret');
    expect(
      (await h.admin<{ data: { id: number }[] }>('GET', '/merchants')).body.data.map((m) => m.id),
    ).toContain(created.body.id);
  });

  it('refuses tampered, foreign-signed and revoked keys; a new key works alongside the old', async () => {
    const { body } = await h.admin<{ id: number; apiKey: string; apiKeyId: string }>('POST', '/merchants', {
      json: { name: 'Keys', sites: [{ name: 's' }] },
    });
    const [header, payload, signature = ''] = body.apiKey.split('.');
    const tampered = `${header}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    const forgedPayload = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()), mid: 1 }),
    ).toString('base64url');
    for (const key of [tampered, `${header}.${forgedPayload}.${signature}`, 'not-a-jwt', '']) {
      expect(await h.services.merchants.authenticate(h.services.db, key)).toBeUndefined();
    }
    const second = await h.admin<{ apiKey: string; apiKeyId: string }>(
      'POST',
      `/merchants/${body.id}/api-keys`,
    );
    expect(second.status).toBe(201);
    const revoked = await h.admin('POST', `/merchants/${body.id}/api-keys/${body.apiKeyId}/revoke`);
    expect(revoked.status).toBe(200);
    expect(await h.services.merchants.authenticate(h.services.db, body.apiKey)).toBeUndefined();
    expect((await h.services.merchants.authenticate(h.services.db, second.body.apiKey))?.merchantId).toBe(
      body.id,
    );
    expect((await h.admin('POST', `/merchants/${body.id}/api-keys/${body.apiKeyId}/revoke`)).status).toBe(
      404,
    );
    expect(
      (await h.admin<AdminError>('POST', `/merchants/${body.id}/api-keys/not-a-uuid/revoke`)).body.error
        .field,
    ).toBe('apiKeyId');
    expect((await h.admin('POST', '/merchants/999999/api-keys')).status).toBe(404);
  });

  it('updates a site only through its own merchant', async () => {
    const a = await h.admin<{ id: number; sites: { id: number }[] }>('POST', '/merchants', {
      json: { name: 'A', sites: [{ name: 'a' }] },
    });
    const b = await h.admin<{ id: number; sites: { id: number }[] }>('POST', '/merchants', {
      json: { name: 'B', sites: [{ name: 'b' }] },
    });
    const siteA = a.body.sites[0]?.id;
    const ok = await h.admin<{ ipnUrl: string }>('PATCH', `/merchants/${a.body.id}/sites/${siteA}`, {
      json: { ipnUrl: 'https://a.example/ipn' },
    });
    expect(ok.body.ipnUrl).toBe('https://a.example/ipn');
    // Nothing to change: the site as it is.
    const unchanged = await h.admin('PATCH', `/merchants/${a.body.id}/sites/${siteA}`, { json: {} });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body).toEqual(ok.body);
    expect((await h.admin('PATCH', `/merchants/${b.body.id}/sites/${siteA}`, { json: {} })).status).toBe(404);
    expect(
      (await h.admin('PATCH', `/merchants/${b.body.id}/sites/${siteA}`, { json: { name: 'stolen' } })).status,
    ).toBe(404);
  });

  it('names the field of bad input', async () => {
    const cases: [unknown, string][] = [
      [{ name: 'M' }, 'sites'],
      [{ name: 'M', sites: [] }, 'sites'],
      [{ name: 'M', sites: [{}] }, 'sites.0.name'],
      [{ name: 'M', sites: [{ name: 's', ipnUrl: 'gopher://x' }] }, 'sites[0].ipnUrl'],
      // A brand's logo is an https image URL and its colour #RRGGBB; nothing else goes in it.
      [{ name: 'M', sites: [{ name: 's', brand: { color: 'red' } }] }, 'sites.0.brand.color'],
      [
        { name: 'M', sites: [{ name: 's', brand: { logoUrl: 'http://x.example/l.png' } }] },
        'sites.0.brand.logoUrl',
      ],
      [{ name: 'M', sites: [{ name: 's', brand: { script: 'x' } }] }, 'sites.0.brand'],
    ];
    for (const [json, field] of cases) {
      const res = await h.admin<AdminError>('POST', '/merchants', { json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.error.field).toBe(field);
    }
    expect((await h.admin<AdminError>('GET', '/merchants/abc')).body.error.field).toBe('id');
    expect((await h.admin('GET', '/merchants/424242')).status).toBe(404);
  });
});

describe('stores', () => {
  it('creates a store with every supported pair and refunds on by default', async () => {
    const created = await h.admin<
      Record<string, unknown> & { currencies: { currency: string; network: string }[] }
    >('POST', '/stores', {
      json: { name: 'Crypto Shop' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ refundsEnabled: true, webhookUrl: null });
    expect(created.body.clientId).toMatch(/^cli_/);
    expect(created.body.clientSecret).toMatch(/^cs_/);
    expect(created.body.webhookSecret).toMatch(/^u_test_webhooks_[0-9a-f-]{36}$/);
    expect(created.body.currencies).toContainEqual({ currency: 'USDC', network: 'ETH' });
    expect(created.body.currencies).toContainEqual({ currency: 'BTC', network: 'BTC' });
    const found = await h.services.stores.findByClientCredentials(
      h.services.db,
      created.body.clientId as string,
      created.body.clientSecret as string,
    );
    expect(found?.id).toBe(created.body.id);
    expect(
      await h.services.stores.findByClientCredentials(
        h.services.db,
        created.body.clientId as string,
        'cs_wrong',
      ),
    ).toBeUndefined();
  });

  it('configures currencies (normalised) and the refunds flag', async () => {
    const { body } = await h.admin<{ id: string }>('POST', '/stores', {
      json: {
        name: 'S',
        refundsEnabled: false,
        currencies: [
          { currency: 'usdc', network: 'eth' },
          { currency: 'BTC', network: 'BTC' },
        ],
      },
    });
    const fetched = await h.admin<{ currencies: unknown[]; refundsEnabled: boolean }>(
      'GET',
      `/stores/${body.id}`,
    );
    expect(fetched.body).toMatchObject({
      refundsEnabled: false,
      currencies: [
        { currency: 'USDC', network: 'ETH' },
        { currency: 'BTC', network: 'BTC' },
      ],
    });
    const patched = await h.admin<{ currencies: unknown[]; refundsEnabled: boolean }>(
      'PATCH',
      `/stores/${body.id}`,
      {
        json: { refundsEnabled: true, currencies: [{ currency: 'USDT', network: 'TRON' }] },
      },
    );
    expect(patched.body).toMatchObject({
      refundsEnabled: true,
      currencies: [{ currency: 'USDT', network: 'TRON' }],
    });
  });

  it('refuses unsupported pairs naming the entry, and unknown stores', async () => {
    const res = await h.admin<AdminError>('POST', '/stores', {
      json: {
        name: 'S',
        currencies: [
          { currency: 'BTC', network: 'BTC' },
          { currency: 'BTC', network: 'ETH' },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', field: 'currencies[1]' });
    expect(
      (await h.admin<AdminError>('POST', '/stores', { json: { name: 'S', currencies: [] } })).body.error
        .field,
    ).toBe('currencies');
    expect((await h.admin('PATCH', '/stores/str_unknown', { json: { refundsEnabled: false } })).status).toBe(
      404,
    );
    expect((await h.admin('GET', '/stores/str_unknown')).status).toBe(404);
  });
});

describe('security', () => {
  it('every admin route requires the operator token', async () => {
    const routes: [string, string][] = [
      ['POST', '/admin/partners'],
      ['GET', '/admin/partners'],
      ['GET', '/admin/partners/x'],
      ['PATCH', '/admin/partners/x'],
      ['POST', '/admin/merchants'],
      ['GET', '/admin/merchants'],
      ['GET', '/admin/merchants/1'],
      ['PATCH', '/admin/merchants/1/sites/1'],
      ['POST', '/admin/merchants/1/api-keys'],
      ['POST', '/admin/stores'],
      ['GET', '/admin/stores'],
      ['PATCH', '/admin/stores/x'],
      ['GET', '/admin/events'],
      ['POST', '/sandbox/clock/advance'],
      ['GET', '/sandbox/clock'],
    ];
    const wrong = `adm_${randomBytes(16).toString('hex')}`;
    for (const [method, path] of routes) {
      const attempts: Record<string, string>[] = [
        {},
        { authorization: `Bearer ${wrong}` },
        { authorization: h.adminToken },
      ];
      for (const headers of attempts) {
        const res = await h.request<AdminError>(method, path, {
          headers,
          ...(method === 'GET' ? {} : { json: {} }),
        });
        expect(res.status, `${method} ${path}`).toBe(401);
        expect(res.body.error.code).toBe('unauthenticated');
      }
    }
  });
});

describe('production mode', () => {
  it(
    'refuses private webhook targets and has no sandbox routes',
    async () => {
      const prod = await Harness.start({
        env: {
          TESSERA_MODE: 'production',
          TESSERA_ADMIN_TOKEN: 'x'.repeat(32),
          TESSERA_ENCRYPTION_KEY: 'ab'.repeat(32),
          DATABASE_URL: 'postgres://unused@127.0.0.1/unused',
        },
      });
      try {
        const refused = await prod.admin<AdminError>('POST', '/partners', {
          json: { name: 'P', webhookUrl: 'http://10.0.0.8/hooks' },
        });
        expect(refused.status).toBe(400);
        expect(refused.body.error.message).toMatch(/private or reserved/);
        const accepted = await prod.admin('POST', '/stores', {
          json: { name: 'S', webhookUrl: 'https://hooks.example.com/x' },
        });
        expect(accepted.status).toBe(201);
        expect(
          (await prod.admin<{ webhookSecret: string }>('POST', '/stores', { json: { name: 'S2' } })).body
            .webhookSecret,
        ).toMatch(/^u_live_webhooks_/);
        expect(
          (
            await prod.request('POST', '/sandbox/clock/advance', {
              headers: { authorization: `Bearer ${prod.adminToken}` },
              json: { seconds: 1 },
            })
          ).status,
        ).toBe(404);
      } finally {
        await prod.close();
      }
    },
    OWN_HARNESS_TIMEOUT_MS,
  );
});
