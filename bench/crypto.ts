// Crypto merchant scenario: order creation (POST /stores/orders, the COMPAT body) through the real HTTP
// stack with a store's session key: validation, the order row and its redirect URL.
import { startBenchApp } from './bench-app.ts';
import { runHttpLoad } from './http-load.ts';
import type { Measurement } from './measure.ts';

export async function cryptoScenarios(
  databaseUrl: string,
  settings: { concurrency: number; seconds: number; warmupSeconds: number },
): Promise<(() => Promise<Measurement>)[]> {
  const { tessera, base, admin, call } = await startBenchApp(databaseUrl);
  const store = await call<{ clientId: string; clientSecret: string }>('POST', '/admin/stores', admin, {
    name: 'Bench store',
  });
  const session = await call<{ data: { id: string } }>(
    'POST',
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
