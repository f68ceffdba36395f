// Compliance as its officers work it (docs/compliance.md, Console, Four eyes, Onboarding): the
// `compliance` role's console pages over a case that screening opened — the alert beside the list entry,
// a look-up that records nothing, the onboarding queue and its decision — four eyes on every decision
// (TESSERA_COMPLIANCE_FOUR_EYES=all: proposed by one, made by another, never by the proposer), and an
// invitation to the hosted onboarding page taken to the end over HTTP: refused answers shown by field, the
// profile submitted, the person's console account made, the link closed.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient } from '../harness/console-client.ts';
import { Harness } from '../harness/harness.ts';
import { aMerchant } from '../harness/payments-builders.ts';
import { unList } from '../harness/un-list.ts';

const UN_LIST = unList([
  { id: '6920001', first: 'ZORAN', second: 'ILYICH', third: 'BEZRUKOV', dateOfBirth: '1971-03-12' },
]);

const director = { name: 'Maria Ionescu', dateOfBirth: '1980-01-02', nationality: 'RO' };
const profileWith = (owners: unknown[]) => ({
  legalName: 'Delta Goods SRL',
  registrationNumber: 'J40/5555/2022',
  country: 'RO',
  address: { line1: 'Str. Lungă 3', city: 'Brașov', postalCode: '500001', country: 'RO' },
  mcc: '5411',
  owners,
  directors: [director],
});
const LISTED_OWNER = {
  name: 'Zoran Ilyich Bezrukov',
  dateOfBirth: '1971-03-12',
  nationality: 'RU',
  countryOfResidence: 'CY',
  ownershipPercent: 40,
};

interface CaseDetail {
  case: {
    id: string;
    status: string;
    decidedBy: string | null;
    assignee?: string | null;
    proposal: { decision: string; by: string; reason: string } | null;
  };
  notes: { author: string; body: string }[];
  holds: { objectKind: string; releasedAt: string | null }[];
}

let h: Harness;
let officer: { client: ConsoleClient; email: string };

async function consoleUser(role: string, tenant?: { kind: string; id: string }) {
  const email = `${role}-${randomBytes(4).toString('hex')}@compliance.example`;
  const password = 'correct horse battery staple';
  const created = await h.admin('POST', '/console-users', {
    json: { email, password, role, ...(tenant ? { tenant } : {}) },
  });
  expect(created.status, created.text).toBe(201);
  const client = new ConsoleClient(h.baseUrl);
  expect((await client.signIn({ email, password })).location).toBe('/console');
  return { client, email };
}

/** A merchant whose profile names a listed owner: screening opens a case that holds it */
async function aHeldMerchant() {
  const m = await aMerchant(h);
  const put = await h.admin('PUT', `/merchants/${m.id}/business-profile`, {
    json: profileWith([LISTED_OWNER]),
  });
  expect(put.status, put.text).toBe(200);
  const cases = await h.admin<{ data: { id: string; subject: string }[] }>(
    'GET',
    `/compliance/cases?tenant=merchant:${m.id}&status=open`,
  );
  const found = cases.body.data.find((c) => c.subject === `merchant:${m.id}`);
  expect(found).toBeDefined();
  return { merchantId: m.id, caseId: found?.id as string };
}

const detail = async (id: string) => (await h.admin<CaseDetail>('GET', `/compliance/cases/${id}`)).body;
const adminDecides = (id: string, decision: string, reason = 'checked') =>
  h.admin<CaseDetail & { error?: { message: string } }>('POST', `/compliance/cases/${id}/decision`, {
    json: { decision, reason },
  });
const consoleDecides = async (id: string, verb: 'clear' | 'confirm', reason: string) => {
  const path = `/console/compliance/cases/${id}/${verb}`;
  return officer.client.post(path, {
    csrf: await officer.client.csrf(path),
    idempotencyKey: randomBytes(8).toString('hex'),
    reason,
  });
};

beforeAll(async () => {
  h = await Harness.start({ env: { TESSERA_COMPLIANCE_FOUR_EYES: 'all' } });
  const imported = await h.admin('POST', '/compliance/sanctions/imports?source=un', {
    body: UN_LIST,
    headers: { 'content-type': 'application/xml' },
  });
  expect(imported.status).toBe(201);
  officer = await consoleUser('compliance');
});
afterAll(() => h.close());

describe('four eyes on a case’s decision', () => {
  it('waits for a second person: the proposer cannot make it, another decision replaces it, the same one by someone else makes it', async () => {
    const { caseId } = await aHeldMerchant();
    // The officer proposes to confirm: nothing changes but the proposal
    const proposed = await consoleDecides(caseId, 'confirm', 'the date of birth matches');
    expect(proposed.location).toBe(`/console/compliance/cases/${caseId}?done=proposed`);
    expect((await detail(caseId)).case).toMatchObject({
      status: 'open',
      proposal: { decision: 'confirmed', by: officer.email },
    });
    // The admin token proposes otherwise: its proposal replaces the officer's (202, still open)
    const other = await adminDecides(caseId, 'cleared', 'a namesake: another passport');
    expect(other.status).toBe(202);
    expect(other.body.case).toMatchObject({
      status: 'open',
      proposal: { decision: 'cleared', by: 'admin token' },
    });
    expect(other.body.holds.every((x) => x.releasedAt === null)).toBe(true);
    // …and cannot make it alone
    const alone = await adminDecides(caseId, 'cleared');
    expect(alone.status).toBe(409);
    expect(alone.body.error?.message).toMatch(/four eyes/);
    // The officer makes the same decision: made, released, the proposal gone
    const page = await officer.client.get(`/console/compliance/cases/${caseId}`);
    expect(page.text).toContain('admin token proposed to clear this case');
    const made = await consoleDecides(caseId, 'clear', 'agreed: another passport');
    expect(made.location).toBe(`/console/compliance/cases/${caseId}?done=cleared`);
    const decided = await detail(caseId);
    expect(decided.case).toMatchObject({ status: 'cleared', decidedBy: officer.email, proposal: null });
    expect(decided.holds.every((x) => x.releasedAt !== null)).toBe(true);
    expect(decided.notes.map((n) => [n.author, n.body])).toEqual([
      [officer.email, 'Proposed confirmed (a second person decides): the date of birth matches'],
      ['admin token', 'Proposed cleared (a second person decides): a namesake: another passport'],
    ]);
    const audit = await h.admin<{ data: { action: string; actor: string; objectId: string }[] }>(
      'GET',
      `/audit-events?objectId=${caseId}`,
    );
    const decisions = audit.body.data.filter((r) => r.action === 'compliance_case.decided');
    expect(decisions.map((r) => r.actor).sort()).toEqual(
      ['admin token', 'admin token', officer.email, officer.email].sort(),
    );
  });
});

describe('the compliance role’s console', () => {
  it('works a case, looks a name up without recording it, and decides an application', async () => {
    const { merchantId, caseId } = await aHeldMerchant();
    const { client } = officer;
    const list = await client.get('/console/compliance/cases');
    expect(list.status).toBe(200);
    expect(list.text).toContain(`Case ${caseId}`);
    const page = await client.get(`/console/compliance/cases/${caseId}`);
    // The owner as screened beside the UN entry
    expect(page.text).toContain('Zoran Ilyich Bezrukov');
    expect(page.text).toContain('ZORAN ILYICH BEZRUKOV');
    expect(page.text).toContain('1971-03-12');
    const noted = await client.post(`/console/compliance/cases/${caseId}/notes`, {
      csrf: await client.csrf(`/console/compliance/cases/${caseId}`),
      body: 'asked the merchant for the owner’s passport',
    });
    expect(noted.location).toBe(`/console/compliance/cases/${caseId}?done=noted`);
    const empty = await client.post(`/console/compliance/cases/${caseId}/notes`, {
      csrf: await client.csrf(`/console/compliance/cases/${caseId}`),
      body: '   ',
    });
    expect(empty.status).toBe(400);
    const assign = `/console/compliance/cases/${caseId}/assign`;
    const tooLong = await client.post(assign, { csrf: await client.csrf(assign), assignee: 'x'.repeat(201) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.text).toMatch(/id="field-assignee"[^>]*aria-invalid="true"/);
    const assigned = await client.post(assign, { csrf: await client.csrf(assign), assignee: officer.email });
    expect(assigned.location).toBe(`/console/compliance/cases/${caseId}?done=saved`);
    expect((await detail(caseId)).case).toMatchObject({ assignee: officer.email });
    const csv = await client.get(`/console/compliance/cases/${caseId}/timeline.csv`);
    expect(csv.text.split(/\r?\n/)[0]).toBe('at,kind,object,detail');
    expect(csv.text).toContain('asked the merchant for the owner’s passport');

    const alertsBefore = (await h.admin<{ data: unknown[] }>('GET', '/compliance/alerts?limit=100')).body
      .data;
    const lookUp = await client.get(
      '/console/compliance/screening?name=Bezrukov+Zoran&dateOfBirth=1971-03-12',
    );
    expect(lookUp.text).toContain('ZORAN ILYICH BEZRUKOV');
    expect(lookUp.text).toContain('Sanctions matches, newest first');
    expect(
      (await h.admin<{ data: unknown[] }>('GET', '/compliance/alerts?limit=100')).body.data,
    ).toHaveLength(alertsBefore.length);
    expect((await client.get('/console/compliance/monitoring')).status).toBe(200);

    await h.admin('POST', `/merchants/${merchantId}/business-profile/submit`);
    const queue = await client.get('/console/compliance/onboarding');
    expect(queue.text).toContain(`/console/compliance/onboarding/merchant:${merchantId}`);
    const form = new FormData();
    form.append('kind', 'proof_of_address');
    form.append('file', new Blob([Buffer.from('%PDF-1.4\n%%EOF\n')]), 'utility-bill.pdf');
    const uploaded = await fetch(`${h.baseUrl}/admin/merchants/${merchantId}/business-profile/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.adminToken}` },
      body: form,
    });
    const documentId = ((await uploaded.json()) as { data: { id: string }[] }).data[0]?.id;
    const profile = await client.get(`/console/compliance/onboarding/merchant:${merchantId}`);
    expect(profile.text).toContain(`/documents/${documentId}">utility-bill.pdf</a>`);
    const file = await client.get(
      `/console/compliance/onboarding/merchant:${merchantId}/documents/${documentId}`,
    );
    expect(file.text).toBe('%PDF-1.4\n%%EOF\n');
    expect(profile.text).toContain('Delta Goods SRL');
    expect(profile.text).toContain(`Case ${caseId}`);
    const path = `/console/compliance/onboarding/merchant:${merchantId}/decide`;
    const wrong = await client.post(path, { csrf: await client.csrf(path), decision: 'maybe', reason: 'x' });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toMatch(/id="field-decision"[^>]*aria-invalid="true"/);
    const approved = await client.post(path, {
      csrf: await client.csrf(path),
      decision: 'approved',
      reason: 'registry extract and passports checked',
    });
    expect(approved.location).toBe(`/console/compliance/onboarding/merchant:${merchantId}?done=decided`);
    const answer = await h.admin<{ status: string; decidedBy: string }>(
      'GET',
      `/merchants/${merchantId}/business-profile`,
    );
    expect(answer.body).toMatchObject({ status: 'approved', decidedBy: officer.email });
    expect((await client.get('/console/compliance/onboarding/merchant:999999999')).status).toBe(404);
    expect((await client.get('/console/compliance/cases/not-a-case')).status).toBe(404);
  });

  it('is the compliance role’s alone: the operator and a tenant’s admin are refused, and the officer moves no money', async () => {
    const operator = await ConsoleClient.operator(h);
    expect((await operator.get('/console/compliance/cases')).status).toBe(403);
    const m = await aMerchant(h);
    const admin = await consoleUser('admin', { kind: 'merchant', id: String(m.id) });
    expect((await admin.client.get('/console/compliance/cases')).status).toBe(403);
    expect((await officer.client.get('/console/money/reports')).status).toBe(403);
    const nav = (await officer.client.get('/console')).text;
    expect(nav).toContain('href="/console/compliance/cases"');
    expect(nav).not.toContain('href="/console/money/reports"');
  });
});

describe('an invitation to the hosted onboarding page', () => {
  const form = (overrides: Record<string, string> = {}) => ({
    legalName: 'Brightside Books Ltd',
    registrationNumber: '09876543',
    country: 'gb',
    mcc: '5942',
    'address.line1': '12 Paper Lane',
    'address.postalCode': 'EC1A 1BB',
    'address.city': 'London',
    'address.country': 'GB',
    'owners.0.name': 'Priya Shah',
    'owners.0.dateOfBirth': '1986-07-09',
    'owners.0.nationality': 'GB',
    'owners.0.countryOfResidence': 'GB',
    'owners.0.ownershipPercent': '100',
    'directors.0.name': 'Priya Shah',
    'directors.0.dateOfBirth': '1986-07-09',
    'directors.0.nationality': 'GB',
    directorRows: '3',
    password: 'a long and private passphrase',
    passwordAgain: 'a long and private passphrase',
    ...overrides,
  });
  const linkSentTo = async (email: string) => {
    const sent = await h.request<{ data: { body: string }[] }>(
      'GET',
      `/sandbox/messages?recipient=${encodeURIComponent(email)}&limit=1`,
      { headers: { authorization: `Bearer ${h.adminToken}` } },
    );
    const link = /https?:\/\/\S+\/onboarding\/([\w-]+)/.exec(sent.body.data[0]?.body ?? '');
    expect(link, sent.text).not.toBeNull();
    return `/onboarding/${link?.[1]}`;
  };

  it('takes a profile to review with no password until the end, then gives its person the console', async () => {
    const m = await aMerchant(h);
    const email = `owner-${randomBytes(4).toString('hex')}@brightside.example`;
    const invited = await h.admin<{ id: string; tenant: string; email: string; expiresAt: string }>(
      'POST',
      `/merchants/${m.id}/onboarding-invitations`,
      { json: { email: email.toUpperCase() } },
    );
    expect(invited.status, invited.text).toBe(201);
    expect(invited.body).toMatchObject({ tenant: `merchant:${m.id}`, email });
    expect(invited.text).not.toContain('/onboarding/');
    const days = (Date.parse(invited.body.expiresAt) - h.services.clock.now().getTime()) / 86_400_000;
    expect(Math.round(days)).toBe(7);
    // A second invitation replaces the first: only the newest link opens
    const first = await linkSentTo(email);
    await h.admin('POST', `/merchants/${m.id}/onboarding-invitations`, { json: { email } });
    const link = await linkSentTo(email);
    expect(link).not.toBe(first);
    const browser = new ConsoleClient(h.baseUrl);
    expect((await browser.get(first)).status).toBe(404);
    const opened = await browser.get(link);
    expect(opened.status).toBe(200);
    expect(opened.text).toContain('Tell us about your business');
    expect(opened.text).toContain('Choose a password');

    // Refusals are shown beside their fields, what was typed kept
    const refused = await browser.post(
      link,
      form({ mcc: '59', 'owners.0.ownershipPercent': '10', passwordAgain: 'something else entirely' }),
    );
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/id="f-mcc"[^>]*aria-invalid="true"/);
    expect(refused.text).toMatch(/id="f-owners-0-ownershipPercent"[^>]*aria-invalid="true"/);
    expect(refused.text).toContain('owners are those holding 25 % or more');
    expect(refused.text).toMatch(/id="f-passwordAgain"[^>]*aria-invalid="true"/);
    expect(refused.text).toContain('value="Brightside Books Ltd"');
    expect(refused.text).not.toContain('a long and private passphrase');
    expect(
      (
        await browser.post(
          link,
          form({ 'directors.0.name': '', 'directors.0.dateOfBirth': '', 'directors.0.nationality': '' }),
        )
      ).text,
    ).toContain('at least one director');
    expect((await h.admin('GET', `/merchants/${m.id}/business-profile`)).status).toBe(404);

    // With its documents (multipart, as the page's form sends them): a file that is not a PDF, PNG or
    // JPEG is refused beside its field, and the one that was fine is asked for again
    const withFiles = (files: [string, string, Buffer][]) => {
      const body = new FormData();
      for (const [k, v] of Object.entries(form())) body.append(k, v);
      for (const [field, name, bytes] of files) body.append(field, new Blob([bytes]), name);
      // An input left empty is sent as a part with no file name and no bytes
      body.append('ownership_structure', new Blob([]), '');
      return fetch(`${h.baseUrl}${link}`, { method: 'POST', body });
    };
    const extract = Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n');
    const wrongFile = await withFiles([
      ['registration_extract', 'extract.pdf', extract],
      ['proof_of_address', 'bill.txt', Buffer.from('a bill, typed out')],
    ]);
    expect(wrongFile.status).toBe(400);
    const wrongPage = await wrongFile.text();
    expect(wrongPage).toMatch(/id="f-proof_of_address"[^>]*aria-invalid="true"/);
    expect(wrongPage).toContain('bill.txt is not a PDF, PNG or JPEG file');
    expect(wrongPage).toContain('choose the file again');
    expect((await h.admin('GET', `/merchants/${m.id}/business-profile`)).status).toBe(404);

    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
    const done = await withFiles([
      ['registration_extract', 'extract.pdf', extract],
      ['proof_of_address', 'bill.png', png],
    ]);
    const donePage = await done.text();
    expect(done.status, donePage.slice(0, 400)).toBe(200);
    expect(donePage).toContain('Sent for review');
    const documents = await h.admin<{ data: { kind: string; filename: string; uploadedBy: string }[] }>(
      'GET',
      `/merchants/${m.id}/business-profile/documents`,
    );
    expect(documents.body.data.map((d) => [d.kind, d.filename, d.uploadedBy]).sort()).toEqual([
      ['proof_of_address', 'bill.png', email],
      ['registration_extract', 'extract.pdf', email],
    ]);
    const profile = await h.admin<{ status: string; profile: { country: string } }>(
      'GET',
      `/merchants/${m.id}/business-profile`,
    );
    expect(profile.body).toMatchObject({ status: 'submitted', profile: { country: 'GB' } });
    // The link is closed; the person signs in with the password they chose, as the merchant's admin
    expect((await browser.get(link)).status).toBe(404);
    expect((await browser.post(link, form())).status).toBe(404);
    const person = new ConsoleClient(h.baseUrl);
    expect((await person.signIn({ email, password: 'a long and private passphrase' })).location).toBe(
      '/console',
    );
    expect((await person.get('/console')).text).toContain(`${email} · admin · merchant ${m.id}`);
    const audit = await h.admin<{ data: { action: string; actor: string }[] }>(
      'GET',
      `/audit-events?objectId=merchant:${m.id}`,
    );
    expect(audit.body.data.map((r) => [r.action, r.actor])).toContainEqual([
      'business_profile.submitted',
      email,
    ]);
  });

  it('answers bad invitations: an unknown tenant, a bad email, an unknown link', async () => {
    expect(
      (
        await h.admin('POST', '/merchants/999999999/onboarding-invitations', {
          json: { email: 'a@b.example' },
        })
      ).status,
    ).toBe(404);
    const m = await aMerchant(h);
    const bad = await h.admin<{ error: { field: string } }>(
      'POST',
      `/merchants/${m.id}/onboarding-invitations`,
      {
        json: { email: 'not an email' },
      },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('email');
    expect(
      (await new ConsoleClient(h.baseUrl).get('/onboarding/not-a-real-invitation-token-at-all')).status,
    ).toBe(404);
    const path = '/console/compliance/onboarding/invite';
    const unknown = await officer.client.post(path, {
      csrf: await officer.client.csrf(path),
      tenant: 'merchant:999999999',
      email: 'x@y.example',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toMatch(/id="field-tenant"[^>]*aria-invalid="true"/);
    const sent = await officer.client.post(path, {
      csrf: await officer.client.csrf(path),
      tenant: `merchant:${m.id}`,
      email: 'invitee@shop.example',
    });
    expect(sent.location).toBe('/console/compliance/onboarding?done=invited');
    expect(await linkSentTo('invitee@shop.example')).toMatch(/^\/onboarding\//);
  });
});
