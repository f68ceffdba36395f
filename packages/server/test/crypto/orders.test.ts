// Crypto orders through the real HTTP stack: create (the real service's body, orders_redirect), validation naming
// the field, list with cursors, retrieve with payments, exact/under/over/late payments on the chain
// simulator with confirmations on the sandbox clock, expiry, the ledger, and isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  anOrder,
  aStore,
  cryptoHooks,
  orderDocument,
  orderOf,
  pay,
  type TestStore,
} from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let store: TestStore;
let other: TestStore;

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  store = await aStore(h, { webhookUrl: receiver.url('/store') });
  other = await aStore(h);
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

const orders = '/crypto/api/stores/orders';
// biome-ignore lint/suspicious/noExplicitAny: the cases below spoil an untyped JSON document
type Doc = any;
const hooksFor = (orderId: string, count: number) => cryptoHooks(h, store, receiver, { orderId }, count);

describe('creating orders', () => {
  it('answers orders_redirect with the hosted payment URL, in JSON:API', async () => {
    const res = await h.request<{ data: { type: string; id: string; attributes: { redirect_url: string } } }>(
      'POST',
      orders,
      {
        headers: { ...store.auth, 'content-type': 'application/vnd.api+json' },
        body: JSON.stringify(orderDocument({ reference: 'order-1977', total: '1090.00' })),
      },
    );
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toContain('application/vnd.api+json');
    expect(res.body.data.type).toBe('orders_redirect');
    // Utrust's WooCommerce plugin reads the order's uuid from the redirect URL's query.
    expect(res.body.data.attributes.redirect_url).toMatch(
      new RegExp(`/crypto/pay/${res.body.data.id}\\?uuid=${res.body.data.id}$`),
    );
    expect(
      (
        await h.request(
          'GET',
          new URL(res.body.data.attributes.redirect_url).pathname +
            new URL(res.body.data.attributes.redirect_url).search,
        )
      ).status,
    ).toBe(200);
    const order = await orderOf(h, store, res.body.data.id);
    expect(order).toMatchObject({
      status: 'pending',
      reference: 'order-1977',
      total_amount: { currency: 'EUR', value: '1090.00' },
      amount_due: { value: '1090.00' },
      payment_uuid: null,
      refundable: false,
    });
  });

  it.each([
    ['reference', (d: Doc) => delete d.data.attributes.order.reference, '/data/attributes/order/reference'],
    [
      'total',
      (d: Doc) => (d.data.attributes.order.amount.total = '10.999'),
      '/data/attributes/order/amount/total',
    ],
    [
      'negative total',
      (d: Doc) => (d.data.attributes.order.amount.total = '-1'),
      '/data/attributes/order/amount/total',
    ],
    [
      'currency',
      (d: Doc) => (d.data.attributes.order.amount.currency = 'XYZ'),
      '/data/attributes/order/amount/currency',
    ],
    [
      'return_url',
      (d: Doc) => (d.data.attributes.order.return_urls.return_url = 'javascript:alert(1)'),
      '/data/attributes/order/return_urls/return_url',
    ],
    ['email', (d: Doc) => (d.data.attributes.customer.email = 'nope'), '/data/attributes/customer/email'],
    ['country', (d: Doc) => delete d.data.attributes.customer.country, '/data/attributes/customer/country'],
    [
      'detail',
      (d: Doc) => (d.data.attributes.order.amount.details = { subtotal: '10.00', tax: 'ten' }),
      '/data/attributes/order/amount/details/tax',
    ],
    [
      'expiry',
      (d: Doc) => (d.data.attributes.order.expires_at = '2000-01-01T00:00:00Z'),
      '/data/attributes/order/expires_at',
    ],
    [
      'quote',
      (d: Doc) => (d.data.attributes.order.exchange_rate_id = 'qte_nope'),
      '/data/attributes/order/exchange_rate_id',
    ],
  ])('refuses a bad %s with 400 naming the field', async (_name, spoil, pointer) => {
    const doc = orderDocument();
    spoil(doc);
    const before = await h.request<{ data: unknown[] }>('GET', orders, { headers: store.auth });
    const res = await h.request<{ code: number; errors: { detail: string; source?: { pointer: string } }[] }>(
      'POST',
      orders,
      {
        headers: store.auth,
        json: doc,
      },
    );
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(400);
    expect(res.body.errors[0]?.source?.pointer).toBe(pointer);
    const after = await h.request<{ data: unknown[] }>('GET', orders, { headers: store.auth });
    expect(after.body.data.length).toBe(before.body.data.length);
  });

  it('takes Utrust’s WooCommerce plugin’s order as sent: null details, a fee, a discount line, details that do not add up', async () => {
    const doc: Doc = orderDocument({ reference: 'wc-1201', total: '27.40' });
    doc.data.attributes.order.amount.details = {
      subtotal: '25.00',
      shipping: null,
      tax: '0.90',
      discount: null,
    };
    doc.data.attributes.order.line_items = [
      { sku: 'mug-1', name: 'Mug', price: '25.00', currency: 'EUR', quantity: 1 },
      { sku: 'fee', name: 'Gift wrap', price: '3.50', currency: 'EUR', quantity: 1 },
      { sku: 'discount', name: 'Discount', price: '-2.00', currency: 'EUR', quantity: 1 },
    ];
    const res = await h.request<{ data: { id: string } }>('POST', orders, { headers: store.auth, json: doc });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const order = (await orderOf(h, store, res.body.data.id)) as Doc;
    expect(order).toMatchObject({ total_amount: { value: '27.40' }, amount_due: { value: '27.40' } });
  });

  it('refuses a missing, wrong, revoked or other-mode key with 401 invalid_api_key', async () => {
    for (const authorization of [
      undefined,
      'Bearer u_test_AAAAAAAAAAAAAAAAAAAAAAAA',
      `Bearer ${store.key.replace('u_test_', 'u_live_')}`,
      store.key,
    ]) {
      const res = await h.request<{ message: string; errors: { detail: string }[] }>('GET', orders, {
        headers: authorization ? { authorization } : {},
      });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({
        code: 401,
        message: 'invalid_api_key',
        errors: [{ detail: 'invalid_api_key' }],
      });
    }
  });
});

describe('listing and retrieving', () => {
  it('pages newest first with cursor and limit, filters by status, and hides other stores’ orders', async () => {
    const s = await aStore(h);
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await anOrder(h, s)).id);
    const first = await h.request<{
      data: { id: string }[];
      meta: { next_cursor: string | null };
      links: { next: string | null };
    }>('GET', `${orders}?limit=2`, { headers: s.auth });
    expect(first.body.data.map((o) => o.id)).toEqual([ids[4], ids[3]]);
    const seen = [...first.body.data.map((o) => o.id)];
    let cursor = first.body.meta.next_cursor;
    while (cursor) {
      const page = await h.request<{ data: { id: string }[]; meta: { next_cursor: string | null } }>(
        'GET',
        `${orders}?limit=2&cursor=${cursor}`,
        { headers: s.auth },
      );
      seen.push(...page.body.data.map((o) => o.id));
      cursor = page.body.meta.next_cursor;
    }
    expect(seen).toEqual([...ids].reverse());
    const paid = await h.request<{ data: unknown[] }>('GET', `${orders}?status=paid`, { headers: s.auth });
    expect(paid.body.data).toEqual([]);
    expect((await h.request('GET', `${orders}?limit=101`, { headers: s.auth })).status).toBe(400);
    expect((await h.request('GET', `${orders}?cursor=bogus`, { headers: s.auth })).status).toBe(400);
    // Isolation: another store sees none of them, and a foreign id is a 404 like an unknown one.
    const foreign = await h.request<{ data: unknown[] }>('GET', orders, { headers: other.auth });
    expect(foreign.body.data).toEqual([]);
    expect((await h.request('GET', `${orders}/${ids[0]}`, { headers: other.auth })).status).toBe(404);
    expect(
      (await h.request('GET', `${orders}/00000000-0000-4000-8000-000000000000`, { headers: s.auth })).status,
    ).toBe(404);
    expect((await h.request('GET', `${orders}/not-a-uuid`, { headers: s.auth })).status).toBe(404);
  });
});

describe('payments on chain', () => {
  it('exact: detected with confirmations so far, then paid once confirmed; the ledger holds then posts', async () => {
    const order = await anOrder(h, store, { total: '10.90' });
    const sent = await pay(h, order.id);
    expect(sent.status).toBe(201);
    let o = await orderOf(h, store, order.id);
    expect(o.status).toBe('pending');
    expect(o.transfers).toMatchObject([
      { status: 'detected', confirmations: 0, confirmations_required: 12, late: false },
    ]);
    expect(o.amount_pending.value).toBe('10.90');
    expect(o.amount_due.value).toBe('0.00');
    await h.advanceClock(60); // 5 of 12 Ethereum blocks
    o = await orderOf(h, store, order.id);
    expect(o.transfers[0]?.confirmations).toBe(5);
    expect(o.status).toBe('pending');
    await h.advanceClock(84);
    o = await orderOf(h, store, order.id);
    expect(o).toMatchObject({
      status: 'paid',
      amount_paid: { value: '10.90' },
      amount_over: { value: '0.00' },
      refundable: true,
    });
    expect(o.payment_uuid).toMatch(/^[0-9a-f-]{36}$/);
    const withPayments = await h.request<{
      data: { relationships: { payments: { data: { id: string }[] } } };
      included: {
        id: string;
        attributes: {
          total_amount: { value: string };
          crypto_amount: { currency: string; blockchain: string; value: string };
          offramp: boolean;
          rate: string;
        };
      }[];
    }>('GET', `${orders}/${order.id}?include=payments`, { headers: store.auth });
    expect(withPayments.body.data.relationships.payments.data[0]?.id).toBe(o.payment_uuid);
    expect(withPayments.body.included[0]?.attributes).toMatchObject({
      total_amount: { value: '10.90' },
      crypto_amount: { currency: 'USDC', blockchain: 'ETH', value: sent.body.amount },
      offramp: false,
    });
    expect((await hooksFor(order.id, 2)).map((x) => [x.event_type, x.state])).toEqual([
      ['ORDER.PAYMENT.DETECTED', 'detected'],
      ['ORDER.PAYMENT.RECEIVED', 'completed'],
    ]);
    const balance = await h.services.db
      .selectFrom('ledger_balances')
      .select(['posted', 'pending_credits'])
      .where('owner_type', '=', 'crypto_store')
      .where('owner_id', '=', store.id)
      .where('asset', '=', 'USDC')
      .executeTakeFirstOrThrow();
    expect(balance.pending_credits).toBe('0');
    expect(BigInt(balance.posted)).toBeGreaterThanOrEqual(BigInt(sent.body.amount.replace('.', '')));
  });

  it('under: a partial payment stays pending with what is due, and the order expires with it recorded as a payment', async () => {
    const order = await anOrder(h, store, { total: '100.00' });
    await pay(h, order.id, { amount: '50' });
    await h.advanceClock(150);
    let o = await orderOf(h, store, order.id);
    expect(o.status).toBe('pending');
    expect(Number(o.amount_paid.value)).toBeGreaterThan(45);
    expect(Number(o.amount_due.value)).toBeGreaterThan(50);
    await h.advanceClock(15 * 60);
    o = await orderOf(h, store, order.id);
    expect(o.status).toBe('expired');
    expect(o.payment_uuid).not.toBeNull();
    expect(o.refundable).toBe(true);
    expect((await hooksFor(order.id, 3)).map((x) => x.event_type)).toEqual([
      'ORDER.PAYMENT.DETECTED',
      'ORDER.PAYMENT.PARTIAL',
      'ORDER.PAYMENT.CANCELLED',
    ]);
  });

  it('over: paid, with the excess shown; a late transfer after that is recorded, not lost', async () => {
    const order = await anOrder(h, store, { total: '20.00' });
    await pay(h, order.id, { amount: '30' });
    await h.advanceClock(150);
    let o = await orderOf(h, store, order.id);
    expect(o.status).toBe('paid');
    expect(Number(o.amount_over.value)).toBeGreaterThan(5);
    const late = await pay(h, order.id, { amount: '1' });
    expect(late.status).toBe(201);
    await h.advanceClock(150);
    o = await orderOf(h, store, order.id);
    expect(o.transfers.map((t) => t.late)).toEqual([false, true]);
    const included = await h.request<{ included: { attributes: { crypto_amount: { value: string } } }[] }>(
      'GET',
      `${orders}/${order.id}?include=payments`,
      { headers: store.auth },
    );
    expect(included.body.included[0]?.attributes.crypto_amount.value).toBe('31');
    expect((await hooksFor(order.id, 4)).map((x) => x.event_type)).toContain('ORDER.PAYMENT.LATE');
  });

  it('expires an unpaid order when its time is up, and then refuses a new payment option', async () => {
    const order = await anOrder(h, store);
    await h.advanceClock(15 * 60);
    const o = await orderOf(h, store, order.id);
    expect(o.status).toBe('expired');
    const refused = await pay(h, order.id);
    expect(refused.status).toBe(409);
    expect(await hooksFor(order.id, 1)).toMatchObject([
      { event_type: 'ORDER.PAYMENT.CANCELLED', state: 'cancelled', resource: { status: 'expired' } },
    ]);
  });

  it('a reorg (sandbox) reverts an unconfirmed transfer, the order owes it again; re-included, it confirms once', async () => {
    const order = await anOrder(h, store, { total: '10.90' });
    const sent = await pay(h, order.id);
    const hash = sent.body.transactionHash;
    const reorg = (transactionHash: string, json?: unknown) =>
      h.request<{ transactionHash: string; status: string }>(
        'POST',
        `/sandbox/crypto/transfers/${transactionHash}/reorg`,
        { headers: { authorization: `Bearer ${h.adminToken}` }, ...(json !== undefined ? { json } : {}) },
      );
    const dropped = await reorg(hash);
    expect(dropped.body).toEqual({ transactionHash: hash, status: 'reverted' });
    let o = await orderOf(h, store, order.id);
    expect(o).toMatchObject({
      status: 'pending',
      amount_pending: { value: '0.00' },
      amount_due: { value: '10.90' },
    });
    expect(o.transfers).toMatchObject([{ transaction_hash: hash, status: 'reverted', confirmations: 0 }]);
    // Only an unconfirmed incoming transfer can be dropped: not twice unless put back, never an unknown one.
    expect((await reorg(hash)).status).toBe(409);
    expect((await reorg('0xnot-a-transfer')).status).toBe(404);
    expect((await reorg(hash, { reinclude: 'yes' })).status).toBe(400);
    const back = await h.request('POST', `/sandbox/crypto/transfers/${hash}/reorg`, { json: {} });
    expect(back.status).toBe(401);
    await h.advanceClock(300);
    expect((await orderOf(h, store, order.id)).status).toBe('pending');
    // Dropped while pending and put back at once: confirmations start again, then the order is paid.
    const again = await pay(h, order.id);
    expect((await reorg(again.body.transactionHash, { reinclude: true })).body.status).toBe('pending');
    await h.advanceClock(144);
    o = await orderOf(h, store, order.id);
    expect(o.status).toBe('paid');
    expect((await reorg(again.body.transactionHash)).status).toBe(409);
    // Webhooks of one step may arrive in either order: the set of deliveries is what is checked.
    expect((await hooksFor(order.id, 6)).map((x) => `${x.event_type} ${x.state}`).sort()).toEqual([
      'ORDER.PAYMENT.DETECTED detected',
      'ORDER.PAYMENT.DETECTED detected',
      'ORDER.PAYMENT.DETECTED detected',
      'ORDER.PAYMENT.RECEIVED completed',
      'ORDER.PAYMENT.REVERTED reverted',
      'ORDER.PAYMENT.REVERTED reverted',
    ]);
  });

  it('sandbox pay refuses a pair the store does not accept or that does not exist', async () => {
    const s = await aStore(h, { currencies: [{ currency: 'BTC', network: 'BTC' }] });
    const order = await anOrder(h, s);
    expect((await pay(h, order.id, { currency: 'USDC', network: 'ETH' })).status).toBe(400);
    expect((await pay(h, order.id, { currency: 'BTC', network: 'SOL' })).status).toBe(400);
    const btc = await pay(h, order.id, { currency: 'BTC', network: 'BTC' });
    expect(btc.status).toBe(201);
    expect(btc.body.address).toMatch(/^tb1q/);
  });

  it('the buyer cancels only from the pay page itself: this origin, with the token bound to the order', async () => {
    const s = await aStore(h);
    const order = await anOrder(h, s);
    const other = await anOrder(h, s);
    const page = await h.request('GET', `/crypto/pay/${order.id}`);
    const token = /name="token" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
    const otherToken =
      /name="token" value="([^"]+)"/.exec((await h.request('GET', `/crypto/pay/${other.id}`)).text)?.[1] ??
      '';
    const cancel = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      h.request('POST', `/crypto/pay/${order.id}/cancel`, { form, headers });
    const refused = [
      await cancel({}),
      await cancel({ token: '' }),
      await cancel({ token: `${order.id}.forged` }),
      await cancel({ token: otherToken }),
      await cancel({ token }, { origin: 'https://evil.example' }),
      await cancel({ token }, { 'sec-fetch-site': 'cross-site' }),
      await cancel({ token }, { origin: 'null' }),
    ];
    for (const [i, res] of refused.entries()) {
      expect(res.status, String(i)).toBe(403);
      expect(res.text).toContain('role="alert"');
    }
    expect((await orderOf(h, s, order.id)).status).toBe('pending');
    // From the page itself (what a browser on this origin sends): canceled, and on to the store.
    const done = await fetch(`${h.baseUrl}/crypto/pay/${order.id}/cancel`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      body: new URLSearchParams({ token }).toString(),
    });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toMatch(/^https:\/\/shop\.example\//);
    expect((await orderOf(h, s, order.id)).status).toBe('canceled');
    expect((await orderOf(h, s, other.id)).status).toBe('pending');
  });

  it('the hosted page refuses an option the store does not accept, and knows no unknown order', async () => {
    const s = await aStore(h, { currencies: [{ currency: 'BTC', network: 'BTC' }] });
    const order = await anOrder(h, s);
    for (const option of ['USDC:ETH', 'DOGE:DOGE', 'nonsense']) {
      const res = await h.request('POST', `/crypto/pay/${order.id}/choose`, { form: { option } });
      expect(res.status, option).toBe(400);
      expect(res.text).toContain('role="alert"');
    }
    expect((await orderOf(h, s, order.id)).status).toBe('pending');
    expect((await h.request('GET', '/crypto/pay/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await h.request('GET', '/crypto/pay/not-an-id')).status).toBe(404);
    expect((await h.request('GET', '/crypto/refunds/not-a-token')).status).toBe(404);
    expect(
      (await h.request('POST', '/crypto/refunds/not-a-token/accept', { form: { address: 'x' } })).status,
    ).toBe(404);
  });
});
