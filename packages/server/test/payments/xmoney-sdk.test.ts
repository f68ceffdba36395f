// xMoney's Node SDK against Tessera with only the host changed: every method's requests, byte for byte
// as its source makes them (test/harness/xmoney-sdk-wire.ts), its site keys, and the hosted checkout
// form it builds, paid over plain HTTP here (in Chromium in test/browser/xmoney-checkout.test.ts).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import {
  aCustomer,
  aMerchant,
  anOrder,
  FUTURE_EXPIRY,
  hiddenFields,
  newCard,
  payments,
  type TestMerchant,
} from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';
import {
  type CheckoutInput,
  decryptOrderResponse,
  initializeCardSave,
  initializeCheckout,
  keyOf,
  qsForm,
  type SdkConfig,
  type SignedCheckout,
  sdkRequest,
} from '../harness/xmoney-sdk-wire.ts';

let h: Harness;
let receiver: WebhookReceiver;
let m: TestMerchant;
let sdk: SdkConfig;

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  m = await aMerchant(h, { ipnUrl: receiver.url('/ipn') });
  const site = m.sites[0];
  if (!site) throw new Error('no site');
  sdk = {
    secretKey: site.secretKey,
    publicKey: site.publicKey,
    apiBase: `${h.baseUrl}/payments`,
    checkoutHost: h.baseUrl,
  };
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

interface Result {
  transactionStatus: string;
  orderId: number;
  externalOrderId: string;
  transactionId: number;
  transactionMethod: string;
  customerId: number;
  identifier: string;
  amount: number;
  currency: string;
  customData: unknown;
  customFields: unknown;
  timestamp: number;
  cardId: number | null;
}

/** The buyer's browser, without the browser: post the form, then the card page's form with a card. */
async function payThroughCheckout(signed: SignedCheckout, card: Record<string, string>) {
  const page = await h.request('POST', '/', {
    form: { jsonRequest: signed.payload, checksum: signed.checksum },
  });
  expect(page.status).toBe(200);
  const fields = hiddenFields(page.text);
  expect(fields).toMatchObject({ jsonRequest: signed.payload, checksum: signed.checksum, mode: 'hosted' });
  return h.request('POST', '/checkout/pay', { form: { ...fields, ...card } });
}

const theCard = {
  cardHolderName: 'Ada Lovelace',
  cardNumber: '4111 1111 1111 1111',
  cardExpiryDate: FUTURE_EXPIRY,
  cardCvv: '123',
  cardHolderCountry: 'RO',
};

const aCheckout = (orderId: string, extra: Partial<CheckoutInput> = {}): CheckoutInput => ({
  publicKey: sdk.publicKey,
  cardTransactionMode: 'authAndCapture',
  invoiceEmail: 'ada@example.com',
  backUrl: receiver.url('/back'),
  customData: JSON.stringify({ cart: '42' }),
  customer: {
    identifier: `shop-user-${orderId}`,
    firstName: 'Ada',
    lastName: 'Lovelace',
    country: 'RO',
    city: 'Cluj',
    email: 'ada@example.com',
  },
  order: { orderId, type: 'purchase', amount: 25.5, currency: 'EUR', description: `Order ${orderId}` },
  ...extra,
});

describe('site keys', () => {
  it('each site has sk_test_<32 characters> and pk_test_<siteId>, shown once', async () => {
    const site = m.sites[0];
    expect(site?.secretKey).toMatch(/^sk_test_[A-Za-z0-9]{32}$/);
    expect(site?.publicKey).toBe(`pk_test_${site?.id}`);
    expect(site?.ipnSecret).toBe(keyOf(site?.secretKey ?? ''));
    const read = await h.admin<{ sites: Record<string, unknown>[] }>('GET', `/merchants/${m.id}`);
    expect(read.body.sites[0]).toMatchObject({ publicKey: site?.publicKey });
    expect(JSON.stringify(read.body)).not.toContain(keyOf(site?.secretKey ?? ''));
  });

  it('the key is a Bearer credential (alone or prefixed), the JWT stays valid, another environment’s prefix is not', async () => {
    const get = (authorization: string) =>
      h.request('GET', '/payments/order', { headers: { authorization } });
    expect((await get(`Bearer ${keyOf(sdk.secretKey)}`)).status).toBe(200);
    expect((await get(`Bearer ${sdk.secretKey}`)).status).toBe(200);
    expect((await get(`Bearer ${m.apiKey}`)).status).toBe(200);
    expect((await get(`Bearer ${sdk.secretKey.replace('sk_test_', 'sk_live_')}`)).status).toBe(401);
    expect(
      (await get(`Bearer ${keyOf(sdk.secretKey).replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'))}`)).status,
    ).toBe(401);
  });

  it('a site key acts for its site only: creates there, reads only there', async () => {
    const two = await aMerchant(h, { sites: 2 });
    const [first, second] = two.sites;
    const asSecond = { authorization: `Bearer ${keyOf(second?.secretKey ?? '')}` };
    const customer = await h.request<{ data: { id: number } }>('POST', '/payments/customer', {
      headers: asSecond,
      form: { identifier: 'only-site-two', email: 'x@example.com' },
    });
    expect(customer.status).toBe(201);
    const read = await h.request<{ data: { siteId: number } }>(
      'GET',
      `/payments/customer/${customer.body.data.id}`,
      {
        headers: asSecond,
      },
    );
    expect(read.body.data.siteId).toBe(second?.id);
    const elsewhere = await h.request('POST', '/payments/customer', {
      headers: { authorization: `Bearer ${keyOf(second?.secretKey ?? '')}` },
      form: { identifier: 'not-site-one', siteId: String(first?.id) },
    });
    expect(elsewhere.status).toBe(400);
    // Nor does it read the other site's objects: they are not found, and not listed.
    const asFirst = { authorization: `Bearer ${keyOf(first?.secretKey ?? '')}` };
    const theirs = await h.request<{ data: { id: number } }>('POST', '/payments/customer', {
      headers: asFirst,
      form: { identifier: 'site-one-buyer', email: 'one@example.com' },
    });
    const paid = await h.request<{ data: { orderId: number; transactionId: number; cardId: number } }>(
      'POST',
      '/payments/order',
      {
        headers: asFirst,
        form: anOrder(theirs.body.data.id, { saveCard: '1' }),
      },
    );
    for (const path of [
      `/payments/customer/${theirs.body.data.id}`,
      `/payments/order/${paid.body.data.orderId}`,
      `/payments/transaction/${paid.body.data.transactionId}`,
      `/payments/card/${paid.body.data.cardId}`,
    ]) {
      expect((await h.request('GET', path, { headers: asSecond })).status, path).toBe(404);
      expect((await h.request('GET', path, { headers: asFirst })).status, path).toBe(200);
    }
    const listed = await h.request<{ data: { id: number }[] }>('GET', '/payments/order', {
      headers: asSecond,
    });
    expect(listed.body.data).toEqual([]);
    // The merchant's API key still sees both sites.
    const all = await h.request<{ data: { id: number }[] }>('GET', '/payments/order', {
      headers: { authorization: `Bearer ${two.apiKey}` },
    });
    expect(all.body.data.map((o) => o.id)).toContain(paid.body.data.orderId);
  });

  it('refuses bad rotations and token requests, naming the field', async () => {
    const two = await aMerchant(h, { sites: 2 });
    const site = two.sites[0]?.id;
    const rotate = (merchant: number, siteId: number | undefined, json: unknown) =>
      h.admin<{ error: { field?: string } }>(
        'POST',
        `/merchants/${merchant}/sites/${siteId}/secret-key/rotate`,
        { json },
      );
    expect((await rotate(two.id, site, { overlapSeconds: -1 })).body.error.field).toBe('overlapSeconds');
    expect((await rotate(two.id, site, { overlapSeconds: 31 * 86_400 })).status).toBe(400);
    // Another merchant's site, and an unknown one, are not found.
    expect((await rotate(m.id, site, {})).status).toBe(404);
    expect((await rotate(two.id, 999_999, {})).status).toBe(404);
    // With the merchant key and two sites, the token needs its site.
    const token = (query: string) =>
      h.request<{ error: { field?: string }[] }>('GET', `/payments/auth/session-token${query}`, {
        headers: { authorization: `Bearer ${two.apiKey}` },
      });
    const missing = await token('');
    expect(missing.status).toBe(400);
    expect(missing.body.error[0]?.field).toBe('siteId');
    expect((await token(`?siteId=${m.sites[0]?.id}`)).status).toBe(400);
    expect((await token(`?siteId=${site}`)).status).toBe(200);
    expect((await h.request('GET', '/payments/auth/session-token')).status).toBe(401);
  });

  it('rotation: a new key at once, the old one until its overlap ends; IPNs use the new key', async () => {
    const r = await aMerchant(h, { ipnUrl: receiver.url('/rotated') });
    const site = r.sites[0];
    const rotated = await h.admin<{ secretKey: string; publicKey: string; previousKeyValidUntil: string }>(
      'POST',
      `/merchants/${r.id}/sites/${site?.id}/secret-key/rotate`,
      { json: { overlapSeconds: 3600 } },
    );
    expect(rotated.status).toBe(201);
    expect(rotated.body.secretKey).toMatch(/^sk_test_[A-Za-z0-9]{32}$/);
    expect(rotated.body.publicKey).toBe(site?.publicKey);
    const as = (secretKey: string) =>
      h.request('GET', '/payments/order', { headers: { authorization: `Bearer ${keyOf(secretKey)}` } });
    expect((await as(rotated.body.secretKey)).status).toBe(200);
    expect((await as(site?.secretKey ?? '')).status).toBe(200);
    // A checkout signed with the old key is still accepted during the overlap.
    const old: SdkConfig = { ...sdk, secretKey: site?.secretKey ?? '', publicKey: site?.publicKey ?? '' };
    const page = await h.request('POST', '/', {
      form: {
        jsonRequest: initializeCheckout(old, aCheckout('rot-1', { publicKey: old.publicKey })).payload,
        checksum: initializeCheckout(old, aCheckout('rot-1', { publicKey: old.publicKey })).checksum,
      },
    });
    expect(page.status).toBe(200);
    await h.advanceClock(3601);
    expect((await as(site?.secretKey ?? '')).status).toBe(401);
    expect((await as(rotated.body.secretKey)).status).toBe(200);
    // IPNs are encrypted with the new key.
    const customerId = await aCustomer(h, {
      ...r,
      auth: { authorization: `Bearer ${keyOf(rotated.body.secretKey)}` },
    });
    await payments(h, r, 'POST', '/order', anOrder(customerId));
    const [ipn] = await receiver.waitFor(1, (x) => x.path === '/rotated');
    const decrypted = decryptOrderResponse(
      { ...sdk, secretKey: rotated.body.secretKey },
      new URLSearchParams(ipn?.body).get('opensslResult') ?? '',
    );
    expect(decrypted).toMatchObject({ customerId });
  });
});

describe('API calls, byte for byte as the SDK sends them', () => {
  it('its form bodies are qs.stringify’s: keys in order, JSON percent-encoded', () => {
    expect(
      qsForm({
        customerId: 7,
        ip: '127.0.0.1',
        amount: 10.5,
        currency: 'EUR',
        transactionOption: '{"isSoftDecline":"yes"}',
      }),
    ).toBe(
      'customerId=7&ip=127.0.0.1&amount=10.5&currency=EUR&transactionOption=%7B%22isSoftDecline%22%3A%22yes%22%7D',
    );
  });

  it('its checksum is base64 HMAC-SHA512 of the exact JSON text under the key', () => {
    const fixed: SdkConfig = {
      ...sdk,
      secretKey: 'sk_test_abcdefghijklmnopqrstuvwxyz012345',
      publicKey: 'pk_test_12',
    };
    const signed = initializeCheckout(fixed, {
      publicKey: 'pk_test_12',
      cardTransactionMode: 'authAndCapture',
      backUrl: 'https://shop.example/back',
      customer: { identifier: 'u1' },
      order: { orderId: 'o1', type: 'purchase', amount: 1, currency: 'EUR', description: 'd' },
    });
    expect(signed.json).toBe(
      '{"siteId":"12","publicKey":"pk_test_12","cardTransactionMode":"authAndCapture","backUrl":"https://shop.example/back","customer":{"identifier":"u1"},"order":{"orderId":"o1","type":"purchase","amount":1,"currency":"EUR","description":"d"},"saveCard":false}',
    );
    expect(signed.checksum).toBe(
      '/pgtUTZIC6zoBGBukhj5Jp2g1YUGrBCZYxRA3Kk0oz4k669B9yHDZD3x1ptQMQ1rR3oeqzR7R8/mcIjOZ+V9Cw==',
    );
  });

  it('getSessionToken: GET auth/session-token answers {code: 200, message: "Success", data: {token}}', async () => {
    const answer = await sdkRequest<{ token: string }>(sdk, 'GET', 'auth/session-token');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ code: 200, message: 'Success', data: { token: expect.any(String) } });
  });

  it('initializeCheckoutWithSavedCard, getOrder, getCards and deleteCard', async () => {
    // A card saved by a checkout with saveCard.
    const saved = await payThroughCheckout(
      initializeCheckout(sdk, aCheckout('sdk-1', { saveCard: true })),
      theCard,
    );
    const first = decryptOrderResponse<Result>(sdk, hiddenFields(saved.text).opensslResult ?? '');
    expect(first.transactionStatus).toBe('complete-ok');
    const cardId = first.cardId ?? 0;
    expect(cardId).toBeGreaterThan(0);

    const body = qsForm({
      customerId: first.customerId,
      ip: '127.0.0.1',
      amount: 12.34,
      currency: 'EUR',
      externalOrderId: 'sdk-2',
      orderType: 'purchase',
      transactionMethod: 'card',
      cardTransactionMode: 'authAndCapture',
      cardId,
    });
    const charged = await sdkRequest<{ orderId: number; transactionId: number; cardId: number }>(
      sdk,
      'POST',
      'order',
      body,
    );
    expect(charged.status).toBe(201);
    expect([200, 201]).toContain(charged.body.code);
    expect(charged.body.data).toMatchObject({
      orderId: expect.any(Number),
      transactionId: expect.any(Number),
      cardId,
    });

    const order = await sdkRequest<Record<string, unknown>[]>(
      sdk,
      'GET',
      'order?page=0&perPage=1&externalOrderId=sdk-1',
    );
    expect(order.status).toBe(200);
    expect(order.body.data?.[0]).toMatchObject({
      id: first.orderId,
      externalOrderId: 'sdk-1',
      orderType: 'purchase',
      invoiceEmail: 'ada@example.com',
      nextDueDate: null,
      amount: 25.5,
      currency: 'EUR',
    });

    const cards = await sdkRequest<Record<string, unknown>[]>(
      sdk,
      'GET',
      `card?customerId=${first.customerId}&hasToken=yes`,
    );
    expect(cards.body.data).toHaveLength(1);
    expect(cards.body.data?.[0]).toMatchObject({
      id: cardId,
      customerId: first.customerId,
      type: 'card',
      cardNumber: '411111******1111',
      cardProvider: 'visa',
      hasToken: true,
      cardStatus: 'active',
      binInfo: {
        bin: '411111',
        brand: 'VISA',
        type: 'CREDIT',
        level: 'CLASSIC',
        countryCode: 'US',
        bank: expect.any(String),
      },
    });

    const deleted = await sdkRequest(sdk, 'DELETE', `card/${cardId}`);
    expect(deleted.status).toBe(200);
    const after = await sdkRequest<unknown[]>(sdk, 'GET', `card?customerId=${first.customerId}&hasToken=yes`);
    expect(after.body.data).toEqual([]);
  });
});

describe('the embedded form’s saved cards', () => {
  it('are the signed request’s customer’s only: another userId in the page shows none', async () => {
    const saved = await payThroughCheckout(
      initializeCheckout(sdk, aCheckout('emb-owner', { saveCard: true })),
      theCard,
    );
    const owner = decryptOrderResponse<Result>(sdk, hiddenFields(saved.text).opensslResult ?? '');
    const other = await payThroughCheckout(
      initializeCheckout(sdk, aCheckout('emb-other', { saveCard: true })),
      theCard,
    );
    const stranger = decryptOrderResponse<Result>(sdk, hiddenFields(other.text).opensslResult ?? '');
    const token =
      (await sdkRequest<{ token: string }>(sdk, 'GET', 'auth/session-token')).body.data?.token ?? '';
    const signed = initializeCheckout(
      sdk,
      aCheckout('emb-next', { customer: { identifier: 'shop-user-emb-owner' } }),
    );
    const form = (userId: number) => ({
      jsonRequest: signed.payload,
      checksum: signed.checksum,
      publicKey: sdk.publicKey,
      sessionToken: token,
      userId: String(userId),
    });
    expect((await h.request('POST', '/checkout/embedded', { form: form(owner.customerId) })).text).toContain(
      'Your saved cards',
    );
    expect(
      (await h.request('POST', '/checkout/embedded', { form: form(stranger.customerId) })).text,
    ).not.toContain('Your saved cards');
    const expired = await h.request('POST', '/checkout/embedded', {
      form: { ...form(owner.customerId), sessionToken: 'x.y' },
    });
    expect(expired.status).toBe(401);
  });
});

describe('initializeCheckoutWithSavedCard after a soft decline', () => {
  it('answers error code 839, and the SDK’s retry with transactionOption isSoftDecline goes to 3-D Secure', async () => {
    const customerId = await aCustomer(h, m);
    // The card is saved with the order that soft-declines.
    const first = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, { ...newCard('4000000000003238'), saveCard: '1' }),
    );
    expect(first.status).toBe(402);
    const cards = await sdkRequest<{ id: number }[]>(
      sdk,
      'GET',
      `card?customerId=${customerId}&hasToken=yes`,
    );
    const cardId = cards.body.data?.[0]?.id ?? 0;
    const fields = {
      customerId,
      ip: '127.0.0.1',
      amount: 19.99,
      currency: 'EUR',
      externalOrderId: 'soft-1',
      orderType: 'purchase',
      transactionMethod: 'card',
      cardTransactionMode: 'authAndCapture',
      cardId,
    };
    const declined = await sdkRequest(sdk, 'POST', 'order', qsForm(fields));
    expect(declined.status).toBe(402);
    expect(declined.body.error?.some((e) => e.code === 839)).toBe(true);
    const retried = await sdkRequest<{ isRedirect: boolean; redirect: { url: string } }>(
      sdk,
      'POST',
      'order',
      qsForm({ ...fields, transactionOption: JSON.stringify({ isSoftDecline: 'yes' }) }),
    );
    expect(retried.status).toBe(201);
    expect(retried.body.data).toMatchObject({
      isRedirect: true,
      redirect: { url: expect.stringContaining('/acs/challenge') },
    });
  });
});

describe('the hosted checkout form (POST / on the checkout host)', () => {
  const countOrders = async () =>
    Number(
      (
        await h.services.db
          .selectFrom('payments_orders')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('refuses a wrong checksum, a tampered payload, an unknown site and a half-filled request, making nothing', async () => {
    const before = await countOrders();
    const good = initializeCheckout(sdk, aCheckout('bad-1'));
    const tampered = Buffer.from(good.json.replace('25.5', '0.5')).toString('base64');
    const cases: [Record<string, string>, RegExp][] = [
      [
        {
          jsonRequest: good.payload,
          checksum: initializeCheckout(
            { ...sdk, secretKey: 'sk_test_wrongwrongwrongwrongwrongwrong' },
            aCheckout('bad-1'),
          ).checksum,
        },
        /checksum does not match/,
      ],
      [{ jsonRequest: tampered, checksum: good.checksum }, /checksum does not match/],
      [{ jsonRequest: good.payload }, /checksum is missing/],
      [{ jsonRequest: 'not base64 json', checksum: good.checksum }, /not the base64 of a JSON/],
      [
        {
          jsonRequest: Buffer.from(
            good.json.replace(`"siteId":"${m.sites[0]?.id}"`, '"siteId":"999999"'),
          ).toString('base64'),
          checksum: good.checksum,
        },
        /siteId does not name a site/,
      ],
    ];
    for (const [form, message] of cases) {
      const page = await h.request('POST', '/', { form });
      expect(page.status, page.text).toBeGreaterThanOrEqual(400);
      expect(page.status).toBeLessThan(500);
      expect(page.text).toMatch(message);
    }
    const noBackUrl = initializeCheckout(sdk, { ...aCheckout('bad-2'), backUrl: 'javascript:alert(1)' });
    const refused = await h.request('POST', '/', {
      form: { jsonRequest: noBackUrl.payload, checksum: noBackUrl.checksum },
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/backUrl/);
    expect(await countOrders()).toBe(before);
  });

  it('pays, returns to backUrl with a result the SDK decrypts, and sends an IPN the SDK decrypts', async () => {
    const paid = await payThroughCheckout(initializeCheckout(sdk, aCheckout('shop-1001')), theCard);
    expect(paid.status).toBe(200);
    expect(paid.text).toContain(`action="${receiver.url('/back')}"`);
    const fields = hiddenFields(paid.text);
    expect(fields.result).toBe(fields.opensslResult);
    const result = decryptOrderResponse<Result>(sdk, fields.opensslResult ?? '');
    expect(result).toMatchObject({
      transactionStatus: 'complete-ok',
      externalOrderId: 'shop-1001',
      identifier: 'shop-user-shop-1001',
      transactionMethod: 'card',
      amount: 25.5,
      currency: 'EUR',
      customData: { cart: '42' },
      customFields: { cart: '42' },
      cardId: null,
    });
    const ipns = await receiver.waitFor(
      1,
      (r) =>
        r.path === '/ipn' &&
        decryptOrderResponse<Result>(sdk, new URLSearchParams(r.body).get('opensslResult') ?? '').orderId ===
          result.orderId,
    );
    const last = decryptOrderResponse<Result>(
      sdk,
      new URLSearchParams(ipns.at(-1)?.body).get('opensslResult') ?? '',
    );
    expect(last).toMatchObject({
      transactionStatus: 'complete-ok',
      externalOrderId: 'shop-1001',
      customData: { cart: '42' },
    });
    // The customer was made from the request.
    const customer = await payments(h, m, 'GET', `/customer/${result.customerId}`);
    expect(customer.body.data).toMatchObject({
      identifier: 'shop-user-shop-1001',
      firstName: 'Ada',
      city: 'Cluj',
      email: 'ada@example.com',
    });
  });

  it('one page is one payment: posted twice, or twice at once, it charges once and answers the same result', async () => {
    const ordersOf = async (externalOrderId: string) =>
      (
        await h.services.db
          .selectFrom('payments_orders')
          .select('id')
          .where('external_order_id', '=', externalOrderId)
          .execute()
      ).length;
    for (const [orderId, together] of [
      ['twice-1', false],
      ['twice-2', true],
    ] as const) {
      const signed = initializeCheckout(sdk, aCheckout(orderId));
      const page = await h.request('POST', '/', {
        form: { jsonRequest: signed.payload, checksum: signed.checksum },
      });
      const post = () =>
        h.request('POST', '/checkout/pay', { form: { ...hiddenFields(page.text), ...theCard } });
      const answers = together ? await Promise.all([post(), post()]) : [await post(), await post()];
      const results = answers.map((a) =>
        decryptOrderResponse<Result>(sdk, hiddenFields(a.text).opensslResult ?? ''),
      );
      expect(results[0]?.transactionStatus).toBe('complete-ok');
      expect(results[1]?.transactionId).toBe(results[0]?.transactionId);
      expect(await ordersOf(orderId)).toBe(1);
    }
  });

  it('speaks the request’s language: the checkout’s language member, a lang parameter, else Accept-Language', async () => {
    const ro = initializeCheckout(sdk, { ...aCheckout('lang-1'), language: 'ro' } as CheckoutInput);
    const page = await h.request('POST', '/', { form: { jsonRequest: ro.payload, checksum: ro.checksum } });
    expect(page.text).toContain('<html lang="ro">');
    expect(page.text).toContain('Plătiți 25.5 EUR');
    expect(page.text).toContain('Numărul cardului');
    const paid = await h.request('POST', '/checkout/pay', {
      form: { ...hiddenFields(page.text), ...theCard },
    });
    expect(paid.text).toContain('Revenire în magazin');
    const en = initializeCheckout(sdk, aCheckout('lang-2'));
    const browser = await h.request('POST', '/', {
      form: { jsonRequest: en.payload, checksum: en.checksum },
      headers: { 'accept-language': 'ro-RO,ro;q=0.9,en;q=0.8' },
    });
    expect(browser.text).toContain('<html lang="ro">');
    const asked = await h.request('POST', '/?lang=en', {
      form: { jsonRequest: en.payload, checksum: en.checksum },
      headers: { 'accept-language': 'ro' },
    });
    expect(asked.text).toContain('<html lang="en">');
  });

  it('a declined card is shown on the card page, to try another', async () => {
    const declined = await payThroughCheckout(initializeCheckout(sdk, aCheckout('shop-1002')), {
      ...theCard,
      cardNumber: '4000000000000002',
    });
    expect(declined.status).toBe(402);
    expect(declined.text).toMatch(/try another card/);
    const fields = hiddenFields(declined.text);
    const retried = await h.request('POST', '/checkout/pay', { form: { ...fields, ...theCard } });
    expect(
      decryptOrderResponse<Result>(sdk, hiddenFields(retried.text).opensslResult ?? '').transactionStatus,
    ).toBe('complete-ok');
  });

  it('initializeCardSave: the card is saved and its 0.10 EUR authorization voided at once', async () => {
    const signed = initializeCardSave(sdk, {
      publicKey: sdk.publicKey,
      backUrl: receiver.url('/saved'),
      customer: { identifier: 'saver-1', email: 'saver@example.com' },
      order: { orderId: 'save-1', description: 'Save a card' },
    });
    const page = await h.request('POST', '/', {
      form: { jsonRequest: signed.payload, checksum: signed.checksum },
    });
    expect(page.text).toContain('Save your card');
    const done = await h.request('POST', '/checkout/pay', {
      form: { ...hiddenFields(page.text), ...theCard },
    });
    const result = decryptOrderResponse<Result>(sdk, hiddenFields(done.text).opensslResult ?? '');
    expect(result).toMatchObject({
      transactionStatus: 'void-ok',
      amount: 0.1,
      currency: 'EUR',
      cardId: expect.any(Number),
    });
    const order = await payments(h, m, 'GET', `/order/${result.orderId}`);
    expect(order.body.data.orderStatus).toBe('complete-ok');
    const cards = await sdkRequest<{ id: number }[]>(
      sdk,
      'GET',
      `card?customerId=${result.customerId}&hasToken=yes`,
    );
    expect(cards.body.data?.map((c) => c.id)).toEqual([result.cardId]);
    // Nothing is left held on the card: the site's balance did not move.
    const transactions = await payments(h, m, 'GET', `/transaction?orderId=${result.orderId}`);
    expect(transactions.body.data.map((t: { transactionStatus: string }) => t.transactionStatus)).toEqual([
      'void-ok',
    ]);
  });

  it('recurring: the order keeps its terms, and getOrder reads nextDueDate', async () => {
    const signed = initializeCheckout(
      sdk,
      aCheckout('sub-1', {
        order: {
          orderId: 'sub-1',
          type: 'recurring',
          amount: 9.99,
          currency: 'EUR',
          description: 'Monthly',
          intervalType: 'month',
          intervalValue: '1',
        },
      }),
    );
    const done = await payThroughCheckout(signed, theCard);
    expect(
      decryptOrderResponse<Result>(sdk, hiddenFields(done.text).opensslResult ?? '').transactionStatus,
    ).toBe('complete-ok');
    const order = await sdkRequest<Record<string, unknown>[]>(
      sdk,
      'GET',
      'order?page=0&perPage=1&externalOrderId=sub-1',
    );
    expect(order.body.data?.[0]).toMatchObject({
      orderType: 'recurring',
      intervalType: 'month',
      intervalValue: 1,
      nextDueDate: expect.any(String),
    });
    expect(order.body.data?.[0]?.nextDueDate).toBe(order.body.data?.[0]?.nextBillDate);
  });
});

const rowsMade = async () => {
  const count = async (table: 'payments_customers' | 'payments_orders' | 'payments_transactions') =>
    Number(
      (
        await h.services.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return [
    await count('payments_customers'),
    await count('payments_orders'),
    await count('payments_transactions'),
  ];
};

describe('the hosted checkout under fuzzed input', () => {
  it('answers every signed but malformed request, and any unsigned one, with a 4xx page or a payment — never a 5xx', async () => {
    const anything = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.integer(),
      fc.double({ noNaN: true }),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
    );
    const maybe = <T>(arb: fc.Arbitrary<T>) => fc.oneof(arb, anything);
    const request = fc.record({
      customer: fc.record({
        identifier: maybe(fc.string({ minLength: 1, maxLength: 100 })),
        email: maybe(fc.emailAddress()),
        country: maybe(fc.constantFrom('RO', 'US', 'XX', '')),
      }),
      order: fc.record({
        orderId: maybe(fc.string({ minLength: 1, maxLength: 20 })),
        type: maybe(fc.constantFrom('purchase', 'recurring', 'managed', 'credit')),
        amount: maybe(fc.constantFrom(1, 10.5, 0, -1, 0.001, 1e12, '12.34', '1e3')),
        currency: maybe(fc.constantFrom('EUR', 'USD', 'JPY', 'XXX', 'eur')),
        intervalType: maybe(fc.constantFrom('day', 'month', 'year')),
        intervalValue: maybe(fc.constantFrom(1, '2', 0, 400)),
      }),
      cardTransactionMode: maybe(fc.constantFrom('auth', 'authAndCapture', 'verifyCard', 'credit')),
      saveCard: maybe(fc.boolean()),
      cardId: maybe(fc.integer({ min: -5, max: 40_000 })),
      backUrl: maybe(fc.constantFrom(receiver.url('/back'), 'ftp://x', 'javascript:1', '')),
      customData: anything,
    });
    await fc.assert(
      fc.asyncProperty(request, fc.string({ maxLength: 30 }), async (body, garbage) => {
        const signed = initializeCheckout(sdk, {
          publicKey: sdk.publicKey,
          ...body,
        } as unknown as CheckoutInput);
        const page = await h.request('POST', '/', {
          form: { jsonRequest: signed.payload, checksum: signed.checksum },
        });
        expect(page.status, page.text).toBeLessThan(500);
        if (page.status === 200) {
          const before = await rowsMade();
          const paid = await h.request('POST', '/checkout/pay', {
            form: { ...hiddenFields(page.text), ...theCard },
          });
          expect(paid.status, paid.text).toBeLessThan(500);
          // A refused payment leaves nothing behind, not even its customer; a decline keeps its order.
          if (paid.status === 400) expect(await rowsMade()).toEqual(before);
        }
        const unsigned = await h.request('POST', '/', { form: { jsonRequest: garbage, checksum: garbage } });
        expect(unsigned.status).toBeGreaterThanOrEqual(400);
        expect(unsigned.status).toBeLessThan(500);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 10) * 4 },
    );
  });
});
