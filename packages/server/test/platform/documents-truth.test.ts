// The OpenAPI documents tell the truth (the SDK is generated from them): real exchanges of each API —
// creations, keyed writes and their replays, a key reused with another body, refusals — are recorded as
// the client saw them and held to the document served beside them: the operation exists, the status is
// one it lists, the media type is one it lists, the body validates against the schema (Ajv, JSON Schema
// 2020-12 as OpenAPI 3.1 uses it) and the headers it declares are there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aStore, orderDocument } from '../harness/crypto-builders.ts';
import { DocumentCheck, documentsOf, type Exchange } from '../harness/document-check.ts';
import { type ApiResponse, Harness, type RequestOptions } from '../harness/harness.ts';
import { aCustomer as aCardholderCustomer, anAccount } from '../harness/issuing-builders.ts';
import { aCustomer, aMerchant, anOrder, payments } from '../harness/payments-builders.ts';

let h: Harness;
const exchanges: Exchange[] = [];

beforeAll(async () => {
  h = await Harness.start();
  const request = h.request.bind(h);
  h.request = async <T>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>> => {
    const answer = await request<T>(method, path, options);
    exchanges.push({ method, path, status: answer.status, headers: answer.headers, text: answer.text });
    return answer;
  };
});
afterAll(() => h.close());

const keyed = (key: string) => ({ 'idempotency-key': key });

describe('the documents against real exchanges', () => {
  it('payments: customer, order, replay, a reused key, capture, refund, refusals', async () => {
    const m = await aMerchant(h);
    const customerId = await aCustomer(h, m);
    const order = anOrder(customerId, { cardTransactionMode: 'auth' });
    const headers = { ...m.auth, ...keyed(`truth-order-${customerId}`) };
    const created = await h.request<{ data: { transactionId: number } }>('POST', '/payments/order', {
      headers,
      form: order,
    });
    expect(created.status).toBe(201);
    expect(
      (await h.request('POST', '/payments/order', { headers, form: order })).headers.get(
        'idempotency-replayed',
      ),
    ).toBe('true');
    expect(
      (await h.request('POST', '/payments/order', { headers, form: { ...order, amount: '11.00' } })).status,
    ).toBe(422);
    const id = created.body.data.transactionId;
    expect((await payments(h, m, 'PUT', `/transaction/${id}`, { amount: '10.90' })).status).toBe(200);
    expect(
      (
        await payments(h, m, 'DELETE', `/transaction/${id}`, {
          reason: 'customer-demand',
          message: 'x',
          amount: '1.00',
        })
      ).status,
    ).toBe(200);
    await payments(h, m, 'GET', `/transaction/${id}`);
    await payments(h, m, 'GET', '/order?perPage=5');
    expect((await payments(h, m, 'GET', '/order/999999')).status).toBe(404);
    expect((await payments(h, m, 'POST', '/order', { ...order, amount: 'ten' })).status).toBe(400);
    expect(
      (await h.request('GET', '/payments/order', { headers: { authorization: 'Bearer nope' } })).status,
    ).toBe(401);
  });

  it('crypto: session, order, replay, a reused key, reads, refusals', async () => {
    const store = await aStore(h, { currencies: [{ currency: 'USDC', network: 'ETH' }] });
    const document = orderDocument({ reference: 'truth-1' });
    const headers = { ...store.auth, ...keyed('truth-crypto-1') };
    const created = await h.request<{ data: { id: string } }>('POST', '/crypto/api/stores/orders', {
      headers,
      json: document,
    });
    expect(created.status).toBe(201);
    expect((await h.request('POST', '/crypto/api/stores/orders', { headers, json: document })).status).toBe(
      201,
    );
    expect(
      (
        await h.request('POST', '/crypto/api/stores/orders', {
          headers,
          json: orderDocument({ reference: 'truth-2' }),
        })
      ).status,
    ).toBe(422);
    await h.request('GET', `/crypto/api/stores/orders/${created.body.data.id}`, { headers: store.auth });
    await h.request('GET', '/crypto/api/stores/events', { headers: store.auth });
    expect(
      (
        await h.request('GET', '/crypto/api/stores/orders/00000000-0000-4000-8000-000000000000', {
          headers: store.auth,
        })
      ).status,
    ).toBe(404);
    expect(
      (await h.request('POST', '/crypto/api/stores/orders', { headers: store.auth, json: { data: {} } }))
        .status,
    ).toBe(400);
  });

  it('issuing: register, login, account, topup, reads, refusals', async () => {
    const partner = await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Truth' } });
    const customer = await aCardholderCustomer(h, partner.body.apiKey);
    const accountId = await anAccount(h, customer.auth);
    const topup = { accountId, amount: '20.00' };
    const headers = { ...customer.auth, accept: 'application/json', ...keyed(`truth-topup-${accountId}`) };
    expect((await h.request('POST', '/issuing/v1/topups/fiat', { headers, json: topup })).status).toBe(201);
    expect(
      (await h.request('POST', '/issuing/v1/topups/fiat', { headers, json: topup })).headers.get(
        'idempotency-replayed',
      ),
    ).toBe('true');
    expect(
      (await h.request('POST', '/issuing/v1/topups/fiat', { headers, json: { ...topup, amount: '21.00' } }))
        .status,
    ).toBe(422);
    await h.request('GET', '/issuing/v1/accounts', { headers: customer.auth });
    await h.request('GET', '/issuing/v1/cards', { headers: customer.auth });
    expect(
      (
        await h.request(
          'GET',
          '/issuing/v1/accounts/00000000-0000-4000-8000-000000000000/statement?month=2026-01',
          { headers: customer.auth },
        )
      ).status,
    ).toBe(404);
    expect(
      (await h.request('POST', '/issuing/v1/accounts', { headers: customer.auth, json: { currency: 'XXX' } }))
        .status,
    ).toBe(400);
  });

  it('every recorded exchange is one its document describes', async () => {
    expect(exchanges.length).toBeGreaterThan(30);
    const check = new DocumentCheck(await documentsOf(h.baseUrl));
    expect(exchanges.flatMap((exchange) => check.problemsOf(exchange))).toEqual([]);
    // bodies were held to their schemas, not only statuses and media types
    expect(check.schemasUsed).toBeGreaterThan(20);
  });
});
