// Sessions (client credentials → u_test_ keys, rotation), available currencies and 60-second quotes,
// including a quote used after it expired.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anOrder, aStore, orderDocument, orderOf, pay, type TestStore } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';

let h: Harness;
let store: TestStore;

beforeAll(async () => {
  h = await Harness.start();
  store = await aStore(h, {
    currencies: [
      { currency: 'BTC', network: 'BTC' },
      { currency: 'USDC', network: 'ETH' },
      { currency: 'USDC', network: 'POLYGON' },
    ],
  });
});
afterAll(() => h.close());

const session = (attributes: Record<string, unknown>) =>
  h.request<{ data: { type: string; id: string; attributes: { token: string } } }>(
    'POST',
    '/crypto/api/stores/session',
    {
      json: { data: { type: 'session', attributes } },
    },
  );

describe('session', () => {
  it('exchanges client credentials for a u_test_ key of 24 characters, shown once and stored hashed', async () => {
    const res = await session({ client_id: store.clientId, client_secret: store.clientSecret });
    expect(res.status).toBe(200);
    expect(res.body.data.type).toBe('session');
    expect(res.body.data.id).toMatch(/^u_test_[A-Za-z0-9]{24}$/);
    expect(res.body.data.attributes.token).toBe(res.body.data.id);
    const stored = await h.services.db.selectFrom('crypto_api_keys').select('key_hash').execute();
    expect(stored.some((r) => r.key_hash.includes(res.body.data.id))).toBe(false);
    // A new key leaves the old ones working…
    expect(
      (await h.request('GET', '/crypto/api/stores/available_currencies', { headers: store.auth })).status,
    ).toBe(200);
    // …unless the store asks to revoke them.
    const rotated = await session({
      client_id: store.clientId,
      client_secret: store.clientSecret,
      revoke_existing: true,
    });
    expect(
      (await h.request('GET', '/crypto/api/stores/available_currencies', { headers: store.auth })).status,
    ).toBe(401);
    store.auth = { authorization: `Bearer ${rotated.body.data.id}` };
    expect(
      (await h.request('GET', '/crypto/api/stores/available_currencies', { headers: store.auth })).status,
    ).toBe(200);
  });

  it('answers 401 for a wrong secret or an unknown client, and 400 naming a missing field', async () => {
    for (const attributes of [
      { client_id: store.clientId, client_secret: 'cs_wrong' },
      { client_id: 'cli_unknown', client_secret: store.clientSecret },
    ]) {
      const res = await session(attributes);
      expect(res.status).toBe(401);
    }
    const missing = await h.request<{ errors: { source: { pointer: string } }[] }>(
      'POST',
      '/crypto/api/stores/session',
      {
        json: { data: { attributes: { client_id: store.clientId } } },
      },
    );
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0]?.source.pointer).toBe('/data/attributes/client_secret');
  });
});

describe('available currencies', () => {
  it('lists exactly the pairs enabled for the store, and follows the admin API', async () => {
    const res = await h.request<{
      data: { type: string; attributes: { currency: string; blockchain: string } }[];
    }>('GET', '/crypto/api/stores/available_currencies', { headers: store.auth });
    expect(res.body.data).toEqual([
      { type: 'currencies', attributes: { currency: 'BTC', blockchain: 'BTC' } },
      { type: 'currencies', attributes: { currency: 'USDC', blockchain: 'ETH' } },
      { type: 'currencies', attributes: { currency: 'USDC', blockchain: 'POLYGON' } },
    ]);
    await h.admin('PATCH', `/stores/${store.id}`, {
      json: { currencies: [{ currency: 'ETH', network: 'ETH' }] },
    });
    const after = await h.request<{ data: unknown[] }>('GET', '/crypto/api/stores/available_currencies', {
      headers: store.auth,
    });
    expect(after.body.data).toEqual([
      { type: 'currencies', attributes: { currency: 'ETH', blockchain: 'ETH' } },
    ]);
    await h.admin('PATCH', `/stores/${store.id}`, {
      json: {
        currencies: [
          { currency: 'BTC', network: 'BTC' },
          { currency: 'USDC', network: 'ETH' },
        ],
      },
    });
    expect((await h.request('GET', '/crypto/api/stores/available_currencies')).status).toBe(401);
  });
});

type QuoteDoc = {
  data: {
    id: string;
    attributes: {
      rate: string;
      from: string;
      to: string;
      status: string;
      created_at: string;
      expires_at: string;
    };
  };
};
const quote = (attributes: Record<string, unknown>) =>
  h.request<QuoteDoc>('POST', '/crypto/api/stores/exchange_rates', {
    headers: store.auth,
    json: { data: { type: 'exchange_rates', attributes } },
  });

describe('exchange-rate quotes', () => {
  it('quote for exactly 60 seconds at the FX simulator’s rate, pinned rates included', async () => {
    await h.request('POST', '/sandbox/fx/rates', {
      headers: { authorization: `Bearer ${h.adminToken}` },
      json: { from: 'BTC', to: 'EUR', rate: '55000.5' },
    });
    const res = await quote({ type: 'crypto', from: 'BTC', to: 'EUR' });
    expect(res.status).toBe(201);
    expect(res.body.data.attributes).toMatchObject({
      from: 'BTC',
      to: 'EUR',
      rate: '55000.5',
      status: 'active',
    });
    const { created_at, expires_at } = res.body.data.attributes;
    expect(Date.parse(expires_at) - Date.parse(created_at)).toBe(60_000);
    const reverse = await quote({ type: 'fiat', from: 'EUR', to: 'BTC' });
    expect(reverse.body.data.attributes.rate).toBe('0.000018181652894064');
    await h.request('POST', '/sandbox/fx/rates', {
      headers: { authorization: `Bearer ${h.adminToken}` },
      json: { from: 'BTC', to: 'EUR', rate: null },
    });
    const floating = await quote({ from: 'USDC', to: 'USD' });
    expect(floating.body.data.attributes.rate).toBe('1');
  });

  it.each([
    [{ from: 'ETH', to: 'EUR' }, '/data/attributes/from'], // not accepted by this store
    [{ from: 'BTC', to: 'JPY' }, '/data/attributes/to'], // not a settlement currency
    [{ type: 'fiat', from: 'BTC', to: 'EUR' }, '/data/attributes/to'],
    [{ from: 'BTC' }, '/data/attributes/to'],
  ])('refuses %j naming the field', async (attributes, pointer) => {
    const res = await h.request<{ errors: { source: { pointer: string } }[] }>(
      'POST',
      '/crypto/api/stores/exchange_rates',
      {
        headers: store.auth,
        json: { data: { attributes } },
      },
    );
    expect(res.status).toBe(400);
    expect(res.body.errors[0]?.source.pointer).toBe(pointer);
  });

  it('locks an order’s rate once; a quote used after its 60 seconds is refused', async () => {
    const fresh = await quote({ from: 'USDC', to: 'EUR' });
    const order = await anOrder(h, store, { exchangeRateId: fresh.body.data.id });
    const read = await h.request<QuoteDoc>('GET', `/crypto/api/stores/exchange_rates/${fresh.body.data.id}`, {
      headers: store.auth,
    });
    expect(read.body.data.attributes.status).toBe('used');
    const again = await h.request('POST', '/crypto/api/stores/orders', {
      headers: store.auth,
      json: orderDocument({ exchangeRateId: fresh.body.data.id }),
    });
    expect(again.status).toBe(400);
    await pay(h, order.id);
    expect((await orderOf(h, store, order.id)).transfers[0]?.value.value).toBe('10.90');

    const stale = await quote({ from: 'BTC', to: 'EUR' });
    await h.advanceClock(61);
    const expired = await h.request<QuoteDoc>(
      'GET',
      `/crypto/api/stores/exchange_rates/${stale.body.data.id}`,
      { headers: store.auth },
    );
    expect(expired.body.data.attributes.status).toBe('expired');
    const refused = await h.request<{ errors: { detail: string; source: { pointer: string } }[] }>(
      'POST',
      '/crypto/api/stores/orders',
      {
        headers: store.auth,
        json: orderDocument({ exchangeRateId: stale.body.data.id }),
      },
    );
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]?.detail).toMatch(/expired/);
    expect(refused.body.errors[0]?.source.pointer).toBe('/data/attributes/order/exchange_rate_id');
    const otherStore = await aStore(h);
    expect(
      (
        await h.request('GET', `/crypto/api/stores/exchange_rates/${stale.body.data.id}`, {
          headers: otherStore.auth,
        })
      ).status,
    ).toBe(404);
  });
});
