// What an integrator opens first, in Chromium: the landing page at `/` (JSON for scripts), each API's
// reference rendering with its assets, and a call tried from the reference against the running sandbox.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasBrowser, launchBrowser } from '../harness/browser.ts';
import { Harness } from '../harness/harness.ts';
import { aMerchant } from '../harness/payments-builders.ts';

describe.skipIf(!hasBrowser)('the landing page and the API references in Chromium', () => {
  let h: Harness;
  let browser: Browser;

  beforeAll(async () => {
    h = await Harness.start();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('/ answers JSON to a script: the APIs, their references and documents, the sandbox clock', async () => {
    const about = await h.request<{
      name: string;
      mode: string;
      apis: { name: string; baseUrl: string; reference: string; openapi: string }[];
      quickStarts: { title: string; url: string }[];
      sandbox: { clock: string };
    }>('GET', '/', { headers: { accept: 'application/json' } });
    expect(about.body.quickStarts).toHaveLength(3);
    for (const guide of about.body.quickStarts) {
      const served = await fetch(guide.url);
      expect(served.status, guide.url).toBe(200);
      expect(await served.text()).toContain('<pre tabindex="0"><code class="language-sh">');
    }
    expect((await fetch(`${h.baseUrl}/docs/guides/..%2Fpackage`)).status).toBe(404);
    expect(about.status).toBe(200);
    expect(about.body).toMatchObject({
      name: 'tessera',
      mode: 'sandbox',
      sandbox: { clock: expect.any(String) },
    });
    expect(about.body.apis.map((a) => a.name)).toEqual(['issuing', 'payments', 'crypto', 'admin', 'sandbox']);
    for (const api of about.body.apis) {
      expect((await fetch(api.openapi)).status, api.openapi).toBe(200);
      expect((await fetch(api.reference)).status, api.reference).toBe(200);
    }
  });

  it('/ links each quick start, a page whose links to other guides stay on the server', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${h.baseUrl}/`);
    await page.getByRole('link', { name: 'Take a card payment' }).click();
    await page.waitForURL(`${h.baseUrl}/docs/guides/quickstart-payments`);
    await page.getByRole('heading', { name: 'Quick start: take a card payment', level: 1 }).waitFor();
    expect(await page.locator('pre code').count()).toBeGreaterThan(5);
    await page.getByRole('link', { name: 'payments.md', exact: true }).first().click();
    await page.waitForURL(`${h.baseUrl}/docs/guides/payments`);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    await page.close();
  });

  it('/ shows a person what runs, and each reference renders and tries a call against the sandbox', async () => {
    const m = await aMerchant(h);
    const page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${h.baseUrl}/`);
    await page.getByRole('heading', { name: /Tessera/, level: 1 }).waitFor();
    expect(await page.locator('#sandbox-clock').getAttribute('datetime')).toMatch(/^\d{4}-/);
    for (const name of ['Card issuing', 'Card payments', 'Crypto payments']) {
      await page.getByRole('row', { name: new RegExp(name) }).waitFor();
    }

    await page
      .getByRole('row', { name: /Card payments/ })
      .getByRole('link', { name: 'Reference' })
      .click();
    await page.waitForURL(`${h.baseUrl}/payments/docs/`);
    await page.getByText('Tessera payments API').first().waitFor();
    // Tessera's, not the framework's: its title and icon, no top bar with another logo or address.
    expect(await page.title()).toBe('Tessera payments API — reference');
    expect(await page.locator('.topbar').count()).toBe(0);
    const icon = await page.locator('link[rel="icon"]').first().getAttribute('href');
    const served = await fetch(new URL(icon ?? '', page.url()));
    expect(served.headers.get('content-type')).toMatch(/image\/svg\+xml/);
    await page.getByText('/docs/payments/openapi.json').first().waitFor();
    // Authorize with the merchant's key, then try GET /order.
    await page.locator('.auth-wrapper .authorize').click();
    await page.locator('.modal-ux input').first().fill(m.apiKey);
    await page.locator('.modal-ux .auth-btn-wrapper .authorize').click();
    await page.locator('.modal-ux .auth-btn-wrapper .btn-done').click();
    const operation = page.locator('#operations-orders-getOrder');
    await operation.locator('.opblock-summary').click();
    await operation.getByRole('button', { name: 'Try it out' }).click();
    await operation.getByRole('button', { name: 'Execute' }).click();
    await expect
      .poll(() => operation.locator('.live-responses-table tbody .response-col_status').first().textContent())
      .toMatch(/200/);
    await page.close();
  });

  it('a reference opened without its trailing slash is sent to it, and renders', async () => {
    const page = await browser.newPage();
    for (const prefix of ['/issuing/v1', '/crypto/api', '/admin']) {
      await page.goto(`${h.baseUrl}${prefix}/docs`);
      await page.waitForURL(`${h.baseUrl}${prefix}/docs/`);
      await page.locator('.opblock').first().waitFor();
    }
    await page.close();
  });
});
