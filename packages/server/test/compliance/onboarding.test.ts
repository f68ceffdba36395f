// Merchant and store onboarding (docs/compliance.md, Onboarding) through the admin API, with
// TESSERA_ONBOARDING_REQUIRED=payouts: no payout leaves a merchant until its business profile is approved;
// an approved profile whose owners change goes back to review, and a newly added owner a sanctions list
// names opens a case that holds the merchant's next payout; the profile's bad inputs, field by field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aStore } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments, type TestMerchant } from '../harness/payments-builders.ts';
import { unList } from '../harness/un-list.ts';

interface ProfileAnswer {
  tenant: string;
  status: string;
  decisionReason: string | null;
  error?: { field?: string; message: string; details?: Record<string, unknown> };
}

const PROFILE = {
  legalName: 'Lumen Retail SRL',
  tradingName: 'Lumen',
  registrationNumber: 'J40/9876/2021',
  country: 'RO',
  address: { line1: 'Bd. Unirii 10', city: 'București', postalCode: '030167', country: 'RO' },
  mcc: '5732',
  website: 'https://lumen.example',
  expectedMonthlyVolume: { amount: '40000.00', currency: 'EUR' },
  owners: [
    {
      name: 'Ioana Marinescu',
      dateOfBirth: '1983-05-17',
      nationality: 'RO',
      countryOfResidence: 'RO',
      ownershipPercent: 70,
    },
  ],
  directors: [{ name: 'Ioana Marinescu', dateOfBirth: '1983-05-17', nationality: 'RO' }],
};
const LISTED_OWNER = {
  name: 'Dragomir Vasilyevich Kostenko',
  dateOfBirth: '1969-08-30',
  nationality: 'UA',
  countryOfResidence: 'CY',
  ownershipPercent: 30,
};
const UN_LIST = unList([
  { id: '6910001', first: 'DRAGOMIR', second: 'VASILYEVICH', third: 'KOSTENKO', dateOfBirth: '1969-08-30' },
]);

let h: Harness;
let m: TestMerchant;
let siteId: number;

beforeAll(async () => {
  h = await Harness.start({ env: { TESSERA_ONBOARDING_REQUIRED: 'payouts' } });
  m = await aMerchant(h);
  siteId = m.sites[0]?.id as number;
  await h.admin('PUT', `/merchants/${m.id}/sites/${siteId}/payout-schedule`, {
    json: { interval: 'daily', delayDays: 0, minimum: '1.00' },
  });
  await h.admin('PUT', `/merchants/${m.id}/sites/${siteId}/bank-account`, {
    json: { iban: 'DE89370400440532013000', holderName: 'Lumen Retail SRL' },
  });
  const imported = await h.admin('POST', '/compliance/sanctions/imports?source=un', {
    body: UN_LIST,
    headers: { 'content-type': 'application/xml' },
  });
  expect(imported.status).toBe(201);
});
afterAll(() => h.close());

const profilePath = () => `/merchants/${m.id}/business-profile`;
const put = (json: unknown) => h.admin<ProfileAnswer>('PUT', profilePath(), { json });
const decide = (decision: string, reason = 'documents checked') =>
  h.admin<ProfileAnswer>('POST', `${profilePath()}/decision`, { json: { decision, reason } });
const sell = async (amount: string) => {
  const customer = await aCustomer(h, m);
  expect((await payments(h, m, 'POST', '/order', anOrder(customer, { amount }))).status).toBe(201);
};
const runPayouts = async () =>
  (await h.admin<{ payouts: { id: string; siteId: number }[] }>('POST', '/payout-runs')).body.payouts.filter(
    (p) => p.siteId === siteId,
  );

/** The site's payouts, newest first */
const payoutsOfSite = () =>
  h.services.db
    .selectFrom('payouts')
    .select(['id', 'status'])
    .where('owner', '=', `site:${siteId}`)
    .orderBy('id', 'desc')
    .execute();

describe('a merchant’s business profile', () => {
  it('keeps every payout until it is approved, and sends an approved one back to review when an owner is added', async () => {
    await sell('25.00');
    expect(await runPayouts()).toEqual([]);
    const now = await h.admin<{ error: { details: { reason: string } } }>(
      'POST',
      `/merchants/${m.id}/sites/${siteId}/payouts`,
      { json: { currency: 'EUR' } },
    );
    expect(now.status).toBe(409);
    expect(now.body.error.details.reason).toBe('onboarding_required');

    expect((await h.admin('GET', profilePath())).status).toBe(404);
    const drafted = await put(PROFILE);
    expect(drafted.status, drafted.text).toBe(200);
    expect(drafted.body).toMatchObject({ tenant: `merchant:${m.id}`, status: 'draft' });
    expect((await decide('approved')).status).toBe(409);
    const submitted = await h.admin<ProfileAnswer>('POST', `${profilePath()}/submit`);
    expect(submitted.body.status).toBe('submitted');
    expect((await h.admin('POST', `${profilePath()}/submit`)).status).toBe(409);
    const asked = await decide('more_information', 'the registration certificate is missing');
    expect(asked.body).toMatchObject({
      status: 'more_information',
      decisionReason: 'the registration certificate is missing',
    });
    expect((await put(PROFILE)).body.status).toBe('draft');
    await h.admin('POST', `${profilePath()}/submit`);
    expect((await decide('approved')).body.status).toBe('approved');
    const paid = await runPayouts();
    expect(paid).toHaveLength(1);

    // A new website keeps the approval; a new owner does not — and this one a list names
    expect((await put({ ...PROFILE, website: 'https://lumen.example/shop' })).body.status).toBe('approved');
    const changed = await put({
      ...PROFILE,
      owners: [{ ...PROFILE.owners[0], ownershipPercent: 70 }, LISTED_OWNER],
    });
    expect(changed.body.status).toBe('submitted');
    const cases = await h.admin<{ data: { id: string; subject: string; status: string }[] }>(
      'GET',
      `/compliance/cases?tenant=merchant:${m.id}`,
    );
    const opened = cases.body.data.find((c) => c.subject === `merchant:${m.id}`);
    expect(opened?.status).toBe('open');
    const detail = await h.admin<{ alerts: { evidence: { party: { kind: string; name: string } } }[] }>(
      'GET',
      `/compliance/cases/${opened?.id}`,
    );
    expect(detail.body.alerts.map((a) => a.evidence.party)).toEqual([
      expect.objectContaining({ kind: 'owner', name: LISTED_OWNER.name }),
    ]);

    // Back in review: the next day's run pays nothing; approved again, the case holds the next payout
    await sell('30.00');
    await h.advanceClock(86_400);
    expect(await payoutsOfSite()).toHaveLength(1);
    expect((await decide('approved', 'owner documents checked')).body.status).toBe('approved');
    await h.advanceClock(86_400);
    const [held] = await payoutsOfSite();
    expect(held?.id).not.toBe(paid[0]?.id);
    expect(held?.status).toBe('held');
    // Cleared as a namesake: the payout goes on
    await h.admin('POST', `/compliance/cases/${opened?.id}/decision`, {
      json: { decision: 'cleared', reason: 'a namesake: different passport' },
    });
    const [released] = await payoutsOfSite();
    expect(released).toMatchObject({ id: held?.id });
    expect(released?.status).not.toBe('held');
  });

  it('takes a store’s profile the same way', async () => {
    const store = await aStore(h);
    const path = `/stores/${store.id}/business-profile`;
    const written = await h.admin<ProfileAnswer>('PUT', path, { json: PROFILE });
    expect(written.body).toMatchObject({ tenant: `store:${store.id}`, status: 'draft' });
    expect((await h.admin<ProfileAnswer>('POST', `${path}/submit`)).body.status).toBe('submitted');
    expect((await h.admin('GET', '/stores/no-such-store/business-profile')).status).toBe(404);
  });

  it('answers the profile’s bad inputs naming the field, and an unknown merchant 404', async () => {
    const field = async (json: unknown) => {
      const answer = await put(json);
      expect(answer.status, JSON.stringify(json).slice(0, 80)).toBe(400);
      return answer.body.error?.field;
    };
    expect(await field({ ...PROFILE, country: 'Romania' })).toBe('country');
    expect(await field({ ...PROFILE, mcc: '57' })).toBe('mcc');
    expect(await field({ ...PROFILE, directors: [] })).toBe('directors');
    expect(await field({ ...PROFILE, owners: [{ ...LISTED_OWNER, ownershipPercent: 10 }] })).toMatch(
      /ownershipPercent/,
    );
    expect(
      await field({ ...PROFILE, owners: [{ ...LISTED_OWNER, ownershipPercent: 60 }, PROFILE.owners[0]] }),
    ).toBe('owners');
    expect(await field({ ...PROFILE, owners: [{ ...LISTED_OWNER, dateOfBirth: '1969-02-30' }] })).toMatch(
      /dateOfBirth/,
    );
    expect(await field({ ...PROFILE, address: { ...PROFILE.address, city: '' } })).toMatch(/city/);
    expect(await field({ ...PROFILE, nickname: 'x' })).toBeDefined();
    expect((await h.admin('PUT', '/merchants/999999/business-profile', { json: PROFILE })).status).toBe(404);
    const wrongDecision = await decide('maybe');
    expect(wrongDecision.body.error?.field).toBe('decision');
  });
});

describe('a business profile’s documents', () => {
  const PDF = Buffer.from(
    '%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n',
  );
  const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
  const upload = (path: string, kind: string | undefined, files: [string, Buffer][]) => {
    const form = new FormData();
    if (kind !== undefined) form.append('kind', kind);
    for (const [name, bytes] of files) form.append('file', new Blob([bytes]), name);
    return fetch(`${h.baseUrl}/admin${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.adminToken}` },
      body: form,
    });
  };

  it('keeps them encrypted, reads them back whole, and refuses what is not a document, naming the field', async () => {
    const merchant = await aMerchant(h);
    const path = `/merchants/${merchant.id}/business-profile/documents`;
    expect((await upload(path, 'registration_extract', [['extract.pdf', PDF]])).status).toBe(404);
    await h.admin('PUT', `/merchants/${merchant.id}/business-profile`, { json: PROFILE });
    const added = await upload(path, 'registration_extract', [
      ['extract.pdf', PDF],
      ['stamp.png', PNG],
    ]);
    expect(added.status).toBe(201);
    const body = (await added.json()) as { data: { id: string; contentType: string; kind: string }[] };
    expect(body.data.map((d) => [d.kind, d.contentType])).toEqual([
      ['registration_extract', 'application/pdf'],
      ['registration_extract', 'image/png'],
    ]);
    const listed = await h.admin<{ data: { filename: string; bytes: number }[] }>('GET', path);
    expect(listed.body.data.map((d) => [d.filename, d.bytes])).toEqual([
      ['extract.pdf', PDF.length],
      ['stamp.png', PNG.length],
    ]);
    const file = await fetch(`${h.baseUrl}/admin${path}/${body.data[0]?.id}`, {
      headers: { authorization: `Bearer ${h.adminToken}` },
    });
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-disposition')).toBe('attachment; filename="extract.pdf"');
    expect(Buffer.from(await file.arrayBuffer()).equals(PDF)).toBe(true);
    const stored = await h.services.db
      .selectFrom('business_profile_documents')
      .select('content_enc')
      .where('tenant', '=', `merchant:${merchant.id}`)
      .execute();
    for (const row of stored) expect(row.content_enc).not.toContain(PDF.toString('base64').slice(0, 12));
    // Another merchant's path does not find it
    const other = await aMerchant(h);
    const foreign = await h.admin(
      'GET',
      `/merchants/${other.id}/business-profile/documents/${body.data[0]?.id}`,
    );
    expect(foreign.status).toBe(404);

    const refusal = async (answer: Response) => {
      expect(answer.status).toBe(400);
      return ((await answer.json()) as { error: { field?: string; message: string } }).error;
    };
    expect(
      await refusal(await upload(path, 'registration_extract', [['notes.txt', Buffer.from('not a pdf')]])),
    ).toMatchObject({
      field: 'file',
      message: 'notes.txt is not a PDF, PNG or JPEG file',
    });
    expect((await refusal(await upload(path, 'passport_scan', [['extract.pdf', PDF]]))).field).toBe('kind');
    expect((await refusal(await upload(path, undefined, [['extract.pdf', PDF]]))).field).toBe('kind');
    expect((await refusal(await upload(path, 'other', []))).field).toBe('documents');
    expect((await h.admin<{ data: unknown[] }>('GET', path)).body.data).toHaveLength(2);
  });
});
