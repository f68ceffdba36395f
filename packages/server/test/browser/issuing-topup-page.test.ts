// The hosted topup page in Chromium: the page POST /issuing/v1/topups/fiat answers, paid by a card that
// needs 3D Secure, through the ACS and back to the page, which shows the account topped up.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasBrowser, launchBrowser } from '../harness/browser.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, anAccount } from '../harness/issuing-builders.ts';
import { FUTURE_EXPIRY } from '../harness/payments-builders.ts';

describe.skipIf(!hasBrowser)('hosted topup page in Chromium', () => {
  let h: Harness;
  let browser: Browser;
  let partnerKey: string;

  beforeAll(async () => {
    h = await Harness.start();
    browser = await launchBrowser();
    partnerKey = (await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Topup page' } }))
      .body.apiKey;
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('pays a topup by card with 3D Secure and shows the result', async () => {
    const customer = await aCustomer(h, partnerKey);
    const accountId = await anAccount(h, customer.auth);
    const topup = await h.request<{ paymentUrl: string }>('POST', '/issuing/v1/topups/fiat', {
      headers: { ...customer.auth, accept: 'application/json' },
      json: { accountId, amount: '75.00' },
    });
    const page = await browser.newPage();
    await page.goto(topup.body.paymentUrl);
    await page.getByRole('heading', { name: 'Top up 75.00 EUR' }).waitFor();
    expect(await page.textContent('main')).toContain('Or pay by bank transfer');

    await page.getByLabel('Name on card').fill('Ada Lovelace');
    await page.getByLabel('Card number').fill('4000 0000 0000 2');
    await page.getByLabel('Expiry (MM/YY)').fill(FUTURE_EXPIRY);
    await page.getByLabel('Security code').fill('123');
    await page.getByRole('button', { name: 'Pay 75.00 EUR' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('valid card number');

    await page.getByLabel('Name on card').fill('Ada Lovelace');
    await page.getByLabel('Card number').fill('4000 0000 0000 3220');
    await page.getByLabel('Expiry (MM/YY)').fill(FUTURE_EXPIRY);
    await page.getByLabel('Security code').fill('123');
    await page.getByRole('button', { name: 'Pay 75.00 EUR' }).click();
    await page.getByRole('heading', { name: '3D Secure authentication' }).waitFor();
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Your account was topped up with 75.00 EUR by card.').waitFor();
    await page.close();

    const accounts = await h.request<{ data: { balance: string }[] }>('GET', '/issuing/v1/accounts', {
      headers: await customer.relogin(),
    });
    expect(accounts.body.data[0]?.balance).toBe('75.00');
  });
});
