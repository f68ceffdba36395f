// xMoney's WooCommerce plugin against Tessera's hosted checkout: the exact JSON its two processors write
// (test/harness/woocommerce-wire.ts) — a guest's purchase and a subscription with a sign-up fee — posted
// as the plugin posts it, paid, and the IPN decrypted as the plugin's notify helper does. The plugin's
// JSON carries the customer's identifier as a number and every field it has no value for as "".
import { decryptIpn } from '@tessera/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aMerchant, payOnCardPage, type TestMerchant } from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';
import { pluginForm, purchaseJson, type ShopOrder, subscriptionJson } from '../harness/woocommerce-wire.ts';
import { keyOf } from '../harness/xmoney-sdk-wire.ts';

let h: Harness;
let receiver: WebhookReceiver;
let m: TestMerchant;
let key: string;
let siteId: number;

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  m = await aMerchant(h, { ipnUrl: receiver.url('/ipn') });
  siteId = m.sites[0]?.id ?? 0;
  key = keyOf(m.sites[0]?.secretKey ?? '');
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

const BACK_URL = 'https://shop.example/xmoney-payments-confirmation/?secure_key=5f1d0c2e9a';

const guestOrder = (orderId: number): ShopOrder => ({
  siteId: String(siteId),
  orderId,
  customerId: 0,
  billing: {
    firstName: '',
    lastName: 'Popescu',
    country: 'RO',
    city: '',
    address: '',
    postcode: '400001',
    phone: '',
    email: 'ioana@example.com',
  },
  currency: 'RON',
  total: '51.00',
  backUrl: BACK_URL,
});

/** The shopper's browser: the plugin's form to the checkout host (?lang=ro), then a card. */
async function payAsThePluginDoes(json: string) {
  const page = await h.request('POST', '/?lang=ro', { form: pluginForm(json, key) });
  expect(page.status, page.text).toBe(200);
  const paid = await payOnCardPage(h, page.text, { name: 'Ioana Popescu', country: 'RO' });
  expect(paid.status).toBe(200);
  expect(paid.text).toContain(`action="${BACK_URL.replace(/&/g, '&amp;')}"`);
}

async function ipnFor(externalOrderId: string) {
  const ipns = await receiver.waitFor(1, (r) => {
    const result = new URLSearchParams(r.body).get('opensslResult');
    return (
      result !== null &&
      decryptIpn<{ externalOrderId: string }>(result, key).externalOrderId === externalOrderId
    );
  });
  return decryptIpn<Record<string, unknown>>(
    new URLSearchParams(ipns[0]?.body).get('opensslResult') ?? '',
    key,
  );
}

describe('the WooCommerce plugin', () => {
  it('writes the purchase JSON byte for byte as its main processor does', () => {
    expect(purchaseJson(guestOrder(1234), [{ name: 'Carte / ediție', quantity: 2, subtotal: '51.00' }])).toBe(
      `{"siteId":"${siteId}","customer":{"identifier":1234,"firstName":"","lastName":"Popescu","country":"RO","city":"","address":"","zipCode":"400001","phone":"","email":"ioana@example.com"},"order":{"orderId":"1234","type":"purchase","amount":"51.00","currency":"RON","items":[{"item":"Carte \\/ edi\\u021bie","units":2,"unitPrice":"25.50"}]},"cardTransactionMode":"authAndCapture","invoiceEmail":"","backUrl":"https:\\/\\/shop.example\\/xmoney-payments-confirmation\\/?secure_key=5f1d0c2e9a"}`,
    );
  });

  it('a guest’s purchase: numeric identifier, empty fields absent, paid, the IPN decrypted', async () => {
    await payAsThePluginDoes(
      purchaseJson(guestOrder(1234), [{ name: 'Carte / ediție', quantity: 2, subtotal: '51.00' }]),
    );
    const ipn = await ipnFor('1234');
    expect(ipn).toMatchObject({
      transactionStatus: 'complete-ok',
      externalOrderId: '1234',
      identifier: '1234',
      amount: 51,
      currency: 'RON',
    });
    const customers = await h.request<{ data: Record<string, unknown>[] }>(
      'GET',
      '/payments/customer?identifier=1234',
      {
        headers: m.auth,
      },
    );
    expect(customers.body.data[0]).toMatchObject({
      identifier: '1234',
      lastName: 'Popescu',
      email: 'ioana@example.com',
    });
    expect(customers.body.data[0]?.firstName ?? null).toBeNull();
  });

  it('a subscription with a sign-up fee: the fee now, the plan from the trial’s end', async () => {
    const trialEnds = new Date(Date.now() + 14 * 86_400_000).toISOString().slice(0, 10);
    const order = { ...guestOrder(1300), customerId: 17, total: '29.99' };
    const json = subscriptionJson(order, {
      product: 'Revista lunară',
      period: 'month',
      interval: '1',
      signUpFee: '5',
      trialEnds,
    });
    expect(json).toContain(
      `"order":{"orderId":"1300","type":"recurring","amount":"29.99","currency":"RON","intervalType":"month","intervalValue":"1","description":"1 month subscription Revista lunar\\u0103","trialAmount":"5","firstBillDate":"${trialEnds}"}`,
    );
    await payAsThePluginDoes(json);
    const ipn = await ipnFor('1300');
    expect(ipn).toMatchObject({ transactionStatus: 'complete-ok', identifier: '17', amount: 5 });
    const orders = await h.request<{ data: Record<string, unknown>[] }>(
      'GET',
      '/payments/order?externalOrderId=1300',
      {
        headers: m.auth,
      },
    );
    expect(orders.body.data[0]).toMatchObject({
      orderType: 'recurring',
      intervalType: 'month',
      intervalValue: 1,
    });
    expect(String(orders.body.data[0]?.nextDueDate)).toContain(trialEnds);
  });

  it('refuses a firstBillDate in the past before the card page, naming it, and makes nothing', async () => {
    const json = subscriptionJson(guestOrder(1400), {
      product: 'Plan',
      period: 'week',
      interval: '1',
      signUpFee: '5',
      trialEnds: '2020-01-01',
    });
    const page = await h.request('POST', '/?lang=en', { form: pluginForm(json, key) });
    expect(page.status).toBe(400);
    expect(page.text).toContain('firstBillDate must be in the future');
    expect(page.text).not.toContain('name="cardNumber"');
    const orders = await h.request<{ data: unknown[] }>('GET', '/payments/order?externalOrderId=1400', {
      headers: m.auth,
    });
    expect(orders.body.data).toEqual([]);
  });

  it('refuses a firstBillDate that is not a date before the card page, naming it', async () => {
    const json = subscriptionJson(guestOrder(1401), {
      product: 'Plan',
      period: 'week',
      interval: '1',
      signUpFee: '5',
      trialEnds: 'next tuesday',
    });
    const page = await h.request('POST', '/?lang=en', { form: pluginForm(json, key) });
    expect(page.status).toBe(400);
    expect(page.text).toContain('firstBillDate must be a date such as 2026-12-31');
    expect(page.text).not.toContain('name="cardNumber"');
  });

  it('still refuses what is wrong, empty or not: a bad email, an empty identifier, an empty orderId', async () => {
    type Form = { customer: Record<string, unknown>; order: Record<string, unknown> };
    const cases: [string, (j: Form) => void][] = [
      ['customer.email', (j) => Object.assign(j.customer, { email: 'not-an-email' })],
      ['customer.identifier', (j) => Object.assign(j.customer, { identifier: '' })],
      ['order.orderId', (j) => Object.assign(j.order, { orderId: '' })],
    ];
    for (const [field, change] of cases) {
      const j = JSON.parse(purchaseJson(guestOrder(1500), [])) as Form;
      change(j);
      const page = await h.request('POST', '/', { form: pluginForm(JSON.stringify(j), key) });
      expect(page.status, field).toBe(400);
      expect(page.text, field).toContain(field);
    }
  });
});
