// Defects the hardening review found in the payments API, each shown fixed: payment-link amounts and
// their backUrl, refund errors and split refunds, the IPN of a partial capture, one identifier rule for
// the checkout and the API, customers and cards bound to their site, one stored card per card, and a
// clock advance that bills every missed period once, in order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';
import {
  aCustomer,
  aMerchant,
  anOrder,
  decryptIpns,
  newCard,
  payments,
  type TestMerchant,
} from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let m: TestMerchant;
beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  m = await aMerchant(h, { ipnUrl: receiver.url('/ipn'), sites: 2 });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

const site = (i: number) => m.sites[i]?.id as number;
const balance = async (siteId: number) =>
  (
    await h.request<{ available: string }>('GET', `/sandbox/payments/sites/${siteId}/balance?currency=EUR`, {
      headers: { authorization: `Bearer ${h.adminToken}` },
    })
  ).body.available;

describe('payment links', () => {
  it('keep an amount’s value when the currency changes, and never exceed an order’s maximum', async () => {
    const link = await payments(h, m, 'POST', '/payment-link', {
      siteId: String(site(0)),
      amount: '10.50',
      currency: 'EUR',
    });
    const hash = link.body.data.hash;
    const usd = await payments(h, m, 'PUT', `/payment-link/${hash}`, { currency: 'USD' });
    expect(usd.status).toBe(200);
    expect((await payments(h, m, 'GET', `/payment-link/${hash}`)).body.data).toMatchObject({
      amount: 10.5,
      currency: 'USD',
    });
    const yen = await payments(h, m, 'PUT', `/payment-link/${hash}`, { currency: 'JPY' });
    expect(yen.status).toBe(400);
    expect(yen.body.error?.[0]?.field).toBe('amount');
    expect(
      (await payments(h, m, 'PUT', `/payment-link/${hash}`, { currency: 'JPY', amount: '1500' })).status,
    ).toBe(200);
    for (const body of [
      { siteId: String(site(0)), amount: '1000000000.01', currency: 'EUR' },
      { siteId: String(site(0)), amount: '1000000001', currency: 'JPY' },
    ]) {
      const over = await payments(h, m, 'POST', '/payment-link', body);
      expect(over.status).toBe(400);
      expect(over.body.error?.[0]?.field).toBe('amount');
    }
    const overOnUpdate = await payments(h, m, 'PUT', `/payment-link/${hash}`, { amount: '1000000001' });
    expect(overOnUpdate.status).toBe(400);
  });

  it('send the buyer back to their backUrl with the outcome, and offer the way back before paying', async () => {
    const link = await payments(h, m, 'POST', '/payment-link', {
      siteId: String(site(0)),
      amount: '3.00',
      currency: 'EUR',
      backUrl: 'https://shop.example/thanks?cart=7',
    });
    const hash = link.body.data.hash;
    const checkout = await h.request('GET', `/pay/${hash}`);
    expect(checkout.text).toContain('href="https://shop.example/thanks?cart=7"');
    const paid = await fetch(`${h.baseUrl}/pay/${hash}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: 'a+b@example.com', ...newCard() }).toString(),
    });
    expect(paid.status).toBe(303);
    const result = await fetch(`${h.baseUrl}${paid.headers.get('location')}`, { redirect: 'manual' });
    expect(result.status).toBe(303);
    const back = new URL(result.headers.get('location') ?? '');
    expect(back.origin + back.pathname).toBe('https://shop.example/thanks');
    expect(back.searchParams.get('cart')).toBe('7');
    expect(back.searchParams.get('transactionStatus')).toBe('complete-ok');
    expect(Number(back.searchParams.get('orderId'))).toBeGreaterThan(0);
  });
});

describe('the hosted checkout and the API share one identifier rule', () => {
  it('a buyer whose email the rule refuses gets a valid, stable identifier, the same customer twice', async () => {
    const customers = await payments(h, m, 'GET', `/customer?email=${encodeURIComponent('a+b@example.com')}`);
    expect(customers.body.data).toHaveLength(1);
    const { id, identifier } = customers.body.data[0];
    expect(identifier).toMatch(/^[\p{L}\p{N}\-_.@ ]{1,92}$/u);
    // Everything the checkout stored, the API accepts back as it is.
    expect((await payments(h, m, 'PUT', `/customer/${id}`, { identifier })).status).toBe(200);
    expect(
      (await payments(h, m, 'POST', '/customer', { siteId: String(site(0)), identifier: 'a+b@example.com' }))
        .status,
    ).toBe(400);
  });
});

describe('refunds', () => {
  it('say what is left in decimals, not minor units', async () => {
    const customerId = await aCustomer(h, m, { siteId: String(site(0)) });
    const order = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, { siteId: String(site(0)), amount: '12.00' }),
    );
    const over = await payments(h, m, 'DELETE', `/transaction/${order.body.data.transactionId}`, {
      amount: '12.01',
    });
    expect(over.status).toBe(400);
    expect(over.body.error?.[0]?.message).toContain('12.00 EUR');
    expect(over.body.data).toEqual({ refundable: '12.00', currency: 'EUR' });
  });

  it('of a split payment take from each site what it received, in proportion', async () => {
    const customerId = await aCustomer(h, m, { siteId: String(site(0)) });
    const [a, b] = [site(0), site(1)];
    const order = await payments(h, m, 'POST', '/order', {
      ...anOrder(customerId, { siteId: String(a), amount: '10.00' }),
      'transactionOption[splitPayment][splitSchema][0][toSite]': String(a),
      'transactionOption[splitPayment][splitSchema][0][amount]': '7.50',
      'transactionOption[splitPayment][splitSchema][1][toSite]': String(b),
      'transactionOption[splitPayment][splitSchema][1][amount]': '2.50',
    });
    expect(order.status).toBe(201);
    const [beforeA, beforeB] = [Number(await balance(a)), Number(await balance(b))];
    const refunded = await payments(h, m, 'DELETE', `/transaction/${order.body.data.transactionId}`, {
      amount: '4.00',
    });
    expect(refunded.status).toBe(200);
    expect(Number(await balance(a))).toBeCloseTo(beforeA - 3, 2);
    expect(Number(await balance(b))).toBeCloseTo(beforeB - 1, 2);
    await expectLedgerInvariants(h);
  });
});

describe('the IPN of a partial capture', () => {
  it('reports the amount captured', async () => {
    const customerId = await aCustomer(h, m, { siteId: String(site(0)) });
    const order = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, { siteId: String(site(0)), amount: '50.00', cardTransactionMode: 'auth' }),
    );
    const transactionId = order.body.data.transactionId;
    expect((await payments(h, m, 'PUT', `/transaction/${transactionId}`, { amount: '20.00' })).status).toBe(
      200,
    );
    await expect
      .poll(() =>
        decryptIpns(receiver, m.sites[0]?.ipnSecret ?? '').find(
          (i) => i.transactionId === transactionId && i.transactionStatus === 'complete-ok',
        ),
      )
      .toMatchObject({ amount: 20 });
  });
});

describe('customers and cards belong to their site', () => {
  it('an order on one site cannot use a customer of another site of the same merchant (404)', async () => {
    const other = await aCustomer(h, m, { siteId: String(site(1)) });
    const res = await payments(h, m, 'POST', '/order', anOrder(other, { siteId: String(site(0)) }));
    expect(res.status).toBe(404);
    expect(res.body.error?.[0]?.field).toBe('customerId');
  });

  it('saving one card twice keeps one stored card, with the newer expiry', async () => {
    const customerId = await aCustomer(h, m, { siteId: String(site(0)) });
    for (const expiry of ['12/30', '11/31']) {
      const res = await payments(
        h,
        m,
        'POST',
        '/order',
        anOrder(customerId, { siteId: String(site(0)), saveCard: 'yes', cardExpiryDate: expiry }),
      );
      expect(res.status).toBe(201);
    }
    const cards = await payments(h, m, 'GET', `/card?customerId=${customerId}`);
    expect(cards.body.data).toHaveLength(1);
    expect(cards.body.data[0]).toMatchObject({ expiryMonth: '11', expiryYear: '2031' });
  });
});

describe('recurring billing over a long clock advance', () => {
  it('bills every missed period once, in order, with its IPN, and retries a failed one at its time', async () => {
    const customerId = await aCustomer(h, m, { siteId: String(site(0)) });
    const card = '5555555555554444';
    const order = await payments(h, m, 'POST', '/order', {
      ...anOrder(customerId, { siteId: String(site(0)), amount: '4.00', ...newCard(card) }),
      orderType: 'recurring',
      intervalType: 'day',
      intervalValue: '7',
      retryPayment: 'PT6H',
    });
    expect(order.status).toBe(201);
    const orderId = order.body.data.orderId;
    // The second bill fails once; its retry, six hours later, goes through.
    await h.request('POST', '/sandbox/payments/cards/script', {
      headers: { authorization: `Bearer ${h.adminToken}` },
      json: { cardNumber: card, outcomes: ['approve', 'insufficient_funds'] },
    });
    await h.advanceClock(4 * 7 * 24 * 3600 + 60);
    const deposits = await payments(
      h,
      m,
      'GET',
      `/transaction?orderId=${orderId}&transactionType=deposit&reverseSorting=0`,
    );
    const outcomes = deposits.body.data.map((t: { transactionStatus: string }) => t.transactionStatus);
    // The first charge, then weeks 1 to 4: week 2 failed, then its retry succeeded.
    expect(outcomes).toEqual([
      'complete-ok',
      'complete-ok',
      'complete-failed',
      'complete-ok',
      'complete-ok',
      'complete-ok',
    ]);
    const times = deposits.body.data.map((t: { creationTimestamp: number }) => t.creationTimestamp);
    expect([...times].sort((x, y) => x - y)).toEqual(times);
    expect(times[3] - times[2]).toBe(6 * 3600);
    await expect
      .poll(
        () =>
          decryptIpns(receiver, m.sites[0]?.ipnSecret ?? '').filter(
            (i) => i.orderId === orderId && i.transactionType === 'deposit',
          ).length,
      )
      .toBeGreaterThanOrEqual(6);
  });
});
