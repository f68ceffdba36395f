// Crypto merchant scenario: order creation (POST /stores/orders, the COMPAT body) through the real HTTP
// stack with a store's session key: validation, the order row and its redirect URL.
import { randomBytes } from 'node:crypto';
import { parseConfig } from '../packages/server/src/config.ts';
import { createApp } from '../packages/server/src/server.ts';
import { runHttpLoad } from './http-load.ts';
import type { Measurement } from './measure.ts';

export async function cryptoScenarios(
  databaseUrl: string,
  settings: { concurrency: number; seconds: number; warmupSeconds: number },
): Promise<(() => Promise<Measurement>)[]> {
  const adminToken = `adm_${randomBytes(16).toString('hex')}`;
  const tessera = await createApp({
    config: parseConfig({ LOG_LEVEL: 'silent', PORT: '0', TESSERA_RATE_LIMIT_PER_MINUTE: '100000000' }),
    databaseUrl,
    adminToken,
    encryptionKey: randomBytes(32),
    runBackgroundSweeps: false,
  });
  const base = await tessera.app.listen({ port: 0, host: '127.0.0.1' });
  const post = async <T>(path: string, headers: Record<string, string>, body: unknown): Promise<T> => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const store = await post<{ clientId: string; clientSecret: string }>(
    '/admin/stores',
    { authorization: `Bearer ${adminToken}` },
    { name: 'Bench store' },
  );
  const session = await post<{ data: { id: string } }>(
    '/crypto/api/stores/session',
    {},
    {
      data: { type: 'session', attributes: { client_id: store.clientId, client_secret: store.clientSecret } },
    },
  );
  const body = (i: number) =>
    JSON.stringify({
      data: {
        type: 'orders',
        attributes: {
          order: {
            reference: `bench-${i}`,
            amount: { total: '1090.00', currency: 'EUR' },
            return_urls: { return_url: 'https://shop.example/return' },
            line_items: [{ sku: 'B-1', name: 'Bench item', price: '1090.00', currency: 'EUR', quantity: 1 }],
          },
          customer: { email: 'bench@example.com', country: 'RO' },
        },
      },
    });
  return [
    async () => {
      const result = await runHttpLoad('crypto order creation, HTTP, saturated', {
        url: `${base}/crypto/api/stores/orders`,
        headers: { authorization: `Bearer ${session.data.id}`, 'content-type': 'application/vnd.api+json' },
        bodies: Array.from({ length: 100 }, (_, i) => body(i)),
        expect: '"orders_redirect"',
        mode: 'closed',
        concurrency: settings.concurrency,
        ratePerSecond: 0,
        seconds: settings.seconds,
        warmupSeconds: settings.warmupSeconds,
      });
      await tessera.close();
      return result;
    },
  ];
}
