// Console › Risk in Chromium (docs/risk.md, Console), as an operator would use it: a block list made and
// filled by pasting a CSV file, a rule written in the editor — a wrong expression refused on the form with
// its line and column and the text kept, then saved — that blocks the next charge from a listed IP; a
// charge held for review found in the queue and approved, which the payments API then shows captured; and
// every risk page, and dispute monitoring, at 390 px and 1280 px under axe-core.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasBrowser, launchBrowser } from '../harness/browser.ts';
import { checkConsoleLayout, checkPage } from '../harness/console-page-checks.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments, type TestMerchant } from '../harness/payments-builders.ts';

describe.skipIf(!hasBrowser)('risk in the console, in Chromium', () => {
  let h: Harness;
  let browser: Browser;
  let m: TestMerchant;

  beforeAll(async () => {
    h = await Harness.start();
    browser = await launchBrowser();
    m = await aMerchant(h);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  async function operator(width: number): Promise<Page> {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    await page.goto(`${h.baseUrl}/console`);
    await page.getByLabel('Admin token').fill(h.adminToken);
    await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Overview');
    return page;
  }

  it('a list filled from a pasted CSV file and a rule written in the editor block a charge; a held charge is approved from the queue', async () => {
    const page = await operator(1280);
    await page.getByRole('link', { name: 'Lists', exact: true }).first().click();
    await page.getByRole('link', { name: 'New list…' }).click();
    await page.getByLabel('Name').fill('blocked_ips');
    await page.getByLabel('Kind').selectOption('ip');
    await page.getByLabel('Scope').fill(`merchant:${m.id}`);
    await page.getByRole('button', { name: 'Create list' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('List blocked_ips');
    await page.getByRole('link', { name: 'Add or import items…' }).click();
    await page.getByLabel('Items').fill('value,seen\n203.0.113.7,2026-11-30\n198.51.100.0/24,2026-12-01\n');
    await page.getByRole('button', { name: 'Add items' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Added');
    expect(await page.locator('table').textContent()).toContain('198.51.100.0/24');

    await page.goto(`${h.baseUrl}/console/risk/rules`);
    await page.getByRole('link', { name: 'New rule…' }).click();
    // The attributes of each decision point are on the page, to write the expression with.
    await page.getByText('payments.charge: allow, block, review, challenge').click();
    expect(await page.getByRole('table', { name: 'Attributes at payments.charge' }).textContent()).toContain(
      'card.fingerprint',
    );
    await page.getByLabel('Name').fill('listed IPs');
    await page.getByLabel('Scope').fill(`merchant:${m.id}`);
    await page.getByLabel('Decision point').selectOption('payments.charge');
    const typo = "ip in list('blocked_ips') && amount > 'ten'";
    await page.getByLabel('Expression (CEL: true matches)').fill(typo);
    await page.getByLabel('Action').selectOption('block');
    await page.getByLabel('Mode').selectOption('active');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/line 1, column \d+/);
    // The expression stays as typed, marked, to be corrected rather than typed again.
    const expression = page.getByLabel('Expression (CEL: true matches)');
    expect(await expression.inputValue()).toBe(typo);
    expect(await expression.getAttribute('aria-invalid')).toBe('true');
    await expression.fill("ip in list('blocked_ips')");
    await page.getByRole('button', { name: 'Save rule' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Rule listed IPs');
    const customerId = await aCustomer(h, m);
    expect((await payments(h, m, 'POST', '/order', anOrder(customerId, { ip: '198.51.100.9' }))).status).toBe(
      402,
    );
    await page.reload();
    expect(await page.getByRole('table', { name: 'Its newest decisions' }).textContent()).toContain('block');

    // The sandbox's test email holds a charge for review; it waits in the queue until approved.
    const held = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(await aCustomer(h, m, { email: 'risk-review@example.com' }), { amount: '42.00' }),
    );
    const transactionId = held.body.data.transactionId as number;
    await page.goto(`${h.baseUrl}/console/risk/reviews`);
    const row = page.getByRole('row').filter({ hasText: String(transactionId) });
    await row.getByRole('link', { name: /^rv_/ }).click();
    expect(await page.locator('dl').textContent()).toContain('The authorized charge is captured.');
    await page.getByRole('link', { name: 'Approve…' }).click();
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Approved');
    expect((await payments(h, m, 'GET', `/transaction/${transactionId}`)).body.data.transactionStatus).toBe(
      'complete-ok',
    );
    expect(await page.getByRole('link', { name: 'Approve…' }).count()).toBe(0);
    await page.close();
  }, 120_000);

  it('risk pages and dispute monitoring at 390 px and 1280 px: no overflow, no serious or critical axe violation', async () => {
    const rule = await h.admin<{ id: string }>('POST', '/risk/rules', {
      json: {
        name: 'layout',
        scope: { kind: 'merchant', id: String(m.id) },
        decisionPoint: 'payments.charge',
        expression: 'velocity.ip.count_10m >= 20 || card.country != billing_country',
        action: 'review',
        mode: 'shadow',
      },
    });
    const list = await h.admin<{ id: string }>('POST', '/risk/lists', {
      json: { name: 'layout_emails', kind: 'email', scope: { kind: 'platform' } },
    });
    await h.admin('POST', `/risk/lists/${list.body.id}/items`, {
      json: { items: ['someone.with.a.long.address@example.com'] },
    });
    const paid = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(await aCustomer(h, m, { email: 'risk-review@example.com' })),
    );
    const reviews = await h.admin<{ data: { id: string }[] }>('GET', `/risk/reviews?tenant=merchant:${m.id}`);
    const review = reviews.body.data[0]?.id;
    await h.request('POST', `/sandbox/payments/transactions/${paid.body.data.transactionId}/chargeback`, {
      headers: { authorization: `Bearer ${h.adminToken}` },
      json: { reasonCode: '10.4' },
    });
    const paths = [
      '/console/risk/rules',
      '/console/risk/rules/new',
      `/console/risk/rules/${rule.body.id}`,
      `/console/risk/rules/${rule.body.id}/edit`,
      '/console/risk/backtest',
      '/console/risk/lists',
      `/console/risk/lists/${list.body.id}`,
      `/console/risk/lists/${list.body.id}/items`,
      '/console/risk/reviews',
      `/console/risk/reviews/${review}`,
      `/console/risk/reviews/${review}/approve`,
      `/console/risk/decisions?objectId=${paid.body.data.transactionId}`,
      '/console/payments/monitoring',
    ];
    const problems: string[] = [];
    for (const width of [390, 1280]) {
      const page = await operator(width);
      for (const path of paths) {
        const answer = await page.goto(`${h.baseUrl}${path}`);
        if (answer?.status() !== 200) problems.push(`${path}: ${answer?.status()}`);
        await checkPage(page, `${path} at ${width}`, problems);
        await checkConsoleLayout(page, `${path} at ${width}`, width, problems);
      }
      await page.close();
    }
    expect(problems).toEqual([]);
  }, 120_000);
});
