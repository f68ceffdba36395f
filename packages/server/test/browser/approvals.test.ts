// Four eyes in Chromium (docs/console.md, Approvals): a finance member refunds more than the merchant's
// threshold and is told it waits for a second person; a second member, in another browser, finds it
// under Approvals, approves it, and the refund is done — the API shows it. The requester is never offered
// the approval of their own request.
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasBrowser, launchBrowser } from '../harness/browser.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments, type TestMerchant } from '../harness/payments-builders.ts';

describe.skipIf(!hasBrowser)('four eyes in Chromium', () => {
  let h: Harness;
  let browser: Browser;
  let merchant: TestMerchant;

  beforeAll(async () => {
    h = await Harness.start();
    browser = await launchBrowser();
    merchant = await aMerchant(h);
    const policy = await h.admin('PUT', `/merchants/${merchant.id}/approval-thresholds`, {
      json: { refund: { EUR: '50.00' } },
    });
    expect(policy.status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  async function financeMember(): Promise<Page> {
    const email = `finance-${randomBytes(4).toString('hex')}@approvals.example`;
    const password = 'correct horse battery staple';
    await h.admin('POST', '/console-users', {
      json: { email, password, role: 'finance', tenant: { kind: 'merchant', id: String(merchant.id) } },
    });
    const page = await browser.newPage();
    await page.goto(`${h.baseUrl}/console/sign-in`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Overview');
    return page;
  }

  it('a refund above the threshold waits, and a second member approves it', async () => {
    const paid = await payments(
      h,
      merchant,
      'POST',
      '/order',
      anOrder(await aCustomer(h, merchant), { amount: '80.00' }),
    );
    const transactionId = paid.body.data.transactionId as number;

    const requester = await financeMember();
    await requester.goto(`${h.baseUrl}/console/payments/transactions/${transactionId}/refund`);
    await requester.getByLabel('Amount (EUR)').fill('60.00');
    await requester.getByRole('button', { name: 'Refund' }).click();
    await expect.poll(() => requester.locator('h1').textContent()).toMatch(/^Approval apr_/);
    expect(await requester.getByRole('status').textContent()).toContain('Waiting for a second person');
    expect(await requester.getByRole('link', { name: 'Approve…' }).count()).toBe(0);
    expect(
      (await payments(h, merchant, 'GET', `/transaction/${transactionId}`)).body.data.refundedAmount,
    ).toBe(0);

    const approver = await financeMember();
    await approver.getByRole('link', { name: 'Approvals' }).click();
    const row = approver.getByRole('row').filter({ hasText: '60.00 EUR' });
    await row.getByRole('link', { name: /^apr_/ }).click();
    expect(await approver.locator('dl').textContent()).toContain('refund 60.00 EUR of transaction');
    await approver.getByRole('link', { name: 'Approve…' }).click();
    await approver.getByRole('button', { name: 'Approve and run it' }).click();
    await expect.poll(() => approver.getByRole('status').textContent()).toContain('Approved');
    expect(
      (await payments(h, merchant, 'GET', `/transaction/${transactionId}`)).body.data.refundedAmount,
    ).toBe(60);
    // The result is one click away: the refund transaction.
    await approver.getByRole('link', { name: 'Open' }).click();
    await expect.poll(() => approver.locator('h1').textContent()).toBe('Refund');
    expect(await approver.locator('.object-id code').textContent()).toMatch(/^\d+$/);
    await requester.close();
    await approver.close();
  }, 60_000);
});
