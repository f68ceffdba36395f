// POST /order and friends: a purchase with each test card (and the legacy amounts), soft decline then
// 3D Secure, a lost answer reconciled on the clock, wallets and network tokens, a credit, a split payment,
// every IPN decrypted, bad input named by field, cancel rules, lists, and merchant isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness, OWN_HARNESS_TIMEOUT_MS } from '../harness/harness.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';
import {
  aCustomer,
  aMerchant,
  anOrder,
  decryptIpns,
  FUTURE_EXPIRY,
  newCard,
  payments,
  type TestMerchant,
} from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let m: TestMerchant;
let customerId: number;

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  m = await aMerchant(h, { ipnUrl: receiver.url('/ipn'), sites: 2 });
  customerId = await aCustomer(h, m, { siteId: String(m.sites[0]?.id) });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

const site = () => String(m.sites[0]?.id);
const order = (fields: Record<string, string> = {}) =>
  payments(h, m, 'POST', '/order', anOrder(customerId, { siteId: site(), ...fields }));
const balance = async (siteId: number, currency = 'EUR') =>
  (
    await h.request<{ available: string }>(
      'GET',
      `/sandbox/payments/sites/${siteId}/balance?currency=${currency}`,
      {
        headers: { authorization: `Bearer ${h.adminToken}` },
      },
    )
  ).body.available;
const ipnsOf = async (orderId: number, count: number) => {
  const secret = m.sites[0]?.ipnSecret ?? '';
  await receiver.waitFor(count, (r) => {
    try {
      return decryptIpns({ received: [r] } as WebhookReceiver, secret)[0]?.orderId === orderId;
    } catch {
      return false;
    }
  });
  return decryptIpns(receiver, secret).filter((i) => i.orderId === orderId);
};

describe('a purchase with each test card', () => {
  it.each([
    ['4111111111111111', 'Visa'],
    ['5555555555554444', 'Mastercard'],
    ['378282246310005', 'American Express'],
  ])('approves %s (%s), captures and credits the site', async (cardNumber) => {
    const before = await balance(Number(site()));
    const res = await order({ ...newCard(cardNumber), externalCustomData: '{"cart":42}' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ code: 201, message: 'Created' });
    expect(res.body.data).toMatchObject({ is3d: 0, isRedirect: false, transactionStatus: 'complete-ok' });
    expect(res.body.data.redirect).toBeUndefined();
    expect(Number(await balance(Number(site()))) - Number(before)).toBeCloseTo(10.9, 2);
    const [ipn] = await ipnsOf(res.body.data.orderId, 1);
    expect(ipn).toMatchObject({
      status: 'complete-ok',
      transactionStatus: 'complete-ok',
      orderStatus: 'complete-ok',
      transactionId: res.body.data.transactionId,
      externalCustomData: '{"cart":42}',
      amount: 10.9,
      currency: 'EUR',
    });
  });

  it.each([
    ['4000000000000002', 810],
    ['4000000000009995', 811],
    ['4000000000000069', 812],
  ])(
    'declines %s with 402 and system code %i; the order and its failed transaction exist',
    async (cardNumber, code) => {
      const res = await order(newCard(cardNumber));
      expect(res.status).toBe(402);
      expect(res.body.data).toMatchObject({ orderId: expect.any(Number), transactionId: expect.any(Number) });
      expect(res.body.error?.[0]).toMatchObject({ code, type: 'Exception' });
      const read = await payments(h, m, 'GET', `/order/${res.body.data.orderId}`);
      expect(read.body.data.orderStatus).toBe('complete-failed');
      const [ipn] = await ipnsOf(res.body.data.orderId, 1);
      expect(ipn?.transactionStatus).toBe('complete-failed');
      expect(ipn?.errors?.[0]?.code).toBe(code);
    },
  );

  it('soft-declines 4000000000003238 with 839; the retry with isSoftDecline=yes goes through 3D Secure', async () => {
    const first = await order(newCard('4000000000003238'));
    expect(first.status).toBe(402);
    expect(first.body.error?.[0]?.code).toBe(839);
    // The client's retry, with the flag as a bracket key (PHP-style form body).
    const retry = await order({ ...newCard('4000000000003238'), 'transactionOption[isSoftDecline]': 'yes' });
    expect(retry.status).toBe(201);
    expect(retry.body.data).toMatchObject({ is3d: 1, isRedirect: true, transactionStatus: '3d-pending' });
    expect(retry.body.data.redirect).toMatchObject({
      formMethod: 'POST',
      params: { creq: expect.any(String) },
    });
  });

  it('asks for a challenge with 4000000000003220; approving it on the ACS completes the order', async () => {
    const res = await order({ ...newCard('4000000000003220'), backUrl: 'https://shop.example/back' });
    expect(res.body.data).toMatchObject({ is3d: 1, isRedirect: true, orderStatus: 'in-progress' });
    const { url, params } = res.body.data.redirect;
    expect(url).toBe(`${h.baseUrl}/acs/challenge`);
    const page = await h.request('POST', '/acs/challenge', { form: params });
    expect(page.text).toContain('10.90 EUR');
    const decided = await fetch(`${h.baseUrl}/acs/challenge/decide`, {
      method: 'POST',
      body: new URLSearchParams({ creq: params.creq, outcome: 'approve' }),
      redirect: 'manual',
    });
    expect(decided.status).toBe(303);
    // The ACS returns through Tessera, which sends the browser on to backUrl with the outcome.
    const back = await fetch(decided.headers.get('location') ?? '', { redirect: 'manual' });
    const location = new URL(back.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe('https://shop.example/back');
    expect(location.searchParams.get('transactionStatus')).toBe('complete-ok');
    const read = await payments(h, m, 'GET', `/transaction/${res.body.data.transactionId}`);
    expect(read.body.data).toMatchObject({ transactionStatus: 'complete-ok', is3d: 1 });
    const ipns = await ipnsOf(res.body.data.orderId, 2);
    expect(ipns.map((i) => i.transactionStatus).sort()).toEqual(['3d-pending', 'complete-ok']);
  });

  it('fails the payment when the cardholder fails the challenge, and when nobody answers in time', async () => {
    const failed = await order(newCard('4000000000003220'));
    await fetch(`${h.baseUrl}/acs/challenge/decide`, {
      method: 'POST',
      body: new URLSearchParams({ creq: failed.body.data.redirect.params.creq, outcome: 'fail' }),
      redirect: 'manual',
    });
    const read = await payments(h, m, 'GET', `/transaction/${failed.body.data.transactionId}`);
    expect(read.body.data).toMatchObject({ transactionStatus: 'complete-failed', errorCode: 813 });

    const abandoned = await order(newCard('4000000000003220'));
    await h.advanceClock(601);
    const late = await payments(h, m, 'GET', `/transaction/${abandoned.body.data.transactionId}`);
    expect(late.body.data).toMatchObject({ transactionStatus: 'complete-failed', errorCode: 813 });
  });

  it('approves 4000000000003063 frictionlessly: is3d 1, no redirect', async () => {
    const res = await order(newCard('4000000000003063'));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ is3d: 1, isRedirect: false, transactionStatus: 'complete-ok' });
  });

  it('loses the answer for 4000000000000119; reconciliation approves it a minute later', async () => {
    const res = await order(newCard('4000000000000119'));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ transactionStatus: 'start', orderStatus: 'in-progress' });
    const processed = await h.advanceClock(61);
    expect(processed.processed['card-network-reconciliation']).toBeGreaterThanOrEqual(1);
    const read = await payments(h, m, 'GET', `/transaction/${res.body.data.transactionId}`);
    expect(read.body.data.transactionStatus).toBe('complete-ok');
    const ipns = await ipnsOf(res.body.data.orderId, 2);
    expect(ipns.map((i) => i.transactionStatus).sort()).toEqual(['complete-ok', 'start']);
  });

  it.each([
    ['0.02', 811],
    ['0.05', 810],
    ['0.08', 814],
  ])('honours the legacy sandbox amount %s on an approving card (code %i)', async (amount, code) => {
    const res = await order({ amount });
    expect(res.status).toBe(402);
    expect(res.body.error?.[0]?.code).toBe(code);
  });
});

describe('other ways to pay', () => {
  it('accepts an encrypted wallet token (decrypted by the wallet rail) as authenticated', async () => {
    const token = await h.request<{ walletType: string; data: string }>(
      'POST',
      '/sandbox/payments/wallet-tokens',
      {
        headers: { authorization: `Bearer ${h.adminToken}` },
        json: { walletType: 'googlePay', cardNumber: '4000000000003220', expiryMonth: 12, expiryYear: 2031 },
      },
    );
    const res = await payments(h, m, 'POST', '/order', {
      amount: '5.00',
      currency: 'EUR',
      orderType: 'purchase',
      customerId: String(customerId),
      siteId: site(),
      'transactionOption[digitalWallet][walletType]': 'googlePay',
      'transactionOption[digitalWallet][data]': token.body.data,
    });
    // The wallet's cryptogram authenticates the cardholder: no challenge even on the challenge card.
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ is3d: 1, isRedirect: false, transactionStatus: 'complete-ok' });

    const tampered = await payments(h, m, 'POST', '/order', {
      ...anOrder(customerId, { siteId: site() }),
      transactionOption: JSON.stringify({ digitalWallet: { walletType: 'applePay', data: token.body.data } }),
    });
    expect(tampered.status).toBe(400);
    expect(tampered.body.error?.[0]?.field).toBe('transactionOption.digitalWallet.data');
  });

  it('accepts a decrypted wallet payload and a network token (spaces and dashes ignored)', async () => {
    const wallet = await order({
      digitalWalletType: 'applePay',
      digitalWalletCryptogram: 'AgAAAAAAAIR8CQrXcIhbQAAAAAA=',
      digitalWalletRawData: '{"paymentMethod":"card"}',
      cardCvv: '',
    });
    expect(wallet.status).toBe(201);
    const token = await payments(h, m, 'POST', '/order', {
      amount: '3.00',
      currency: 'EUR',
      orderType: 'purchase',
      customerId: String(customerId),
      siteId: site(),
      networkTokenType: 'VTS',
      networkToken: '4111 1111-1111 1111',
      cardExpiryDate: FUTURE_EXPIRY,
      networkTokenCryptogram: 'AAAAAA==',
    });
    expect(token.status).toBe(201);
  });

  it('accepts a JSON body as well as a form', async () => {
    const res = await h.request<{ data: { transactionId: number } }>('POST', '/payments/order', {
      headers: m.auth,
      json: { ...anOrder(customerId, { siteId: site() }), amount: 12.5, customerId, siteId: Number(site()) },
    });
    expect(res.status).toBe(201);
    const read = await payments(h, m, 'GET', `/transaction/${res.body.data.transactionId}`);
    expect(read.body.data.amount).toBe(12.5);
  });

  it('credits a card (OCT) from the site’s balance, and refuses one the balance does not cover', async () => {
    const before = Number(await balance(Number(site())));
    const credit = await order({ orderType: 'credit', amount: '2.00' });
    expect(credit.status).toBe(201);
    expect(credit.body.data.transactionStatus).toBe('complete-ok');
    const read = await payments(h, m, 'GET', `/transaction/${credit.body.data.transactionId}`);
    expect(read.body.data.transactionType).toBe('credit');
    expect(Number(await balance(Number(site())))).toBeCloseTo(before - 2, 2);

    const tooMuch = await order({ orderType: 'credit', amount: '100000.00' });
    expect(tooMuch.status).toBe(402);
    expect(tooMuch.body.error?.[0]?.code).toBe(820);
    expect(Number(await balance(Number(site())))).toBeCloseTo(before - 2, 2);
  });

  it('the sandbox balance names an unknown currency (400), never a 500', async () => {
    const res = await h.request<{ error: { field: string } }>(
      'GET',
      `/sandbox/payments/sites/${site()}/balance?currency=XQZ`,
      { headers: { authorization: `Bearer ${h.adminToken}` } },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.field).toBe('currency');
  });

  it('splits a payment across the merchant’s sites through the ledger', async () => {
    const [a, b] = m.sites.map((s) => s.id) as [number, number];
    const [beforeA, beforeB] = [Number(await balance(a)), Number(await balance(b))];
    const res = await order({
      amount: '10.00',
      'transactionOption[splitPayment][splitSchema][0][toSite]': String(a),
      'transactionOption[splitPayment][splitSchema][0][amount]': '7.50',
      'transactionOption[splitPayment][splitSchema][1][toSite]': String(b),
      'transactionOption[splitPayment][splitSchema][1][amount]': '2.50',
      'transactionOption[splitPayment][splitSchema][1][description]': 'marketplace fee',
    });
    expect(res.status).toBe(201);
    expect(Number(await balance(a))).toBeCloseTo(beforeA + 7.5, 2);
    expect(Number(await balance(b))).toBeCloseTo(beforeB + 2.5, 2);
    await expectLedgerInvariants(h);
  });
});

describe('bad input is a 400 naming the field, and writes nothing', () => {
  it.each([
    [{ cardNumber: '4111111111111112' }, 'cardNumber'],
    [{ cardExpiryDate: '01/20' }, 'cardExpiryDate'],
    [{ cardExpiryDate: '13/30' }, 'cardExpiryDate'],
    [{ cardCvv: '12' }, 'cardCvv'],
    [{ ...newCard('378282246310005'), cardCvv: '123' }, 'cardCvv'],
    [{ cardHolderCountry: 'US' }, 'cardHolderState'],
    [{ cardHolderName: '' }, 'cardHolderName'],
    [{ amount: '10.999' }, 'amount'],
    [{ amount: '-1' }, 'amount'],
    [{ amount: 'ten' }, 'amount'],
    [{ currency: 'EURO' }, 'currency'],
    [{ currency: 'XYZ' }, 'currency'],
    [{ orderType: 'gift' }, 'orderType'],
    [{ customerId: 'abc' }, 'customerId'],
    [{ siteId: '999999' }, 'siteId'],
    [{ orderType: 'recurring' }, 'intervalType'],
    [
      {
        orderType: 'recurring',
        intervalType: 'month',
        intervalValue: '1',
        firstBillDate: '2031-01-01T00:00:00+00:00',
      },
      'trialAmount',
    ],
    [
      { orderType: 'recurring', intervalType: 'month', intervalValue: '1', retryPayment: 'P1D,tomorrow' },
      'retryPayment',
    ],
    [{ orderType: 'credit', cardTransactionMode: 'authAndCapture' }, 'cardTransactionMode'],
    [{ cardId: '30001', networkTokenType: 'VTS', networkToken: '4111111111111111' }, 'networkTokenType'],
    [{ networkTransactionId: 'abc' }, 'networkTransactionDate'],
    [{ threeDSecureData: 'not base64 json' }, 'threeDSecureData'],
    [{ level3Data: '{oops' }, 'level3Data'],
    [{ digitalWalletType: 'googlePay' }, 'digitalWalletRawData'],
    [{ transactionMethod: 'wallet' }, 'transactionMethod'],
    [{ ip: '300.1.1.1' }, 'ip'],
    [{ backUrl: 'javascript:alert(1)' }, 'backUrl'],
    [
      {
        'transactionOption[splitPayment][splitSchema][0][toSite]': '2001',
        'transactionOption[splitPayment][splitSchema][0][amount]': '1.00',
      },
      'transactionOption.splitPayment.splitSchema',
    ],
  ])('%j → %s', async (fields, field) => {
    const before = await payments(h, m, 'GET', '/order?perPage=1');
    const res = await order(fields as Record<string, string>);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error?.[0]).toMatchObject({ type: 'Validation', field });
    const after = await payments(h, m, 'GET', '/order?perPage=1');
    expect(after.body.pagination?.totalItemCount).toBe(before.body.pagination?.totalItemCount);
  });

  it('a split to another merchant’s site is refused', async () => {
    const other = await aMerchant(h);
    const res = await order({
      amount: '1.00',
      'transactionOption[splitPayment][splitSchema][0][toSite]': String(other.sites[0]?.id),
      'transactionOption[splitPayment][splitSchema][0][amount]': '1.00',
    });
    expect(res.status).toBe(400);
    expect(res.body.error?.[0]?.field).toBe('transactionOption.splitPayment.splitSchema.0.toSite');
  });

  it('siteId is required when the merchant has several sites', async () => {
    const res = await payments(h, m, 'POST', '/order', anOrder(customerId));
    expect(res.status).toBe(400);
    expect(res.body.error?.[0]?.field).toBe('siteId');
  });
});

describe('cancel, read and list', () => {
  it('cancels an order without payments, refuses one with payments', async () => {
    const challenged = await order(newCard('4000000000003220'));
    // A pending challenge is a payment under way: the order cannot be canceled.
    const refused = await payments(h, m, 'DELETE', `/order/${challenged.body.data.orderId}`, {
      reason: 'customer-demand',
    });
    expect(refused.status).toBe(409);

    const declined = await order(newCard('4000000000000002'));
    const canceled = await h.request<{ data: { orderStatus: string } }>(
      'DELETE',
      `/payments/order/${declined.body.data.orderId}`,
      { headers: m.auth, json: { reason: 'customer-demand', message: 'changed their mind' } },
    );
    expect(canceled.status).toBe(200);
    expect(canceled.body.data.orderStatus).toBe('canceled');
    const again = await payments(h, m, 'DELETE', `/order/${declined.body.data.orderId}`);
    expect(again.status).toBe(409);

    const paid = await order();
    const refusedPaid = await payments(h, m, 'DELETE', `/order/${paid.body.data.orderId}`);
    expect(refusedPaid.status).toBe(409);
    expect(refusedPaid.body.error?.[0]?.message).toMatch(/refund/);
  });

  it('names bad cancel and rebill bodies', async () => {
    const declined = await order(newCard('4000000000000002'));
    const badReason = await payments(h, m, 'DELETE', `/order/${declined.body.data.orderId}`, {
      reason: 'whim',
    });
    expect(badReason.body.error?.[0]?.field).toBe('reason');
    const badFlag = await payments(h, m, 'DELETE', `/order/${declined.body.data.orderId}`, {
      terminateOrder: 'maybe',
    });
    expect(badFlag.body.error?.[0]?.field).toBe('terminateOrder');
    const noCustomer = await payments(h, m, 'PATCH', `/order-rebill/${declined.body.data.orderId}`, {
      amount: '1.00',
    });
    expect(noCustomer.body.error?.[0]?.field).toBe('customerId');
    expect((await payments(h, m, 'GET', `/order/${declined.body.data.orderId}`)).body.data.orderStatus).toBe(
      'complete-failed',
    );
  });

  it('lists orders with filters and the service’s pagination', async () => {
    const marked = await order({ externalOrderId: 'ext-list-1' });
    const byExternal = await payments(h, m, 'GET', '/order?externalOrderId=ext-list-1');
    expect(byExternal.body.data.map((o: { id: number }) => o.id)).toEqual([marked.body.data.orderId]);
    const page = await payments(
      h,
      m,
      'GET',
      '/order?perPage=2&page=2&reverseSorting=0&orderStatus=complete-ok',
    );
    expect(page.body.pagination).toMatchObject({
      currentPageNumber: 2,
      itemCountPerPage: 2,
      currentItemCount: 2,
    });
    const ids = page.body.data.map((o: { id: number }) => o.id);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    const failed = await payments(h, m, 'GET', '/order?orderStatus=complete-failed&orderType=purchase');
    expect(failed.body.data.every((o: { orderStatus: string }) => o.orderStatus === 'complete-failed')).toBe(
      true,
    );
    const bad = await payments(h, m, 'GET', '/order?orderStatus=nope');
    expect(bad.status).toBe(400);
    expect(bad.body.error?.[0]?.field).toBe('orderStatus');
  });
});

describe('authentication and isolation', () => {
  it('takes the key with or without Bearer; a missing, tampered or revoked key is 401', async () => {
    const bare = await h.request('GET', '/payments/order', { headers: { authorization: m.apiKey } });
    expect(bare.status).toBe(200);
    expect((await h.request('GET', '/payments/order')).status).toBe(401);
    const tampered = `${m.apiKey.slice(0, -2)}xx`;
    expect((await h.request('GET', '/payments/order', { headers: { authorization: tampered } })).status).toBe(
      401,
    );
    const other = await aMerchant(h);
    await h.admin('POST', `/merchants/${other.id}/api-keys/${other.apiKeyId}/revoke`);
    const revoked = await h.request<{ error: { code: number }[] }>('GET', '/payments/order', {
      headers: other.auth,
    });
    expect(revoked.status).toBe(401);
    expect(revoked.body.error[0]?.code).toBe(401);
  });

  it('another merchant’s orders, transactions and customers are 404', async () => {
    const mine = await order();
    const other = await aMerchant(h);
    for (const path of [
      `/order/${mine.body.data.orderId}`,
      `/transaction/${mine.body.data.transactionId}`,
      `/customer/${customerId}`,
    ]) {
      expect((await payments(h, other, 'GET', path)).status).toBe(404);
    }
    expect((await payments(h, other, 'DELETE', `/order/${mine.body.data.orderId}`)).status).toBe(404);
    expect(
      (await payments(h, other, 'PUT', `/transaction/${mine.body.data.transactionId}`, { amount: '1' }))
        .status,
    ).toBe(404);
    const foreignCustomer = await payments(h, other, 'POST', '/order', anOrder(customerId));
    expect(foreignCustomer.status).toBe(404);
    expect((await payments(h, other, 'GET', '/order')).body.pagination?.totalItemCount).toBe(0);
  });

  it(
    'keeps the card number out of the logs',
    async () => {
      const logged = await Harness.start({ captureLogs: true });
      try {
        const merchant = await aMerchant(logged);
        const customer = await aCustomer(logged, merchant);
        await payments(
          logged,
          merchant,
          'POST',
          '/order',
          anOrder(customer, { cardNumber: '5555555555554444' }),
        );
        expect(logged.logs.join('')).not.toContain('5555555555554444');
      } finally {
        await logged.close();
      }
    },
    OWN_HARNESS_TIMEOUT_MS,
  );
});
