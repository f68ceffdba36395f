// xMoney's newer Node library (`xmoney` 1.1.0) against Tessera with only the host changed: its requests
// as its source makes them (test/harness/xmoney-node-wire.ts). Its hosted checkout signs with the whole
// secret key string, and its Transaction type reads fields beside the ones api-sdk reads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aMerchant, FUTURE_EXPIRY, hiddenFields, type TestMerchant } from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';
import {
  constructEvent,
  createHosted,
  libraryRequest,
  type NodeLibraryConfig,
} from '../harness/xmoney-node-wire.ts';

let h: Harness;
let receiver: WebhookReceiver;
let m: TestMerchant;
let lib: NodeLibraryConfig;

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  m = await aMerchant(h, { ipnUrl: receiver.url('/ipn') });
  lib = { secretKey: m.sites[0]?.secretKey ?? '', apiBase: `${h.baseUrl}/payments` };
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

describe('checkout.createHosted', () => {
  it('is accepted, signed with the whole secret key string, and pays', async () => {
    const siteId = m.sites[0]?.id;
    const form = createHosted(lib, {
      siteId,
      customer: {
        identifier: 'node-lib-buyer',
        firstName: 'John',
        lastName: 'Doe',
        country: 'RO',
        email: 'john.doe@example.com',
      },
      order: {
        orderId: 'node-lib-1',
        description: 'Order Description',
        type: 'purchase',
        amount: 21.94,
        currency: 'RON',
      },
      cardTransactionMode: 'authAndCapture',
      backUrl: receiver.url('/back'),
    });
    const page = await h.request('POST', '/', { form: form });
    expect(page.status).toBe(200);
    const paid = await h.request('POST', '/checkout/pay', {
      form: {
        ...hiddenFields(page.text),
        cardHolderName: 'John Doe',
        cardNumber: '4111111111111111',
        cardExpiryDate: FUTURE_EXPIRY,
        cardCvv: '123',
        cardHolderCountry: 'RO',
      },
    });
    expect(paid.status).toBe(200);
    // The IPN, read with webhooks.constructEvent.
    const [ipn] = await receiver.waitFor(1, (r) => r.path === '/ipn');
    const event = constructEvent<{ transactionStatus: string; externalOrderId: string; amount: number }>(
      lib,
      new URLSearchParams(ipn?.body).get('opensslResult') ?? '',
    );
    expect(event).toMatchObject({
      transactionStatus: 'complete-ok',
      externalOrderId: 'node-lib-1',
      amount: 21.94,
    });
  });

  it('still refuses a checksum made with anything else', async () => {
    const form = createHosted(
      { ...lib, secretKey: `${lib.secretKey}x` },
      {
        siteId: m.sites[0]?.id,
        customer: { identifier: 'x' },
        order: { orderId: 'node-lib-2', type: 'purchase', amount: 1, currency: 'EUR' },
        backUrl: receiver.url('/back'),
      },
    );
    const page = await h.request('POST', '/', { form });
    expect(page.status).toBe(401);
    expect(page.text).toContain('the checksum does not match');
  });
});

describe('transactions', () => {
  it('retrieve and list answer every field its Transaction type reads', async () => {
    const customer = await libraryRequest<{ id: number }>(lib, 'POST', '/customer', {
      data: {
        identifier: 'node-lib-customer',
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: 'Lovelace',
      },
    });
    expect(customer.status).toBe(201);
    const order = await libraryRequest<{ orderId: number; transactionId: number }>(lib, 'POST', '/order', {
      data: {
        amount: 42.5,
        currency: 'EUR',
        orderType: 'purchase',
        customerId: customer.body.data?.id,
        externalOrderId: 'node-lib-ext-7',
        description: 'Seven books',
        backUrl: 'https://shop.example/back',
        transactionMethod: 'card',
        cardTransactionMode: 'authAndCapture',
        cardNumber: '4111111111111111',
        cardExpiryDate: FUTURE_EXPIRY,
        cardCvv: '123',
        cardHolderName: 'Ada Lovelace',
        cardHolderCountry: 'GB',
      },
    });
    expect(order.status).toBe(201);
    const transactionId = order.body.data?.transactionId;
    const retrieved = await libraryRequest<Record<string, unknown>>(
      lib,
      'GET',
      `/transaction/${transactionId}`,
    );
    expect(retrieved.status).toBe(200);
    expect(retrieved.body.code).toBe(200);
    const expected = {
      id: transactionId,
      siteId: m.sites[0]?.id,
      externalOrderId: 'node-lib-ext-7',
      amount: 42.5,
      currency: 'EUR',
      description: 'Seven books',
      creationDate: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      cardType: 'visa',
      cardProvider: 'visa',
      cardHolderName: 'Ada Lovelace',
      cardNumber: '411111******1111',
      cardExpiryDate: FUTURE_EXPIRY,
      email: 'ada@example.com',
      backUrl: 'https://shop.example/back',
    };
    expect(retrieved.body.data).toMatchObject(expected);
    const listed = await libraryRequest<Record<string, unknown>[]>(lib, 'GET', '/transaction', {
      params: {
        orderId: order.body.data?.orderId ?? 0,
        page: 0,
        perPage: 10,
        transactionStatus: ['complete-ok'],
      },
    });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([expect.objectContaining(expected)]);
    expect(listed.body.pagination).toMatchObject({ totalItemCount: 1 });
    // A refund answers the refund transaction with the same facts of its order.
    const refunded = await libraryRequest<Record<string, unknown>>(
      lib,
      'DELETE',
      `/transaction/${transactionId}`,
      {
        data: { reason: 'customer-demand', amount: 2.5 },
      },
    );
    expect(refunded.status).toBe(200);
    expect(refunded.body.data).toMatchObject({ externalOrderId: 'node-lib-ext-7', email: 'ada@example.com' });
  });
});
