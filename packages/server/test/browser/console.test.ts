// The console in Chromium, as a new operator and a new tenant member would use it: signing in (the admin
// token, a password, a wrong password, a TOTP second factor), a CSRF-refused form, finding objects by id,
// a refund the API then shows, a redelivered webhook, the sandbox clock and a trigger, a member refused
// another tenant's object; and its pages at 390 px and 1280 px under axe-core.
import { Secret, TOTP } from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasBrowser, launchBrowser } from '../harness/browser.ts';
import { checkConsoleLayout, checkPage } from '../harness/console-page-checks.ts';
import { anOrder as aCryptoOrder, aStore, pay } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import {
  aCustomer,
  aMerchant,
  anOrder,
  aSitePayout,
  decryptIpns,
  payments,
  type TestMerchant,
} from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

/** The account keys (m/44'/60'/0') of BIP39's "abandon … about" mnemonic */
const ABANDON_XPUB =
  'xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt';
const ABANDON_XPRV =
  'xprv9zDSoJv1aBcjX6sNgEpE2J9K6MV2MUnXuqXsFgzVn3zY2aHyupaFQdYCtdCbNMkvcTdx9FeN49sgXw6mjrhrFLRSzJVnRYPfSCCgjeg4GxY';

const SCREENSHOTS: Record<string, string> = {
  '/console': 'home',
  '/console/payments/orders/:id': 'order',
  '/console/money/payouts/:id': 'payout',
  '/console/payments/disputes/:id': 'dispute',
};

describe.skipIf(!hasBrowser)('the console in Chromium', () => {
  let h: Harness;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let merchant: TestMerchant;
  let other: TestMerchant;
  let order: { orderId: number; transactionId: number };
  let otherOrderId: number;

  beforeAll(async () => {
    h = await Harness.start();
    browser = await launchBrowser();
    receiver = await WebhookReceiver.start();
    merchant = await aMerchant(h, { ipnUrl: receiver.url('/ipn') });
    other = await aMerchant(h);
    const paid = await payments(h, merchant, 'POST', '/order', anOrder(await aCustomer(h, merchant)));
    expect(paid.status).toBe(201);
    order = paid.body.data;
    otherOrderId = (await payments(h, other, 'POST', '/order', anOrder(await aCustomer(h, other)))).body.data
      .orderId;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await h?.close();
  });

  async function signInWithToken(page: Page) {
    await page.goto(`${h.baseUrl}/console`);
    await page.getByLabel('Admin token').fill(h.adminToken);
    await page.getByRole('button', { name: 'Sign in with the admin token' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Overview');
  }

  async function signIn(page: Page, email: string, password: string) {
    await page.goto(`${h.baseUrl}/console/sign-in`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  const search = async (page: Page, id: string | number) => {
    await page.getByRole('searchbox').fill(String(id));
    await page.getByRole('button', { name: 'Find' }).click();
  };

  it('an operator signs in with the admin token, finds a transaction by id and refunds part of it; the API shows the refund', async () => {
    const page = await browser.newPage();
    await signInWithToken(page);
    await search(page, order.transactionId);
    // An object's page is headed by what it is; its id is beside the Copy button, not the headline
    await expect.poll(() => page.locator('h1').textContent()).toBe('Payment');
    expect(await page.locator('.object-id code').textContent()).toBe(String(order.transactionId));
    await page.getByRole('link', { name: 'Refund…' }).click();
    await page.getByLabel('Amount (EUR)').fill('2.50');
    await page.getByRole('button', { name: 'Refund' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Refunded.');
    expect(await page.locator('h1').textContent()).toBe('Refund');
    const refundId = Number(await page.locator('.object-id code').textContent());
    const refund = await payments(h, merchant, 'GET', `/transaction/${refundId}`);
    expect(refund.body.data).toMatchObject({
      transactionType: 'refund',
      parentTransactionId: order.transactionId,
      amount: 2.5,
    });
    const deposit = await payments(h, merchant, 'GET', `/transaction/${order.transactionId}`);
    expect(deposit.body.data.refundedAmount).toBe(2.5);

    // Too much: the payments service's own refusal, on the form, naming the amount.
    await page.goto(`${h.baseUrl}/console/payments/transactions/${order.transactionId}/refund`);
    await page.getByLabel('Amount (EUR)').fill('100.00');
    await page.getByRole('button', { name: 'Refund' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toContain('exceeds what is left to refund');
    expect(await page.getByLabel('Amount (EUR)').getAttribute('aria-invalid')).toBe('true');
    expect(
      (await payments(h, merchant, 'GET', `/transaction/${order.transactionId}`)).body.data.refundedAmount,
    ).toBe(2.5);

    // The order and an object of another merchant open from the search too (the operator sees all).
    await search(page, otherOrderId);
    await expect.poll(() => page.locator('.object-id code').textContent()).toBe(String(otherOrderId));
    await page.close();
  });

  it('a chargeback is answered from the console: a file of another type is refused, a PDF uploaded; the overview counts it', async () => {
    const paid = await payments(h, merchant, 'POST', '/order', anOrder(await aCustomer(h, merchant)));
    const raised = await h.request<{ disputeId: number }>(
      'POST',
      `/sandbox/payments/transactions/${paid.body.data.transactionId}/chargeback`,
      { headers: { authorization: `Bearer ${h.adminToken}` }, json: { reasonCode: '13.1' } },
    );
    expect(raised.status).toBe(201);
    const page = await browser.newPage();
    await signInWithToken(page);
    const open = Number(await page.locator('[data-field="open-disputes"]').textContent());
    expect(open).toBeGreaterThanOrEqual(1);
    await page.getByRole('link', { name: 'Disputes' }).first().click();
    await page.getByRole('link', { name: `dispute ${raised.body.disputeId}`, exact: true }).click();
    await expect
      .poll(() => page.locator('.object-id code').textContent())
      .toBe(String(raised.body.disputeId));

    // A text file named .pdf: refused by its content, naming it, and nothing stored.
    await page
      .getByLabel('Files')
      .setInputFiles({ name: 'invoice.pdf', mimeType: 'application/pdf', buffer: Buffer.from('not a pdf') });
    await page.getByRole('button', { name: 'Send the evidence' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toContain('invoice.pdf is not a PDF, PNG or JPEG file');

    await page.getByLabel('Files').setInputFiles({
      name: 'receipt.pdf',
      mimeType: 'application/pdf',
      buffer: Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\n%%EOF\n'),
    });
    await page.getByLabel('Tracking number').fill('RR123456789RO');
    await page.getByRole('button', { name: 'Send the evidence' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toBe('Evidence sent: the dispute is under review.');
    const dispute = await payments(h, merchant, 'GET', `/dispute/${raised.body.disputeId}`);
    expect(dispute.body.data).toMatchObject({
      status: 'under_review',
      evidence: {
        text: { shippingTrackingNumber: 'RR123456789RO' },
        files: [{ filename: 'receipt.pdf', contentType: 'application/pdf' }],
      },
    });
    await page.close();
  });

  it('a redeliver sends the event’s IPN to the site again: the same order, the same facts', async () => {
    await receiver.waitFor(1);
    const page = await browser.newPage();
    await signInWithToken(page);
    await page.getByRole('link', { name: 'Events' }).click();
    await page.getByLabel('About object id').fill(String(order.orderId));
    await page.getByRole('button', { name: 'Filter' }).click();
    const first = page.locator('table a[href^="/console/developers/events/evt_"]').last();
    const _eventId = (await first.textContent()) ?? '';
    await first.click();
    await expect.poll(() => page.locator('table').first().textContent()).toContain('200');
    const before = receiver.received.length;
    await page.getByRole('link', { name: 'Send again…' }).click();
    await page.getByRole('button', { name: 'Send again' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toBe('Sent again: a new delivery is on its way.');
    await receiver.waitFor(before + 1);
    // The IPN sent again is the event's: the same order, the same status.
    const ipns = decryptIpns(receiver, merchant.sites[0]?.ipnSecret ?? '');
    expect(ipns.at(-1)?.orderId).toBe(order.orderId);
    expect(ipns.at(-1)).toEqual(ipns[0]);
    await page.reload();
    expect(await page.getByRole('heading', { name: /^redelivery to / }).count()).toBe(1);
    await page.close();
  });

  it('the sandbox page advances the clock and fires a trigger', async () => {
    const page = await browser.newPage();
    await signInWithToken(page);
    const before = new Date(
      (
        await h.request<{ now: string }>('GET', '/sandbox/clock', {
          headers: { authorization: `Bearer ${h.adminToken}` },
        })
      ).body.now,
    );
    await page.goto(`${h.baseUrl}/console/sandbox`);
    await page.getByLabel('Advance by').fill('2h');
    await page.getByRole('button', { name: 'Advance the clock' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('The clock moved on 7200 s');
    const after = new Date(
      (
        await h.request<{ now: string }>('GET', '/sandbox/clock', {
          headers: { authorization: `Bearer ${h.adminToken}` },
        })
      ).body.now,
    );
    expect(after.getTime() - before.getTime()).toBe(7_200_000);

    await page.getByLabel('Advance by').fill('ten minutes');
    await page.getByRole('button', { name: 'Advance the clock' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('The duration must be');

    await page.getByLabel('Event', { exact: true }).selectOption('transaction.complete-ok');
    await page.getByLabel(/Tenant id/).fill(String(merchant.sites[0]?.id));
    await page.getByRole('button', { name: 'Trigger' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toBe(`Triggered transaction.complete-ok for payments tenant ${merchant.sites[0]?.id}.`);
    await page.close();
  });

  it('a member signs in with a password, is refused a wrong one, turns on TOTP, and never sees another merchant', async () => {
    const email = `member-${Date.now()}@shop.example`;
    const password = 'a long enough password';
    const created = await h.admin('POST', '/console-users', {
      json: { email, password, role: 'member', tenant: { kind: 'merchant', id: String(merchant.id) } },
    });
    expect(created.status).toBe(201);
    const page = await browser.newPage();

    await signIn(page, email, 'not the password');
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Wrong email or password.');
    await signIn(page, email, password);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Overview');
    const sections = await page.locator('nav .nav-title').allTextContents();
    expect(sections).toEqual([
      'Overview',
      'Payments',
      'Risk',
      'Ledger',
      'Money out',
      'Developers',
      'Team',
      'You',
    ]);

    // Their own order opens; another merchant's is not found, by URL and by search.
    await search(page, order.orderId);
    await expect.poll(() => page.locator('.object-id code').textContent()).toBe(String(order.orderId));
    const foreign = await page.goto(`${h.baseUrl}/console/payments/orders/${otherOrderId}`);
    expect(foreign?.status()).toBe(404);
    expect(await page.locator('h1').textContent()).toBe('Not found');
    await search(page, otherOrderId);
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Nothing you can see');
    expect((await page.goto(`${h.baseUrl}/console/crypto/orders`))?.status()).toBe(404);

    // A form with a wrong CSRF token is refused and changes nothing.
    await page.goto(`${h.baseUrl}/console/account`);
    await page.evaluate(
      `for (const input of document.querySelectorAll('input[name="csrf"]')) input.value = 'forged'`,
    );
    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Refused');
    expect((await page.goto(`${h.baseUrl}/console/account`))?.status()).toBe(200);
    // The same form posted from another site does not carry the session (SameSite) and does nothing.
    await page.setContent(
      `<form method="post" action="${h.baseUrl}/console/account/sign-out-everywhere"><input name="csrf" value="x"></form>`,
    );
    await Promise.all([page.waitForNavigation(), page.evaluate('document.forms[0].submit()')]);
    expect((await page.goto(`${h.baseUrl}/console/account`))?.status()).toBe(200);

    // Two-step sign-in: the app's secret from the page, a code from it.
    const secret = (await page.locator('[data-field="totp-secret"]').textContent()) ?? '';
    const totp = new TOTP({ secret: Secret.fromBase32(secret) });
    await page.getByLabel('Code from the app').fill(totp.generate());
    await page.getByRole('button', { name: 'Turn two-step sign-in on' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Two-step sign-in is on');
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Sign in to Tessera');

    await signIn(page, email, password);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Enter your code');
    await page.getByLabel('Code').fill('000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('That code is not right.');
    // A code is good once: the one used to turn it on is spent, the next period's is accepted.
    await page.getByLabel('Code').fill(totp.generate({ timestamp: Date.now() + 30_000 }));
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Overview');
    await page.close();
  });

  it('an operator sets a store’s EVM wallet: a private key is refused naming the field, an xpub saved with its first address', async () => {
    const store = await aStore(h);
    const page = await browser.newPage();
    await signInWithToken(page);
    await page.goto(`${h.baseUrl}/console/crypto/stores/${store.id}`);
    expect(await page.locator('dl, table').first().textContent()).toContain(
      'the operator’s (TESSERA_EVM_XPUB)',
    );
    await page.getByRole('link', { name: 'Change the EVM wallet…' }).click();
    await page.getByLabel('Extended public key').fill(ABANDON_XPRV);
    await page.getByRole('button', { name: 'Save the wallet' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('this is a private key');
    expect(await page.getByLabel('Extended public key').getAttribute('aria-invalid')).toBe('true');
    expect((await h.admin<{ evmXpub: string | null }>('GET', `/stores/${store.id}`)).body.evmXpub).toBeNull();

    await page.getByLabel('Extended public key').fill(ABANDON_XPUB);
    await page.getByRole('button', { name: 'Save the wallet' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Saved.');
    // The first address of m/44'/60'/0'/0/0 of BIP39's "abandon … about", as every wallet shows it.
    expect(await page.locator('main').textContent()).toContain('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
    expect((await h.admin<{ evmXpub: string | null }>('GET', `/stores/${store.id}`)).body.evmXpub).toBe(
      ABANDON_XPUB,
    );

    // Emptied: back to the operator's wallet.
    await page.getByRole('link', { name: 'Change the EVM wallet…' }).click();
    await page.getByLabel('Extended public key').fill('');
    await page.getByRole('button', { name: 'Save the wallet' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Saved.');
    expect((await h.admin<{ evmXpub: string | null }>('GET', `/stores/${store.id}`)).body.evmXpub).toBeNull();
    await page.close();
  });

  it('console pages at 390 px and 1280 px: no overflow, no serious or critical axe violation, the sandbox banner', async () => {
    const store = await aStore(h);
    await h.admin('PATCH', `/stores/${store.id}`, { json: { evmXpub: ABANDON_XPUB } });
    const cryptoOrder = await aCryptoOrder(h, store);
    await pay(h, cryptoOrder.id);
    const partner = await h.admin<{ id: string; apiKey: string }>('POST', '/partners', {
      json: { name: 'Console partner' },
    });
    const cardholder = await aCardholder(h, partner.body.apiKey);
    const disputed = await payments(h, merchant, 'POST', '/order', anOrder(await aCustomer(h, merchant)));
    const dispute = await h.request<{ disputeId: number }>(
      'POST',
      `/sandbox/payments/transactions/${disputed.body.data.transactionId}/chargeback`,
      { headers: { authorization: `Bearer ${h.adminToken}` }, json: { reasonCode: '10.4' } },
    );
    // A payout with items, so its page and its list are crawled too.
    const { payoutId } = await aSitePayout(h, 'Console Layout GmbH');
    expect((await fetch(`${h.baseUrl}/favicon.ico`)).headers.get('content-type')).toBe('image/x-icon');
    const paths = [
      '/console',
      `/console/money/payouts/${payoutId}`,
      '/console/payments/orders',
      `/console/payments/orders/${order.orderId}`,
      `/console/payments/transactions/${order.transactionId}`,
      `/console/payments/transactions/${order.transactionId}/refund`,
      '/console/payments/disputes',
      `/console/payments/disputes/${dispute.body.disputeId}`,
      `/console/payments/sites/${merchant.sites[0]?.id}`,
      `/console/crypto/orders/${cryptoOrder.id}`,
      `/console/crypto/stores/${store.id}`,
      `/console/crypto/stores/${store.id}/evm-wallet`,
      `/console/issuing/customers/${cardholder.customerId}`,
      '/console/issuing/cards',
      '/console/ledger/accounts',
      `/console/money/balances?tenant=site:${merchant.sites[0]?.id}`,
      `/console/money/bank-accounts/site:${merchant.sites[0]?.id}`,
      '/console/money/payouts',
      '/console/approvals',
      '/console/audit',
      '/console/members',
      '/console/members/new',
      '/console/money/reports',
      '/console/developers/events',
      '/console/developers/keys',
      '/console/sandbox',
      '/console/account',
    ];
    const problems: string[] = [];
    for (const width of [390, 1280]) {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      await page.goto(`${h.baseUrl}/console/sign-in`);
      await checkPage(page, `sign-in at ${width}`, problems);
      await signInWithToken(page);
      for (const path of paths) {
        const answer = await page.goto(`${h.baseUrl}${path}`);
        if (answer?.status() !== 200) problems.push(`${path}: ${answer?.status()}`);
        await checkPage(page, `${path} at ${width}`, problems);
        await checkConsoleLayout(page, `${path} at ${width}`, width, problems);
        // docs/console.md's pictures: TESSERA_SCREENSHOTS=<folder> keeps the home, order, payout and
        // dispute pages as a person sees them at 1280 px
        const picture = SCREENSHOTS[path.replace(/\/[^/]*\d[^/]*$/, '/:id')];
        if (process.env.TESSERA_SCREENSHOTS && width === 1280 && picture) {
          await page.screenshot({
            path: `${process.env.TESSERA_SCREENSHOTS}/${picture}.jpeg`,
            type: 'jpeg',
            quality: 70,
            fullPage: true,
          });
        }
      }
      await page.close();
    }
    expect(problems).toEqual([]);

    // Ids say what they are: an event's objects by the payload's own names; cards by their last four.
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signInWithToken(page);
    await page.goto(`${h.baseUrl}/console/developers/events`);
    const kinds = await page.locator('.labelled-id .id-kind').allTextContents();
    expect(kinds).toEqual(expect.arrayContaining(['order', 'transaction', 'customer']));
    await page.goto(`${h.baseUrl}/console/issuing/cards`);
    expect(await page.locator('table').textContent()).toMatch(/•• •••• \d{4}/);
    // Charts' legends show each series' total over the period until a day is hovered.
    await page.goto(`${h.baseUrl}/console`);
    await expect
      .poll(() => page.locator('.u-legend .u-value').allTextContents())
      .toContainEqual(expect.stringMatching(/ in total$/));
    // The search box keeps a query that found nothing.
    await page.goto(`${h.baseUrl}/console/search?q=no-such-id-42`);
    expect(await page.locator('#console-search').inputValue()).toBe('no-such-id-42');
    await page.close();
  }, 120_000);
});
