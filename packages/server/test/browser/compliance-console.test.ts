// Compliance in Chromium (docs/compliance.md, Onboarding and Console): the hosted onboarding page walked
// by an invited person at a phone's width — a refusal shown beside its field and fixed, the profile sent,
// the console opened with the password chosen there — and the page, and every compliance console page,
// at 390 px and 1280 px: no overflow, no serious or critical axe-core violation.
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasBrowser, launchBrowser } from '../harness/browser.ts';
import { checkConsoleLayout, checkPage } from '../harness/console-page-checks.ts';
import { Harness } from '../harness/harness.ts';
import { aMerchant } from '../harness/payments-builders.ts';
import { unList } from '../harness/un-list.ts';

const UN_LIST = unList([
  { id: '6930001', first: 'OKSANA', second: 'PETROVNA', third: 'ZHURAVLEVA', dateOfBirth: '1975-10-04' },
]);

describe.skipIf(!hasBrowser)('compliance in Chromium', () => {
  let h: Harness;
  let browser: Browser;

  beforeAll(async () => {
    h = await Harness.start();
    browser = await launchBrowser();
    await h.admin('POST', '/compliance/sanctions/imports?source=un', {
      body: UN_LIST,
      headers: { 'content-type': 'application/xml' },
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  async function invitation(merchantId: number, email: string): Promise<string> {
    const invited = await h.admin('POST', `/merchants/${merchantId}/onboarding-invitations`, {
      json: { email },
    });
    expect(invited.status, invited.text).toBe(201);
    const sent = await h.request<{ data: { body: string }[] }>(
      'GET',
      `/sandbox/messages?recipient=${encodeURIComponent(email)}&limit=1`,
      { headers: { authorization: `Bearer ${h.adminToken}` } },
    );
    const path = /\/onboarding\/[\w-]+/.exec(sent.body.data[0]?.body ?? '')?.[0];
    expect(path).toBeDefined();
    return `${h.baseUrl}${path}`;
  }

  it('an invited person fills the page in on a phone, fixes what was refused, and signs in to the console', async () => {
    const m = await aMerchant(h);
    const email = `founder-${randomBytes(4).toString('hex')}@lighthouse.example`;
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(await invitation(m.id, email));
    await page.getByLabel('Legal name').fill('Lighthouse Coffee SRL');
    await page.getByLabel('Registration number').fill('J12/4321/2023');
    await page.getByLabel('Country of registration').fill('RO');
    await page.getByLabel('Merchant category code').fill('581');
    await page.getByLabel('Street and number').fill('Str. Farului 7');
    await page.getByLabel('Postal code').fill('900001');
    await page.getByLabel('City').fill('Constanța');
    await page.getByLabel('Country', { exact: true }).fill('RO');
    const owner = page.getByRole('group', { name: 'Owner 1' });
    await owner.getByLabel('Full name').fill('Elena Dumitru');
    await owner.getByLabel('Date of birth').fill('1990-04-21');
    await owner.getByLabel('Nationality').fill('RO');
    await owner.getByLabel('Country of residence').fill('RO');
    await owner.getByLabel('Share held (%)').fill('100');
    const director = page.getByRole('group', { name: 'Director 1' });
    await director.getByLabel('Full name').fill('Elena Dumitru');
    await director.getByLabel('Date of birth').fill('1990-04-21');
    await director.getByLabel('Nationality').fill('RO');
    await page.getByLabel('Choose a password').fill('salt air and strong coffee');
    await page.getByLabel('The password again').fill('salt air and strong coffee');
    await page.getByRole('button', { name: 'Send for review' }).click();

    // The three-digit category is refused beside its field; what was typed stays, but the password
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toContain('four-digit merchant category code');
    const mcc = page.getByLabel('Merchant category code');
    expect(await mcc.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Legal name').inputValue()).toBe('Lighthouse Coffee SRL');
    const problems: string[] = [];
    await checkPage(page, 'onboarding refused at 390', problems);
    await mcc.fill('5814');
    await page.getByLabel('Choose a password').fill('salt air and strong coffee');
    await page.getByLabel('The password again').fill('salt air and strong coffee');
    // The registry extract goes with the form, as a file chosen on the phone
    await page.getByLabel('Extract from the company register').setInputFiles({
      name: 'extract.pdf',
      mimeType: 'application/pdf',
      buffer: Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n'),
    });
    await page.getByRole('button', { name: 'Send for review' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Sent for review');
    const documents = await h.admin<{ data: { kind: string; filename: string }[] }>(
      'GET',
      `/merchants/${m.id}/business-profile/documents`,
    );
    expect(documents.body.data).toEqual([
      expect.objectContaining({ kind: 'registration_extract', filename: 'extract.pdf' }),
    ]);

    await page.getByRole('link', { name: 'Sign in to your console' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('salt air and strong coffee');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Overview');
    const profile = await h.admin<{ status: string }>('GET', `/merchants/${m.id}/business-profile`);
    expect(profile.body.status).toBe('submitted');
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it('the onboarding page and the compliance console at 390 px and 1280 px: no overflow, no serious or critical axe violation', async () => {
    // A case with an alert, an application waiting, an invitation to open
    const held = await aMerchant(h);
    await h.admin('PUT', `/merchants/${held.id}/business-profile`, {
      json: {
        legalName: 'Northwind Trading Company International Limited',
        registrationNumber: 'HE-445566',
        country: 'CY',
        address: { line1: '1 Harbour Road', city: 'Limassol', postalCode: '3036', country: 'CY' },
        mcc: '5999',
        owners: [
          {
            name: 'Oksana Petrovna Zhuravleva',
            dateOfBirth: '1975-10-04',
            nationality: 'RU',
            countryOfResidence: 'CY',
            ownershipPercent: 51,
          },
        ],
        directors: [{ name: 'Andreas Georgiou', dateOfBirth: '1979-01-30', nationality: 'CY' }],
      },
    });
    await h.admin('POST', `/merchants/${held.id}/business-profile/submit`);
    const cases = await h.admin<{ data: { id: string }[] }>(
      'GET',
      `/compliance/cases?tenant=merchant:${held.id}`,
    );
    const caseId = cases.body.data[0]?.id;
    expect(caseId).toBeDefined();
    const invited = await invitation(
      (await aMerchant(h)).id,
      `layout-${randomBytes(3).toString('hex')}@example.com`,
    );

    const email = `officer-${randomBytes(4).toString('hex')}@operator.example`;
    await h.admin('POST', '/console-users', {
      json: { email, password: 'correct horse battery staple', role: 'compliance' },
    });
    const paths = [
      '/console/compliance/cases',
      `/console/compliance/cases/${caseId}`,
      `/console/compliance/cases/${caseId}/clear`,
      '/console/compliance/screening?name=Zhuravleva+Oksana',
      '/console/compliance/monitoring',
      '/console/compliance/onboarding',
      '/console/compliance/onboarding/invite',
      `/console/compliance/onboarding/merchant:${held.id}`,
      `/console/compliance/onboarding/merchant:${held.id}/decide`,
    ];
    const problems: string[] = [];
    for (const width of [390, 1280]) {
      const page: Page = await browser.newPage({ viewport: { width, height: 900 } });
      await page.goto(invited);
      await checkPage(page, `onboarding page at ${width}`, problems);
      await page.goto(`${h.baseUrl}/console/sign-in`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('correct horse battery staple');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await expect.poll(() => page.locator('h1').textContent()).toBe('Overview');
      for (const path of paths) {
        const answer = await page.goto(`${h.baseUrl}${path}`);
        expect(answer?.status(), path).toBe(200);
        await checkPage(page, `${path} at ${width}`, problems);
        await checkConsoleLayout(page, `${path} at ${width}`, width, problems);
      }
      await page.close();
    }
    expect(problems).toEqual([]);
  }, 180_000);
});
