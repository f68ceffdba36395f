// Crypto merchant: order creation (POST /stores/orders, the real service's body) with a store's session
// key: validation, the order row and its redirect URL.
import type { FloorFixture } from './floor-server.ts';
import type { PathSetup } from './payments.ts';
import type { TesseraServer } from './servers.ts';

export async function setUpCrypto(tessera: TesseraServer): Promise<PathSetup<FloorFixture['crypto']>> {
  const { call, admin } = tessera;
  const store = await call<{ id: string; clientId: string; clientSecret: string }>(
    'POST',
    '/admin/stores',
    admin,
    { name: 'Bench store' },
  );
  const session = await call<{ data: { id: string } }>(
    'POST',
    '/crypto/api/stores/session',
    {},
    {
      data: { type: 'session', attributes: { client_id: store.clientId, client_secret: store.clientSecret } },
    },
  );
  // A shop's buyers: ten thousand emails, so velocity per email reads a buyer's few orders, not hundreds
  // of the run's (with a hundred, each email had about a hundred orders of the run by its end)
  const bodies = Array.from({ length: 10_000 }, (_, i) =>
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
          customer: { email: `bench-${i}@example.com`, country: 'RO' },
        },
      },
    }),
  );
  const headers = { 'content-type': 'application/vnd.api+json' };
  return {
    target: {
      base: tessera.base,
      path: '/crypto/api/stores/orders',
      headers: { authorization: `Bearer ${session.data.id}`, ...headers },
      bodies,
      expect: '"orders_redirect"',
    },
    floor: { path: '/floor/crypto/orders', headers, bodies, expect: '"orders_redirect"' },
    fixture: { storeId: store.id },
  };
}
