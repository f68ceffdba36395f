// Scale-out as an operator does it: two `tessera serve` processes on one Postgres (DATABASE_URL). The
// rate limit of a credential is one limit across both, a clock advance answered by one is read at once
// by the other, sweeps (recurring billing here) run once however many processes advance the clock, and a
// credential revoked through one is refused by the other on the very next request although both had
// it cached.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aDataDir, ServerProcess } from '../harness/server-process.ts';
import { createTestDatabase } from '../harness/test-database.ts';

const LIMIT = 60;
let data: Awaited<ReturnType<typeof aDataDir>>;
let a: ServerProcess;
let b: ServerProcess;

beforeAll(async () => {
  data = await aDataDir();
  const env = {
    DATABASE_URL: await createTestDatabase(),
    TESSERA_DATA_DIR: data.dir,
    TESSERA_ADMIN_TOKEN: `adm_${randomBytes(16).toString('hex')}`,
    TESSERA_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    TESSERA_RATE_LIMIT_PER_MINUTE: String(LIMIT),
    // Background sweeps out of the way: what is shown here is what the advances do.
    TESSERA_SWEEP_INTERVAL_MS: '600000',
  };
  [a, b] = await Promise.all([ServerProcess.start(env), ServerProcess.start(env)]);
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await data.remove();
});

describe('two processes on one database', () => {
  it('share one rate limit per credential, within 10 %', async () => {
    // Fixed one-minute windows on the wall clock: start early in one, so the count is one window's.
    const intoWindow = Date.now() % 60_000;
    if (intoWindow > 45_000) await new Promise((r) => setTimeout(r, 60_000 - intoWindow + 100));
    const merchant = await a.admin<{ apiKey: string }>('POST', '/merchants', {
      name: 'Limited',
      sites: [{ name: 'web' }],
    });
    const credential = { authorization: `Bearer ${merchant.body.apiKey}` };
    let admitted = 0;
    let limited = 0;
    for (let i = 0; i < 2 * LIMIT; i++) {
      const res = await (i % 2 ? a : b).request('GET', '/payments/order', { headers: credential });
      if (res.status === 429) limited++;
      else admitted++;
    }
    expect(admitted).toBeLessThanOrEqual(LIMIT);
    expect(admitted).toBeGreaterThanOrEqual(Math.floor(LIMIT * 0.9));
    expect(limited).toBe(2 * LIMIT - admitted);
    process.stdout.write(
      `rate limit across two processes: ${admitted} of ${2 * LIMIT} admitted (limit ${LIMIT})\n`,
    );
  });

  it('read a clock advance made by either of them at once', async () => {
    for (const [advancer, reader] of [
      [a, b],
      [b, a],
    ] as const) {
      const advanced = await advancer.request<{ now: string }>('POST', '/sandbox/clock/advance', {
        headers: { authorization: `Bearer ${advancer.adminToken}` },
        json: { seconds: 3600 },
      });
      expect(advanced.status).toBe(200);
      const read = await reader.request<{ now: string }>('GET', '/sandbox/clock', {
        headers: { authorization: `Bearer ${reader.adminToken}` },
      });
      expect(Date.parse(read.body.now)).toBeGreaterThanOrEqual(Date.parse(advanced.body.now));
    }
  });

  it('bill a subscription once when both advance the clock over its due time', async () => {
    const merchant = await a.admin<{ apiKey: string }>('POST', '/merchants', {
      name: 'Two',
      sites: [{ name: 'web' }],
    });
    const auth = { authorization: `Bearer ${merchant.body.apiKey}` };
    const customer = await a.request<{ data: { id: number } }>('POST', '/payments/customer', {
      headers: auth,
      form: { identifier: 'sub', email: 's@example.com', firstName: 'S', lastName: 'B', country: 'RO' },
    });
    const order = await a.request<{ data: { orderId: number } }>('POST', '/payments/order', {
      headers: auth,
      form: {
        amount: '5.00',
        currency: 'EUR',
        orderType: 'recurring',
        intervalType: 'day',
        intervalValue: '1',
        customerId: String(customer.body.data.id),
        cardNumber: '4111111111111111',
        cardExpiryDate: `12/${(new Date().getUTCFullYear() + 3) % 100}`,
        cardCvv: '123',
        cardHolderName: 'S B',
        cardHolderCountry: 'RO',
      },
    });
    expect(order.status).toBe(201);
    const advance = (server: ServerProcess, seconds: number) =>
      server.request('POST', '/sandbox/clock/advance', {
        headers: { authorization: `Bearer ${server.adminToken}` },
        json: { seconds },
      });
    await advance(a, 23 * 3600);
    // Together they pass the first bill's due time once (25 h in all); the next is a day later.
    const both = await Promise.all([advance(a, 3600), advance(b, 3600)]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    const deposits = await b.request<{ data: { id: number }[] }>(
      'GET',
      `/payments/transaction?orderId=${order.body.data.orderId}&transactionType=deposit`,
      { headers: auth },
    );
    expect(deposits.body.data).toHaveLength(2);
  });

  it('refuse a revoked or rotated-out key on the next request, whichever process revoked it', async () => {
    const merchant = await a.admin<{
      id: number;
      apiKey: string;
      apiKeyId: string;
      sites: { id: number; secretKey: string }[];
    }>('POST', '/merchants', { name: 'Revoked', sites: [{ name: 'web' }] });
    const { id, apiKey, apiKeyId, sites } = merchant.body;
    const site = sites[0] as { id: number; secretKey: string };
    const list = (server: ServerProcess, key: string) =>
      server.request('GET', '/payments/order', { headers: { authorization: `Bearer ${key}` } });
    // Both processes have verified (and cached) both keys.
    for (const server of [a, b]) {
      expect((await list(server, apiKey)).status).toBe(200);
      expect((await list(server, site.secretKey)).status).toBe(200);
    }
    const revoked = await b.admin('POST', `/merchants/${id}/api-keys/${apiKeyId}/revoke`);
    expect(revoked.status).toBe(200);
    expect((await list(a, apiKey)).status).toBe(401);
    expect((await list(b, apiKey)).status).toBe(401);
    // A rotation with no overlap ends the old secret key everywhere at once; the new one works everywhere.
    const rotated = await a.admin<{ secretKey: string }>(
      'POST',
      `/merchants/${id}/sites/${site.id}/secret-key/rotate`,
      { overlapSeconds: 0 },
    );
    expect(rotated.status).toBe(201);
    expect((await list(b, site.secretKey)).status).toBe(401);
    expect((await list(a, site.secretKey)).status).toBe(401);
    expect((await list(b, rotated.body.secretKey)).status).toBe(200);

    // A store's session keys: revoke_existing on one process ends the old key on the other.
    const store = await a.admin<{ clientId: string; clientSecret: string }>('POST', '/stores', {
      name: 'Keys',
    });
    const session = (server: ServerProcess, revokeExisting: boolean) =>
      server.request<{ data: { id: string } }>('POST', '/crypto/api/stores/session', {
        json: {
          data: {
            type: 'session',
            attributes: {
              client_id: store.body.clientId,
              client_secret: store.body.clientSecret,
              revoke_existing: revokeExisting,
            },
          },
        },
      });
    const first = (await session(a, false)).body.data.id;
    const orders = (server: ServerProcess, key: string) =>
      server.request('GET', '/crypto/api/stores/orders', { headers: { authorization: `Bearer ${key}` } });
    expect((await orders(a, first)).status).toBe(200);
    expect((await orders(b, first)).status).toBe(200);
    const second = (await session(b, true)).body.data.id;
    expect((await orders(a, first)).status).toBe(401);
    expect((await orders(b, first)).status).toBe(401);
    expect((await orders(a, second)).status).toBe(200);
  });
});
