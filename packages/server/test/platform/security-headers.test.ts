// Every hosted page a shopper or cardholder sees (checkout, result, ACS, crypto pay, refund decision,
// topup, KYC) and the docs: a strict CSP that runs only same-origin scripts and styles (the pages hold no
// inline script or style, and no answer is rewritten to bless its tags), no framing unless
// the site or store lists the embedding origin, nosniff, no Referer, no caching. And every API answer:
// nosniff, no-store, a CSP that allows nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anOrder as aCryptoOrder, aStore, orderOf, pay } from '../harness/crypto-builders.ts';
import { type ApiResponse, Harness } from '../harness/harness.ts';
import { aCardholder, aCustomer as anIssuingCustomer, KYC_STEPS } from '../harness/issuing-builders.ts';
import { aCustomer, aMerchant, anOrder, newCard } from '../harness/payments-builders.ts';

let h: Harness;
const pages: Record<string, ApiResponse> = {};
let embeddableCheckout: ApiResponse;
let embeddableCryptoPage: ApiResponse;
const admin = () => ({ authorization: `Bearer ${h.adminToken}` });

beforeAll(async () => {
  h = await Harness.start();
  const merchant = await aMerchant(h);
  const customerId = await aCustomer(h, merchant);
  const link = await h.request<{ data: { hash: string } }>('POST', '/payments/payment-link', {
    headers: merchant.auth,
    form: { amount: '5.00', currency: 'EUR', description: 'Headers' },
  });
  pages.checkout = await h.request('GET', `/pay/${link.body.data.hash}`);
  pages.result = await h.request('GET', `/pay/${link.body.data.hash}/result?transactionId=1`);
  const challenged = await h.request<{ data: { redirect: { params: Record<string, string> } } }>(
    'POST',
    '/payments/order',
    { headers: merchant.auth, form: anOrder(customerId, newCard('4000000000003220')) },
  );
  pages.acs = await h.request('POST', '/acs/challenge', { form: challenged.body.data.redirect.params });

  const store = await aStore(h);
  const cryptoOrder = await aCryptoOrder(h, store);
  pages.cryptoPay = await h.request('GET', new URL(cryptoOrder.redirectUrl).pathname);
  await pay(h, cryptoOrder.id);
  await h.advanceClock(150);
  const paymentId = (await orderOf(h, store, cryptoOrder.id)).payment_uuid;
  const refund = await h.request<{ data: { attributes: { decision_url: string } } }>(
    'POST',
    `/crypto/api/stores/refund/${paymentId}`,
    { headers: store.auth, json: { data: { type: 'refunds', attributes: { amount: '1.00', reason: 'x' } } } },
  );
  pages.refundDecision = await h.request('GET', new URL(refund.body.data.attributes.decision_url).pathname);

  const partner = await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Headers' } });
  const cardholder = await aCardholder(h, partner.body.apiKey, 0n);
  const topup = await h.request<{ paymentUrl: string }>('POST', '/issuing/v1/topups/fiat', {
    headers: { ...cardholder.auth, accept: 'application/json' },
    json: { accountId: cardholder.accountId, amount: '20.00' },
  });
  if (!topup.body.paymentUrl) throw new Error(`no topup: ${topup.status} ${topup.text}`);
  pages.topup = await h.request('GET', new URL(topup.body.paymentUrl).pathname);
  const applicant = await anIssuingCustomer(h, partner.body.apiKey, { kyc: 'none' });
  for (const [step, json] of KYC_STEPS) {
    await h.request('POST', `/issuing/v1/kyc/${step}`, { headers: applicant.auth, json });
  }
  const kyc = await h.request<{ url: string }>('POST', '/issuing/v1/kyc/id-verification/start', {
    headers: applicant.auth,
  });
  pages.kyc = await h.request('GET', new URL(kyc.body.url).pathname);
  pages.docsIndex = await h.request('GET', '/docs');

  // A site and a store that let their own shop embed their pages.
  const embedding = await h.admin<{ apiKey: string; sites: { id: number }[] }>('POST', '/merchants', {
    json: { name: 'Embeds', sites: [{ name: 'web', frameAncestors: ['https://shop.example'] }] },
  });
  const embeddedLink = await h.request<{ data: { hash: string } }>('POST', '/payments/payment-link', {
    headers: { authorization: `Bearer ${embedding.body.apiKey}` },
    form: { amount: '5.00', currency: 'EUR', description: 'Embedded' },
  });
  embeddableCheckout = await h.request('GET', `/pay/${embeddedLink.body.data.hash}`);
  const embeddingStore = await aStore(h);
  const patched = await h.admin('PATCH', `/stores/${embeddingStore.id}`, {
    json: { frameAncestors: ['https://*.shop.example', 'http://localhost:3000'] },
  });
  expect(patched.status).toBe(200);
  const embeddedOrder = await aCryptoOrder(h, embeddingStore);
  embeddableCryptoPage = await h.request('GET', new URL(embeddedOrder.redirectUrl).pathname);
}, 120_000);

afterAll(async () => {
  await h.close();
});

function expectStrictPage(name: string, res: ApiResponse, frameAncestors = "'none'") {
  expect(res.headers.get('content-type'), name).toMatch(/^text\/html/);
  const csp = res.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("script-src 'self';");
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('nonce');
  expect(csp).toContain(`frame-ancestors ${frameAncestors}`);
  // Nothing inline: every script is a same-origin file or JSON data, and there is no <style> at all.
  expect(res.text, name).not.toMatch(/<style\b/i);
  for (const tag of res.text.match(/<script\b[^>]*>/gi) ?? []) {
    expect(tag, name).toMatch(/\ssrc="\/|type="application\/json"/);
    expect(tag, name).not.toContain('nonce');
  }
  expect(res.text, name).not.toMatch(/\sstyle="|\son[a-z]+="/i);
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('x-frame-options')).toBe(frameAncestors === "'none'" ? 'DENY' : null);
}

describe('hosted pages', () => {
  it.each(['checkout', 'result', 'cryptoPay', 'refundDecision', 'topup', 'kyc', 'docsIndex'])(
    '%s: strict CSP with nothing inline, not framable, nosniff, no Referer, not cached',
    (name) => {
      expectStrictPage(name, pages[name] as ApiResponse);
    },
  );

  it('may be framed by the origins its site or store lists, and only by them', () => {
    expectStrictPage('embeddable checkout', embeddableCheckout, 'https://shop.example');
    expectStrictPage(
      'embeddable crypto page',
      embeddableCryptoPage,
      'https://*.shop.example http://localhost:3000',
    );
    // A 3-D Secure challenge window is framed by the merchant's page by design (3DS2 browser flow).
    expectStrictPage('acs', pages.acs as ApiResponse, '*');
  });

  it('refuses an embedding origin that is not an origin, naming the entry', async () => {
    const store = await aStore(h);
    for (const origin of ['https://shop.example/path', 'http://shop.example', '*', "'self'", 'https://a b']) {
      const res = await h.admin<{ error: { field: string } }>('PATCH', `/stores/${store.id}`, {
        json: { frameAncestors: ['https://ok.example', origin] },
      });
      expect(res.status, origin).toBe(400);
      expect(res.body.error.field).toBe('frameAncestors.1');
    }
  });
});

describe('API answers', () => {
  it('carry nosniff, no-store and a CSP that allows nothing, errors included', async () => {
    for (const res of [
      await h.request('GET', '/admin/partners', { headers: admin() }),
      await h.request('GET', '/payments/order'),
      await h.request('GET', '/crypto/api/stores/orders/nope'),
      await h.request('GET', '/issuing/v1/no-such-route'),
    ]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    }
  });
});
