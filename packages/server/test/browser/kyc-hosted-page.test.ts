// The KYC vendor simulator's hosted page, driven in Chromium as a customer would: upload a document
// image, pick the outcome, submit, see the result; the customer's KYC moves with it.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasBrowser, launchBrowser } from '../harness/browser.ts';
import { Harness } from '../harness/harness.ts';

describe.skipIf(!hasBrowser)('hosted KYC page in Chromium', () => {
  let h: Harness;
  let browser: Browser;
  let token: string;

  beforeAll(async () => {
    h = await Harness.start();
    browser = await launchBrowser();
    const partner = (
      await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Browser partner' } })
    ).body;
    const reg = await h.request<{ customerId: string }>('POST', '/issuing/v1/auth/register/partner', {
      headers: { 'x-partner-api-key': partner.apiKey },
      json: { userId: 'browser-1' },
    });
    const login = await h.request<{ accessToken: string }>('POST', '/issuing/v1/auth/login/partner', {
      headers: { 'x-partner-api-key': partner.apiKey },
      json: { customerId: reg.body.customerId },
    });
    token = login.body.accessToken;
    await h.request('POST', '/issuing/v1/kyc/personal-info', {
      headers: { authorization: `Bearer ${token}` },
      json: { firstName: 'Ada', lastName: 'Lovelace', dateOfBirth: '1990-12-10', nationality: 'GB' },
    });
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  const startCheck = async () =>
    (
      await h.request<{ url: string }>('POST', '/issuing/v1/kyc/id-verification/start', {
        headers: { authorization: `Bearer ${token}` },
      })
    ).body.url;

  it('asks for a document when verifying without one, then verifies an uploaded image', async () => {
    const page = await browser.newPage();
    await page.goto(await startCheck());
    expect(await page.title()).toBe('Verify your document');
    await page.getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('upload a photo or scan');

    await page.getByLabel('Photo or scan of the document').setInputFiles({
      name: 'passport.png',
      mimeType: 'image/png',
      buffer: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]),
    });
    await page.getByLabel('Document is genuine and readable (verify)').check();
    await page.getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Your document was verified');
    const kyc = await h.request<{ verifications: { identity: string } }>('GET', '/issuing/v1/kyc', {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(kyc.body.verifications.identity).toBe('verified');
    await page.close();
  });

  it('records a picked rejection', async () => {
    const customer = await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Second' } });
    const reg = await h.request<{ customerId: string }>('POST', '/issuing/v1/auth/register/partner', {
      headers: { 'x-partner-api-key': customer.body.apiKey },
      json: { userId: 'browser-2' },
    });
    const login = await h.request<{ accessToken: string }>('POST', '/issuing/v1/auth/login/partner', {
      headers: { 'x-partner-api-key': customer.body.apiKey },
      json: { customerId: reg.body.customerId },
    });
    const auth = { authorization: `Bearer ${login.body.accessToken}` };
    await h.request('POST', '/issuing/v1/kyc/residence', {
      headers: auth,
      json: { country: 'RO', city: 'Cluj', postalCode: '400001', addressLine1: 'Str. Test 2' },
    });
    const url = (
      await h.request<{ url: string }>('POST', '/issuing/v1/kyc/poa-verification/start', { headers: auth })
    ).body.url;
    const page = await browser.newPage();
    await page.goto(url);
    await expect
      .poll(() => page.getByRole('heading', { level: 1 }).textContent())
      .toContain('proof of address');
    await page.getByLabel('Reject: document unreadable').check();
    await page.getByRole('button', { name: 'Submit' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('document_unreadable');
    const kyc = await h.request<{ verifications: { proofOfAddress: string } }>('GET', '/issuing/v1/kyc', {
      headers: auth,
    });
    expect(kyc.body.verifications.proofOfAddress).toBe('rejected');
    await page.close();
  });
});
