// The hosted crypto payment and refund pages in Chromium, as a buyer uses them: pick a currency, see
// the quote, address, QR code and countdown, pay (on the chain simulator), watch the confirmations,
// return to the store; cancel an order; accept a refund with an address. Webhooks verified.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasBrowser, launchBrowser } from '../harness/browser.ts';
import { anOrder, aStore, cryptoHooks, orderOf, pay, type TestStore } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

describe.skipIf(!hasBrowser)('hosted crypto pages in Chromium', () => {
  let h: Harness;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let store: TestStore;

  beforeAll(async () => {
    h = await Harness.start();
    browser = await launchBrowser();
    receiver = await WebhookReceiver.start();
    store = await aStore(h, {
      webhookUrl: receiver.url('/hooks'),
      currencies: [
        { currency: 'BTC', network: 'BTC' },
        { currency: 'USDC', network: 'ETH' },
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await receiver?.close();
  });

  const createOrder = async () => {
    const res = await h.request<{ data: { id: string; attributes: { redirect_url: string } } }>(
      'POST',
      '/crypto/api/stores/orders',
      {
        headers: store.auth,
        json: {
          data: {
            type: 'orders',
            attributes: {
              order: {
                reference: `web-${Math.random().toString(36).slice(2, 8)}`,
                amount: { total: '25.00', currency: 'EUR' },
                return_urls: { return_url: receiver.url('/return'), cancel_url: receiver.url('/cancel') },
              },
              customer: { email: 'buyer@example.com', country: 'DE' },
            },
          },
        },
      },
    );
    return { id: res.body.data.id, url: res.body.data.attributes.redirect_url };
  };

  it('pre-selects a store’s only currency, says why without a choice, and shows cancel as the secondary action', async () => {
    const single = await aStore(h, { currencies: [{ currency: 'USDC', network: 'ETH' }] });
    const only = await anOrder(h, single);
    const page = await browser.newPage();
    await page.goto(only.redirectUrl);
    expect(await page.getByLabel('USDC on Ethereum').isChecked()).toBe(true);
    const background = (selector: string) =>
      page.evaluate(
        `getComputedStyle(document.querySelector('${selector}')).backgroundColor`,
      ) as Promise<string>;
    const [show, cancel] = [await background('form button:not(#cancel)'), await background('#cancel')];
    expect(cancel).toBe('rgb(255, 255, 255)');
    expect(show).not.toBe(cancel);
    // Two currencies and none picked: the browser asks first; a request without one is told what to do.
    const order = await createOrder();
    await page.goto(order.url);
    expect(await page.getByLabel('USDC on Ethereum').isChecked()).toBe(false);
    const blank = await h.request('POST', `/crypto/pay/${order.id}/choose`, { form: {} });
    expect(blank.status).toBe(400);
    expect(blank.text).toContain('Choose the currency you pay with first');
    await page.close();
  });

  it('pays an order exactly: quote, address, QR, countdown, confirmations, back to the store', async () => {
    const order = await createOrder();
    const page = await browser.newPage();
    await page.goto(order.url);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toMatch(/^Pay Store/);
    expect(await page.locator('[data-field="total"]').textContent()).toBe('25.00 EUR');
    await page.getByLabel('USDC on Ethereum').check();
    await page.getByRole('button', { name: 'Show payment address' }).click();
    const amount = (await page.locator('[data-field="crypto-amount"]').textContent()) ?? '';
    expect(amount).toMatch(/^\d+\.\d{6}$/);
    const address = (await page.locator('[data-field="address"]').textContent()) ?? '';
    expect(address).toMatch(/^0x[0-9a-f]{40}$/);
    expect(
      await page.getByRole('img', { name: 'QR code of the payment address' }).locator('svg').count(),
    ).toBe(1);
    expect(Number(await page.locator('#countdown').getAttribute('data-seconds'))).toBe(60);

    // The buyer's wallet sends exactly the amount shown, to the address shown.
    const sent = await pay(h, order.id, { amount });
    expect(sent.body.address).toBe(address);
    await expect
      .poll(() => page.locator('[data-status]').getAttribute('data-status'), { timeout: 10_000 })
      .toBe('confirming');
    expect(await page.locator('[data-field="confirmations"]').textContent()).toBe('0 of 12');
    await h.advanceClock(150);
    await expect
      .poll(() => page.locator('[data-status]').getAttribute('data-status'), { timeout: 10_000 })
      .toBe('paid');
    await page.getByRole('link', { name: /Return to Store/ }).click();
    await expect.poll(() => page.url()).toBe(receiver.url('/return'));
    await page.close();

    expect((await orderOf(h, store, order.id)).status).toBe('paid');
    const events = await cryptoHooks(h, store, receiver, { orderId: order.id }, 2);
    expect(events.map((e) => e.event_type)).toEqual(['ORDER.PAYMENT.DETECTED', 'ORDER.PAYMENT.RECEIVED']);
    expect(events[1]?.resource).toMatchObject({ amount: '25.00', currency: 'EUR' });
  });

  it('lets the buyer cancel before paying, back to the store’s cancel URL', async () => {
    const order = await createOrder();
    const page = await browser.newPage();
    await page.goto(order.url);
    await page.getByRole('button', { name: /Cancel and return/ }).click();
    await expect.poll(() => page.url()).toBe(receiver.url('/cancel'));
    await page.close();
    expect((await orderOf(h, store, order.id)).status).toBe('canceled');
  });

  it('accepts a refund on the decision page with the buyer’s address', async () => {
    const order = await anOrder(h, store, { total: '12.00' });
    await pay(h, order.id);
    await h.advanceClock(150);
    const paymentId = (await orderOf(h, store, order.id)).payment_uuid;
    const proposal = await h.request<{ data: { attributes: { decision_url: string } } }>(
      'POST',
      `/crypto/api/stores/refund/${paymentId}`,
      {
        headers: store.auth,
        json: { data: { type: 'refunds', attributes: { amount: '12.00', reason: 'Out of stock' } } },
      },
    );
    const page = await browser.newPage();
    await page.goto(proposal.body.data.attributes.decision_url);
    expect(await page.locator('[data-field="amount"]').textContent()).toBe('12.00 EUR');
    await page.getByLabel(/Your USDC address on Ethereum/).fill(`0x${'cd'.repeat(20)}`);
    await page.getByRole('button', { name: 'Accept the refund' }).click();
    await expect.poll(() => page.locator('[data-status]').getAttribute('data-status')).toBe('accepted');
    await page.close();
    expect((await orderOf(h, store, order.id)).status).toBe('refund_processing');
  });
});
