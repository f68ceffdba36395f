// Every hosted page a shopper, cardholder or developer sees, in Chromium at a phone's width (390 px) and a
// laptop's (1280 px), in English and (a browser asking for it) Romanian: the page's language, no
// horizontal overflow, no accessibility violation of serious or critical impact
// under axe-core (a light brand colour included: its buttons' text must still read), the SANDBOX banner at
// the top in sandbox mode; and a site's and a store's brand (name, logo, colour) on their pages.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasBrowser, launchBrowser } from '../harness/browser.ts';
import { anOrder as aCryptoOrder, aStore, orderOf, pay } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aCardholder, aCustomer as anIssuingCustomer, KYC_STEPS } from '../harness/issuing-builders.ts';
import { aCustomer, aMerchant, anOrder, newCard } from '../harness/payments-builders.ts';
import { initializeCheckout } from '../harness/xmoney-sdk-wire.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** How a page is opened: a URL, or a form the browser posts (the hosted checkout, the ACS). */
type Opening = { url: string } | { post: string; fields: Record<string, string> };

describe.skipIf(!hasBrowser)('hosted pages at 390 px and 1280 px', () => {
  let h: Harness;
  let browser: Browser;
  const pages: Record<string, Opening> = {};

  beforeAll(async () => {
    h = await Harness.start();
    browser = await launchBrowser();
    const merchant = await aMerchant(h);
    const customerId = await aCustomer(h, merchant);
    const link = await h.request<{ data: { hash: string } }>('POST', '/payments/payment-link', {
      headers: merchant.auth,
      form: {
        amount: '5.00',
        currency: 'EUR',
        description: 'A long description of what is bought, to see it wrap',
      },
    });
    pages.landing = { url: '/' };
    pages.guide = { url: '/docs/guides/quickstart-payments' };
    pages.checkout = { url: `/pay/${link.body.data.hash}` };
    const challenged = await h.request<{ data: { redirect: { params: Record<string, string> } } }>(
      'POST',
      '/payments/order',
      {
        headers: merchant.auth,
        form: anOrder(customerId, newCard('4000000000003220')),
      },
    );
    pages.acs = { post: '/acs/challenge', fields: challenged.body.data.redirect.params };
    const site = merchant.sites[0];
    const signed = initializeCheckout(
      { secretKey: site?.secretKey ?? '', publicKey: site?.publicKey ?? '', apiBase: '', checkoutHost: '' },
      {
        publicKey: site?.publicKey ?? '',
        cardTransactionMode: 'authAndCapture',
        backUrl: 'https://shop.example/back',
        customer: { identifier: 'quality-1', firstName: 'Ada', lastName: 'Lovelace', country: 'RO' },
        order: {
          orderId: 'quality-1',
          type: 'purchase',
          amount: 12.5,
          currency: 'EUR',
          description: 'Quality check',
        },
      },
    );
    pages.hostedCheckout = { post: '/', fields: { jsonRequest: signed.payload, checksum: signed.checksum } };

    const store = await aStore(h);
    const cryptoOrder = await aCryptoOrder(h, store);
    pages.cryptoPay = { url: new URL(cryptoOrder.redirectUrl).pathname };
    const partial = await aCryptoOrder(h, store, { total: '100.00' });
    await pay(h, partial.id, { amount: '40' });
    pages.cryptoPartial = { url: new URL(partial.redirectUrl).pathname };
    const paid = await aCryptoOrder(h, store);
    await pay(h, paid.id);
    await h.advanceClock(150);
    const paymentId = (await orderOf(h, store, paid.id)).payment_uuid;
    const refund = await h.request<{ data: { attributes: { decision_url: string } } }>(
      'POST',
      `/crypto/api/stores/refund/${paymentId}`,
      {
        headers: store.auth,
        json: { data: { type: 'refunds', attributes: { amount: '1.00', reason: 'quality' } } },
      },
    );
    pages.refundDecision = { url: new URL(refund.body.data.attributes.decision_url).pathname };

    // A site and a store with a brand: a light yellow, whose buttons need dark text.
    const brand = { name: 'Bright Shop', logoUrl: 'https://cdn.shop.example/logo.png', color: '#ffd400' };
    const branded = await h.admin<{ apiKey: string }>('POST', '/merchants', {
      json: { name: 'Branded', sites: [{ name: 'web', brand }] },
    });
    expect(branded.status).toBe(201);
    const brandedLink = await h.request<{ data: { hash: string } }>('POST', '/payments/payment-link', {
      headers: { authorization: `Bearer ${branded.body.apiKey}` },
      form: { amount: '7.00', currency: 'EUR' },
    });
    pages.brandedCheckout = { url: `/pay/${brandedLink.body.data.hash}` };
    const brandedStore = await aStore(h);
    expect((await h.admin('PATCH', `/stores/${brandedStore.id}`, { json: { brand } })).status).toBe(200);
    pages.brandedCryptoPay = { url: new URL((await aCryptoOrder(h, brandedStore)).redirectUrl).pathname };

    const partner = await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Quality' } });
    const cardholder = await aCardholder(h, partner.body.apiKey, 0n);
    const topup = await h.request<{ paymentUrl: string }>('POST', '/issuing/v1/topups/fiat', {
      headers: { ...cardholder.auth, accept: 'application/json' },
      json: { accountId: cardholder.accountId, amount: '20.00' },
    });
    pages.topup = { url: new URL(topup.body.paymentUrl).pathname };
    const applicant = await anIssuingCustomer(h, partner.body.apiKey, { kyc: 'none' });
    for (const [step, json] of KYC_STEPS)
      await h.request('POST', `/issuing/v1/kyc/${step}`, { headers: applicant.auth, json });
    const kyc = await h.request<{ url: string }>('POST', '/issuing/v1/kyc/id-verification/start', {
      headers: applicant.auth,
    });
    pages.kyc = { url: new URL(kyc.body.url).pathname };
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  async function open(page: Page, opening: Opening) {
    if ('url' in opening) {
      await page.goto(`${h.baseUrl}${opening.url}`);
      return;
    }
    const fields = Object.entries(opening.fields)
      .map(([k, v]) => `<input type="hidden" name="${k}" value="${v.replace(/"/g, '&quot;')}">`)
      .join('');
    await page.setContent(`<form method="post" action="${h.baseUrl}${opening.post}">${fields}</form>`);
    await Promise.all([page.waitForNavigation(), page.evaluate('document.forms[0].submit()')]);
  }

  it('a site’s and a store’s pages show their brand: name, logo (let through the page’s image policy), colour', async () => {
    const page = await browser.newPage();
    for (const name of ['brandedCheckout', 'brandedCryptoPay']) {
      const opening = pages[name] as { url: string };
      const answer = await page.goto(`${h.baseUrl}${opening.url}`);
      expect(answer?.headers()['content-security-policy']).toContain(
        "img-src 'self' data: https://cdn.shop.example",
      );
      expect(await page.locator('header.brand').textContent()).toContain('Bright Shop');
      expect(await page.locator('header.brand img').getAttribute('src')).toBe(
        'https://cdn.shop.example/logo.png',
      );
      expect(await page.locator('header.brand img').getAttribute('alt')).toBe('Bright Shop');
      const style = (property: string) =>
        page.evaluate(`getComputedStyle(document.querySelector('main form button')).${property}`);
      expect(await style('backgroundColor')).toBe('rgb(255, 212, 0)');
      expect(await style('color')).toBe('rgb(0, 0, 0)');
    }
    await page.close();
  });

  const cases = [
    { width: 390, locale: 'en-US' },
    { width: 1280, locale: 'en-US' },
    { width: 390, locale: 'ro-RO' },
  ];
  for (const { width, locale } of cases) {
    it(`every page at ${width} px in ${locale}: its language, no overflow, no serious or critical axe violation, the sandbox banner`, async () => {
      const page = await browser.newPage({ viewport: { width, height: 900 }, locale });
      const lang = locale.slice(0, 2);
      const problems: string[] = [];
      for (const [name, opening] of Object.entries(pages)) {
        await open(page, opening);
        // The landing page and the guides are the developers' (as the API references are): English only.
        const expected = name === 'landing' || name === 'guide' ? 'en' : lang;
        if ((await page.evaluate('document.documentElement.lang')) !== expected)
          problems.push(`${name}: not in ${expected}`);
        const overflow = Number(
          await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'),
        );
        if (overflow > 0) problems.push(`${name}: ${overflow} px wider than the screen`);
        const banner = (await page.getByRole('note').first().textContent()) ?? '';
        if (!banner.includes(expected === 'ro' ? 'mediu de test' : 'a test environment'))
          problems.push(`${name}: no sandbox banner in ${expected}`);
        // axe runs in the page through the devtools protocol, beside its content security policy.
        await page.evaluate(AXE);
        const violations = (await page.evaluate(`axe.run({ resultTypes: ['violations'] }).then((result) =>
          result.violations
            .filter((v) => v.impact === 'serious' || v.impact === 'critical')
            .map((v) => v.id + ' (' + v.impact + ') at ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`)) as string[];
        for (const v of violations) problems.push(`${name}: ${v}`);
      }
      await page.close();
      expect(problems).toEqual([]);
    }, 60_000);
  }
});
