// What the pages' Content-Security-Policy does if HTML ever slips past the escaping: a <script> and a
// <style> injected into a rendered page (the answer rewritten on its way to Chromium, the page's own
// headers kept) do not run, with or without a guessed nonce, while the page's own script still does.

import Fastify from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSecurityHeaders } from '../../src/platform/http/security-headers.ts';
import { page, sendPage } from '../../src/platform/pages/html.ts';
import { registerPageAssets } from '../../src/platform/pages/page-assets.ts';
import { hasBrowser, launchBrowser } from '../harness/browser.ts';
import { anOrder, aStore, chooseOnPayPage, type TestStore } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aMerchant } from '../harness/payments-builders.ts';

const INJECTED = [
  '<script>window.injected = "inline";</script>',
  '<script nonce="AAAAAAAAAAAAAAAAAAAAAA==">window.injected = "nonce";</script>',
  '<img src="x" onerror="window.injected = \'handler\'">',
  '<style>body { background: rgb(255, 0, 0) !important; }</style>',
].join('');

describe.skipIf(!hasBrowser)('injected HTML on a hosted page, in Chromium', () => {
  let h: Harness;
  let browser: Browser;
  let store: TestStore;

  beforeAll(async () => {
    h = await Harness.start();
    browser = await launchBrowser();
    store = await aStore(h);
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  /** Opens the page with the injection placed as an attacker would want it: first thing in <main>. */
  async function openInjected(path: string): Promise<{ page: Page; violations: string[] }> {
    // A context of its own: the suite's page guard fails on CSP violations, which are expected here.
    const context = await browser.newContext();
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/.test(m.text())) violations.push(m.text());
    });
    await page.route(`${h.baseUrl}${path}`, async (route) => {
      const response = await route.fetch();
      const html = (await response.text()).replace('<main>', `<main>${INJECTED}`);
      expect(html).toContain(INJECTED);
      await route.fulfill({ response, body: html });
    });
    await page.goto(`${h.baseUrl}${path}`);
    return { page, violations };
  }

  it('the crypto pay page refuses the injected script, handler and style, and runs its own script', async () => {
    const order = await anOrder(h, store);
    await chooseOnPayPage(h, order.id, 'USDC:ETH');
    const { page, violations } = await openInjected(`/crypto/pay/${order.id}`);
    // The page's own script (a same-origin file) counts the quote down.
    await expect
      .poll(() => page.evaluate("document.getElementById('countdown').textContent"), { timeout: 5_000 })
      .toBe('59 s');
    expect(await page.evaluate('window.injected')).toBeUndefined();
    expect(await page.evaluate('getComputedStyle(document.body).backgroundColor')).not.toBe('rgb(255, 0, 0)');
    // Its own stylesheet applies (the button in the accent colour).
    expect(await page.evaluate<string>('getComputedStyle(document.body).fontFamily')).toContain('system-ui');
    expect(violations.length).toBeGreaterThanOrEqual(3);
    expect(violations.join('\n')).toMatch(/script-src/);
    expect(violations.join('\n')).toMatch(/style-src/);
    await page.context().close();
  });

  it('the payments checkout page refuses an injected script too', async () => {
    const merchant = await aMerchant(h);
    const link = await h.request<{ data: { hash: string } }>('POST', '/payments/payment-link', {
      headers: merchant.auth,
      form: { amount: '5.00', currency: 'EUR', description: 'Injected' },
    });
    const { page, violations } = await openInjected(`/pay/${link.body.data.hash}`);
    await page.waitForLoadState('load');
    expect(await page.evaluate('window.injected')).toBeUndefined();
    expect(violations.length).toBeGreaterThan(0);
    await page.context().close();
  });

  it('a page whose template let raw HTML through: the server sends it as rendered, and Chromium runs none of it', async () => {
    // The pages' own machinery (page(), the assets, the security headers) on a route that forgets to
    // escape a value, as a template bug would: nothing on the way out may bless the injected tags.
    const app = Fastify();
    addSecurityHeaders(app);
    registerPageAssets(app);
    app.get('/unescaped', async (_request, reply) =>
      sendPage(reply, page('Unescaped', `<h1>Order</h1><p>${INJECTED}</p><p id="done">rendered</p>`)),
    );
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const served = await fetch(`${base}/unescaped`);
      const html = await served.text();
      expect(html).toContain(INJECTED); // sent exactly as rendered: no tag rewritten
      const context = await browser.newContext();
      const tab = await context.newPage();
      const violations: string[] = [];
      tab.on('console', (m) => {
        if (/Content Security Policy/.test(m.text())) violations.push(m.text());
      });
      await tab.goto(`${base}/unescaped`);
      await tab.waitForLoadState('load');
      expect(await tab.evaluate('window.injected')).toBeUndefined();
      expect(await tab.evaluate('getComputedStyle(document.body).backgroundColor')).not.toBe(
        'rgb(255, 0, 0)',
      );
      expect(await tab.locator('#done').textContent()).toBe('rendered');
      expect(violations.length).toBeGreaterThanOrEqual(3);
      await context.close();
    } finally {
      await app.close();
    }
  });
});
