// The xMoney SDK's checkouts in Chromium, with only the host changed: the hosted checkout page that
// initializeHostedCheckout builds (a form auto-posted to the checkout host) paid with the 3-D Secure test
// card and back to backUrl with a result the SDK decrypts; and the page getWebviewCheckoutHtml builds,
// loading /sdk/0.0.9/xmoney.js, whose embedded form (Tessera's card page in a frame) pays and calls back.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasBrowser, launchBrowser } from '../harness/browser.ts';
import { Harness } from '../harness/harness.ts';
import { aMerchant, FUTURE_EXPIRY, type TestMerchant } from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';
import {
  type CheckoutInput,
  decryptOrderResponse,
  hostedCheckoutPage,
  initializeCheckout,
  type SdkConfig,
  sdkRequest,
  webviewCheckoutPage,
} from '../harness/xmoney-sdk-wire.ts';

interface Result {
  transactionStatus: string;
  orderId: number;
  externalOrderId: string;
  customerId: number;
  cardId: number | null;
  customData: unknown;
}

/** What the integrator's setTransactionResult (the SDK page's onPaymentComplete) wrote on the page. */
const resultOn = async (page: Page) => (await page.locator('body').getAttribute('data-result')) ?? '';

describe.skipIf(!hasBrowser)('the xMoney SDK’s checkouts in Chromium', () => {
  let h: Harness;
  let browser: Browser;
  let shop: WebhookReceiver;
  let m: TestMerchant;
  let sdk: SdkConfig;

  beforeAll(async () => {
    h = await Harness.start();
    browser = await launchBrowser();
    shop = await WebhookReceiver.start();
    m = await aMerchant(h, { ipnUrl: shop.url('/ipn') });
    const site = m.sites[0];
    if (!site) throw new Error('no site');
    // The shop's origin may embed the site's checkout.
    const origin = new URL(shop.url('/')).origin;
    const patched = await h.admin('PATCH', `/merchants/${m.id}/sites/${site.id}`, {
      json: { frameAncestors: [origin] },
    });
    expect(patched.status).toBe(200);
    sdk = {
      secretKey: site.secretKey,
      publicKey: site.publicKey,
      apiBase: `${h.baseUrl}/payments`,
      checkoutHost: h.baseUrl,
    };
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await shop?.close();
  });

  const checkout = (orderId: string, extra: Partial<CheckoutInput> = {}): CheckoutInput => ({
    publicKey: sdk.publicKey,
    cardTransactionMode: 'authAndCapture',
    backUrl: shop.url(`/back/${orderId}`),
    customData: JSON.stringify({ basket: orderId }),
    customer: {
      identifier: `buyer-${orderId}`,
      firstName: 'Ada',
      lastName: 'Lovelace',
      country: 'RO',
      email: 'ada@example.com',
    },
    order: { orderId, type: 'purchase', amount: 42.5, currency: 'EUR', description: `Order ${orderId}` },
    ...extra,
  });

  const resultPosted = async (orderId: string) => {
    const [back] = await shop.waitFor(1, (r) => r.path === `/back/${orderId}`);
    const form = new URLSearchParams(back?.body);
    expect(form.get('result')).toBe(form.get('opensslResult'));
    return decryptOrderResponse<Result>(sdk, form.get('opensslResult') ?? '');
  };

  const ipnOf = async (orderId: number, status: string) => {
    const matching = (body: string) => {
      const ipn = decryptOrderResponse<Result>(sdk, new URLSearchParams(body).get('opensslResult') ?? '');
      return ipn.orderId === orderId && ipn.transactionStatus === status;
    };
    const [ipn] = await shop.waitFor(1, (r) => r.path === '/ipn' && matching(r.body));
    return decryptOrderResponse<Result>(sdk, new URLSearchParams(ipn?.body).get('opensslResult') ?? '');
  };

  it('hosted checkout: the SDK’s auto-posted form, a 3-D Secure card, back to backUrl with the result', async () => {
    const signed = initializeCheckout(sdk, checkout('web-1'));
    shop.serve('/checkout/web-1', hostedCheckoutPage(sdk, signed));
    const page = await browser.newPage();
    await page.goto(shop.url('/checkout/web-1'));
    await page.getByRole('heading', { name: /Pay 42\.5 EUR/ }).waitFor();
    expect(await page.inputValue('#cardHolderName')).toBe('Ada Lovelace');
    await page.fill('#cardNumber', '4000 0000 0000 3220');
    await page.fill('#cardExpiryDate', FUTURE_EXPIRY);
    await page.fill('#cardCvv', '123');
    await page.getByRole('button', { name: /Pay 42\.5 EUR/ }).click();
    await page.getByRole('heading', { name: '3D Secure authentication' }).waitFor();
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(shop.url('/back/web-1'));
    await page.close();

    const result = await resultPosted('web-1');
    expect(result).toMatchObject({
      transactionStatus: 'complete-ok',
      externalOrderId: 'web-1',
      customData: { basket: 'web-1' },
    });
    expect(await ipnOf(result.orderId, 'complete-ok')).toMatchObject({ externalOrderId: 'web-1' });
  });

  it('hosted checkout: a declined card is shown, another card pays', async () => {
    const signed = initializeCheckout(sdk, checkout('web-2'));
    shop.serve('/checkout/web-2', hostedCheckoutPage(sdk, signed));
    const page = await browser.newPage();
    await page.goto(shop.url('/checkout/web-2'));
    await page.fill('#cardNumber', '4000000000000002');
    await page.fill('#cardExpiryDate', FUTURE_EXPIRY);
    await page.fill('#cardCvv', '123');
    await page.getByRole('button', { name: /Pay/ }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/try another card/);
    await page.fill('#cardNumber', '4111111111111111');
    await page.fill('#cardCvv', '123');
    await page.getByRole('button', { name: /Pay/ }).click();
    await page.waitForURL(shop.url('/back/web-2'));
    await page.close();
    expect((await resultPosted('web-2')).transactionStatus).toBe('complete-ok');
  });

  it('embedded form: xmoney.js frames the card page, calls onReady, pays with a saved card and calls onPaymentComplete', async () => {
    // A first checkout saves a card for the buyer.
    const first = initializeCheckout(sdk, checkout('emb-0', { saveCard: true }));
    shop.serve('/checkout/emb-0', hostedCheckoutPage(sdk, first));
    const setup = await browser.newPage();
    await setup.goto(shop.url('/checkout/emb-0'));
    await setup.fill('#cardNumber', '5555555555554444');
    await setup.fill('#cardExpiryDate', FUTURE_EXPIRY);
    await setup.fill('#cardCvv', '123');
    await setup.getByRole('button', { name: /Pay/ }).click();
    await setup.waitForURL(shop.url('/back/emb-0'));
    await setup.close();
    const saved = await resultPosted('emb-0');
    expect(saved.cardId).toEqual(expect.any(Number));

    // The shop's server gets a session token; its page embeds the form for the same buyer.
    const session = await sdkRequest<{ token: string }>(sdk, 'GET', 'auth/session-token');
    const signed = initializeCheckout(
      sdk,
      checkout('emb-1', { customer: { identifier: 'buyer-emb-0', country: 'RO' } }),
    );
    shop.serve(
      '/embedded/emb-1',
      webviewCheckoutPage(sdk, signed, {
        theme: 'dark',
        sessionToken: session.body.data?.token ?? '',
        userId: saved.customerId,
        extraHead:
          '<script>function setTransactionResult(result) { document.body.dataset.result = JSON.stringify(result); }</script>',
      }),
    );
    const page = await browser.newPage();
    await page.goto(shop.url('/embedded/emb-1'));
    // onReady ran: the SDK page's overlay is gone.
    await expect.poll(() => page.locator('#loading-overlay').isHidden()).toBe(true);
    const frame = page.frameLocator('#payment-form-widget iframe');
    await frame.getByRole('heading', { name: /Pay 42\.5 EUR/ }).waitFor();
    await expect.poll(() => frame.getByLabel(/MASTERCARD ending in 4444/).isChecked()).toBe(true);
    await frame.getByRole('button', { name: /Pay 42\.5 EUR/ }).click();
    await frame.getByRole('heading', { name: 'Payment complete' }).waitFor();
    await expect.poll(() => resultOn(page)).not.toBe('');
    const completed = JSON.parse((await resultOn(page)) || '{}') as {
      transactionStatus: string;
      orderId: number;
      externalOrderId: string;
      cardId: number;
      opensslResult: string;
    };
    expect(completed).toMatchObject({
      transactionStatus: 'complete-ok',
      externalOrderId: 'emb-1',
      cardId: saved.cardId,
    });
    // The callback's encrypted result is the SDK's to decrypt, and the IPN says the same.
    expect(decryptOrderResponse<Result>(sdk, completed.opensslResult)).toMatchObject({
      transactionStatus: 'complete-ok',
      orderId: completed.orderId,
    });
    expect(await ipnOf(completed.orderId, 'complete-ok')).toMatchObject({ externalOrderId: 'emb-1' });
    await page.close();
  });

  it('embedded form: a new card with a 3-D Secure challenge inside the frame', async () => {
    const signed = initializeCheckout(sdk, checkout('emb-2'));
    shop.serve(
      '/embedded/emb-2',
      webviewCheckoutPage(sdk, signed, {
        theme: 'light',
        extraHead:
          '<script>function setTransactionResult(result) { document.body.dataset.result = JSON.stringify(result); }</script>',
      }),
    );
    const page = await browser.newPage();
    await page.goto(shop.url('/embedded/emb-2'));
    const frame = page.frameLocator('#payment-form-widget iframe');
    await frame.locator('#cardNumber').fill('4000000000003220');
    await frame.locator('#cardExpiryDate').fill(FUTURE_EXPIRY);
    await frame.locator('#cardCvv').fill('123');
    await frame.getByRole('button', { name: /Pay/ }).click();
    await frame.getByRole('button', { name: 'Approve' }).click();
    await frame.getByRole('heading', { name: 'Payment complete' }).waitFor();
    await expect.poll(() => resultOn(page)).toContain('complete-ok');
    await page.close();
  });
});
