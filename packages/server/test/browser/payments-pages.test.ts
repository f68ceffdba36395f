// The payments API's hosted pages in Chromium: the ACS challenge page a merchant's checkout sends the
// buyer to, back to the merchant's backUrl with the outcome; and a payment link's checkout, paid with a
// plain card and with a card that needs 3D Secure, a declined card shown on the page, IPNs decrypted.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasBrowser, launchBrowser } from '../harness/browser.ts';
import { Harness } from '../harness/harness.ts';
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

describe.skipIf(!hasBrowser)('hosted payments pages in Chromium', () => {
  let h: Harness;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let m: TestMerchant;

  beforeAll(async () => {
    h = await Harness.start();
    browser = await launchBrowser();
    receiver = await WebhookReceiver.start();
    m = await aMerchant(h, { ipnUrl: receiver.url('/ipn') });
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await receiver?.close();
  });

  it('takes the buyer through the ACS challenge and back to the merchant’s backUrl', async () => {
    const customerId = await aCustomer(h, m);
    const order = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, { ...newCard('4000000000003220'), backUrl: receiver.url('/back') }),
    );
    const { url, params, formMethod } = order.body.data.redirect;
    const page = await browser.newPage();
    // The merchant's page posts the redirect's params to the ACS, as its integration guide says.
    await page.setContent(
      `<form method="${formMethod}" action="${url}"><input type="hidden" name="creq" value="${params.creq}"><button>Go</button></form>`,
    );
    await page.getByRole('button', { name: 'Go' }).click();
    await page.getByRole('heading', { name: '3D Secure authentication' }).waitFor();
    expect(await page.textContent('main')).toContain('10.90 EUR');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(/\/back\?/);
    const back = new URL(page.url());
    expect(back.searchParams.get('orderId')).toBe(String(order.body.data.orderId));
    expect(back.searchParams.get('transactionStatus')).toBe('complete-ok');
    await page.close();
  });

  it('sells through a payment link: a plain card, a declined card, and a card with 3D Secure', async () => {
    const link = await payments(h, m, 'POST', '/payment-link', {
      amount: '42.00',
      currency: 'EUR',
      orderType: 'purchase',
      description: 'Concert ticket',
      usageLimit: '2',
    });
    const page = await browser.newPage();
    const fill = async (cardNumber: string) => {
      await page.goto(link.body.data.url);
      await page.getByRole('heading', { name: 'Pay 42.00 EUR' }).waitFor();
      await page.getByLabel('Email').fill('fan@example.com');
      await page.getByLabel('Name on card').fill('Ada Lovelace');
      await page.getByLabel('Card number').fill(cardNumber);
      await page.getByLabel('Expiry (MM/YY)').fill(FUTURE_EXPIRY);
      await page.getByLabel('Security code').fill('123');
      await page.getByLabel('Country (two letters)').fill('RO');
      await page.getByRole('button', { name: 'Pay 42.00 EUR' }).click();
    };

    await fill('4111111111111111');
    await page.getByRole('heading', { name: 'Thank you' }).waitFor();
    expect(await page.getByRole('status').textContent()).toContain('Payment approved');

    await fill('4000000000000002');
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('declined');
    // The form keeps what the buyer typed, except the card number and code.
    expect(await page.getByLabel('Email').inputValue()).toBe('fan@example.com');
    expect(await page.getByLabel('Card number').inputValue()).toBe('');

    await fill('4000000000003220');
    await page.getByRole('heading', { name: '3D Secure authentication' }).waitFor();
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('heading', { name: 'Thank you' }).waitFor();

    // Two payments went through: the link is used up.
    await page.goto(link.body.data.url);
    expect(await page.getByRole('alert').textContent()).toContain('used up');
    await page.close();

    const orders = await payments(h, m, 'GET', '/order?reverseSorting=0');
    const fromLink = orders.body.data.filter(
      (o: { paymentLinkHash: string }) => o.paymentLinkHash === link.body.data.hash,
    );
    expect(fromLink.map((o: { orderStatus: string }) => o.orderStatus)).toEqual([
      'complete-ok',
      'complete-failed',
      'complete-ok',
    ]);
    // One customer for the buyer, by email, reused across attempts.
    expect(new Set(fromLink.map((o: { customerId: number }) => o.customerId)).size).toBe(1);
    await receiver.waitFor(4, (r) => r.path === '/ipn');
    const ipns = decryptIpns(
      { received: receiver.received.filter((r) => r.path === '/ipn') } as WebhookReceiver,
      m.sites[0]?.ipnSecret ?? '',
    );
    expect(ipns.some((i) => i.orderId === fromLink[2].id && i.transactionStatus === 'complete-ok')).toBe(
      true,
    );
  });
});
