// KYC over HTTP: every step stored with its validation, the hosted document checks through the KYC
// vendor simulator's page, the review decision, and kycStatusChanged on every change.
import { verifyIssuingWebhook } from '@tessera/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { KYC_STEPS } from '../harness/issuing-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let partner: { id: string; apiKey: string; webhookSigningKey: string };

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  partner = (
    await h.admin<typeof partner>('POST', '/partners', {
      json: { name: 'KYC partner', webhookUrl: receiver.url('/kyc') },
    })
  ).body;
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

type Kyc = {
  status: string;
  rejectReason: string | null;
  completedSteps: string[];
  missingSteps: string[];
  verifications: Record<string, string>;
};
type IssuingError = { error: string; field?: string; detail: string };

async function newCustomer(email?: string): Promise<{ customerId: string; token: string }> {
  const reg = await h.request<{ customerId: string }>('POST', '/issuing/v1/auth/register/partner', {
    headers: { 'x-partner-api-key': partner.apiKey },
    json: { userId: `kyc-${Math.random().toString(36).slice(2)}`, ...(email ? { email } : {}) },
  });
  const login = await h.request<{ accessToken: string }>('POST', '/issuing/v1/auth/login/partner', {
    headers: { 'x-partner-api-key': partner.apiKey },
    json: { customerId: reg.body.customerId },
  });
  return { customerId: reg.body.customerId, token: login.body.accessToken };
}

const kyc = <T = Kyc>(token: string, method: string, path: string, json?: unknown) =>
  h.request<T>(method, `/issuing/v1/kyc${path}`, {
    headers: { authorization: `Bearer ${token}` },
    ...(json !== undefined ? { json } : {}),
  });

/** The messages the sandbox inbox holds for a recipient, newest first. */
async function inbox(recipient: string) {
  const res = await h.request<{ data: { subject: string; body: string }[] }>(
    'GET',
    `/sandbox/messages?recipient=${encodeURIComponent(recipient)}`,
    { headers: { authorization: `Bearer ${h.adminToken}` } },
  );
  return res.body.data;
}

/** Submits the hosted page's form as a browser would (multipart). */
async function submitHostedPage(
  url: string,
  outcome: string,
  document?: { name: string; type: string; bytes: Uint8Array },
) {
  const form = new FormData();
  form.set('outcome', outcome);
  if (document) form.set('document', new Blob([document.bytes], { type: document.type }), document.name);
  const res = await fetch(url, { method: 'POST', body: form });
  return { status: res.status, html: await res.text() };
}

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);

async function verifyDocument(token: string, kind: 'id' | 'poa', outcome = 'verified') {
  const started = await kyc<{ url: string; status: string; verificationId: string }>(
    token,
    'POST',
    `/${kind}-verification/start`,
  );
  expect(started.status).toBe(201);
  const submitted = await submitHostedPage(started.body.url, outcome, {
    name: 'passport.png',
    type: 'image/png',
    bytes: PNG,
  });
  expect(submitted.status).toBe(200);
  return { started: started.body, html: submitted.html };
}

describe('KYC steps', () => {
  it('starts not_started, moves to in_progress with the first step, and lists what is missing', async () => {
    const { token } = await newCustomer();
    const first = await kyc(token, 'GET', '');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      status: 'not_started',
      completedSteps: [],
      verifications: { identity: 'not_started', proofOfAddress: 'not_started' },
    });
    expect(first.body.missingSteps).toEqual([
      'agreement',
      'personal-info',
      'residence',
      'gender',
      'birthplace',
      'wealth-and-income',
      'pep',
      'id-verification',
      'poa-verification',
    ]);
    const after = await kyc(token, 'POST', '/agreement', KYC_STEPS[0]?.[1]);
    expect(after.body.status).toBe('in_progress');
    expect(after.body.completedSteps).toEqual(['agreement']);
  });

  it('validates every step, naming the field', async () => {
    const { token } = await newCustomer();
    const cases: [string, unknown, string][] = [
      ['/agreement', { termsAccepted: false, privacyPolicyAccepted: true }, 'termsAccepted'],
      [
        '/personal-info',
        { firstName: 'A', lastName: 'B', dateOfBirth: '1990-02-30', nationality: 'GB' },
        'dateOfBirth',
      ],
      [
        '/personal-info',
        { firstName: 'A', lastName: 'B', dateOfBirth: '1990-01-01', nationality: 'XX' },
        'nationality',
      ],
      [
        '/personal-info',
        { firstName: 'A', lastName: 'B', dateOfBirth: '1990-01-01', nationality: 'GB', phone: '0712' },
        'phone',
      ],
      [
        '/personal-info',
        { firstName: '', lastName: 'B', dateOfBirth: '1990-01-01', nationality: 'GB' },
        'firstName',
      ],
      ['/residence', { country: 'RO', city: 'X', postalCode: '', addressLine1: 'Y' }, 'postalCode'],
      ['/gender', { gender: 'robot' }, 'gender'],
      ['/birthplace', { city: 'London' }, 'country'],
      [
        '/wealth-and-income',
        {
          employmentStatus: 'employed',
          annualIncome: 'lots',
          sourceOfFunds: ['salary'],
          expectedMonthlySpend: '1k_5k',
        },
        'annualIncome',
      ],
      [
        '/wealth-and-income',
        {
          employmentStatus: 'employed',
          annualIncome: 'under_25k',
          sourceOfFunds: [],
          expectedMonthlySpend: '1k_5k',
        },
        'sourceOfFunds',
      ],
      ['/pep', { isPoliticallyExposed: 'no' }, 'isPoliticallyExposed'],
    ];
    for (const [path, json, field] of cases) {
      const res = await kyc<IssuingError>(token, 'POST', path, json);
      expect(res.status, `${path} ${JSON.stringify(json)}`).toBe(400);
      expect(res.body.field).toBe(field);
    }
    const minor = await kyc<IssuingError>(token, 'POST', '/personal-info', {
      firstName: 'Young',
      lastName: 'Person',
      dateOfBirth: `${new Date().getUTCFullYear() - 17}-01-01`,
      nationality: 'GB',
    });
    expect(minor.status).toBe(400);
    expect(minor.body).toMatchObject({ field: 'dateOfBirth' });
    expect((await kyc(token, 'GET', '')).body.status).toBe('not_started');
  });

  it('asks a politically exposed person to confirm, and only then', async () => {
    const { token } = await newCustomer();
    expect(
      (await kyc(token, 'POST', '/confirm-pep', { confirmed: true, position: 'Mayor', country: 'RO' }))
        .status,
    ).toBe(409);
    const exposed = await kyc(token, 'POST', '/pep', { isPoliticallyExposed: true });
    expect(exposed.body.missingSteps).toContain('confirm-pep');
    const confirmed = await kyc(token, 'POST', '/confirm-pep', {
      confirmed: true,
      position: 'Mayor',
      country: 'RO',
    });
    expect(confirmed.body.completedSteps).toContain('confirm-pep');
    const notExposed = await kyc(token, 'POST', '/pep', { isPoliticallyExposed: false });
    expect(notExposed.body.completedSteps).not.toContain('confirm-pep');
    expect(notExposed.body.missingSteps).not.toContain('confirm-pep');
  });

  it('requires a customer access token', async () => {
    expect((await h.request('GET', '/issuing/v1/kyc')).status).toBe(401);
    expect(
      (
        await h.request('POST', '/issuing/v1/kyc/gender', {
          headers: { 'x-partner-api-key': partner.apiKey },
          json: { gender: 'male' },
        })
      ).status,
    ).toBe(401);
    expect(
      (
        await h.request('POST', '/issuing/v1/kyc/id-verification/start', {
          headers: { authorization: 'Bearer nope' },
        })
      ).status,
    ).toBe(401);
  });
});

describe('hosted document checks and the decision', () => {
  it('walks a customer to pending_review, then approval, with a signed event per change', async () => {
    const { customerId, token } = await newCustomer('kyc-approved@example.com');
    expect((await kyc<IssuingError>(token, 'POST', '/id-verification/start')).status).toBe(409);
    for (const [step, body] of KYC_STEPS)
      expect((await kyc(token, 'POST', `/${step}`, body)).status).toBe(200);

    const page = await kyc<{ url: string }>(token, 'POST', '/id-verification/start');
    // The session id and an HMAC of it: an address that cannot be guessed or altered.
    expect(page.body.url).toMatch(/\/hosted\/kyc\/kvs_[0-9A-Z]{26}\.[\w-]{43}$/);
    const html = await (await fetch(page.body.url)).text();
    expect(html).toContain('<form method="post" enctype="multipart/form-data">');
    expect(html).toContain('identity document');
    const noDocument = await submitHostedPage(page.body.url, 'verified');
    expect(noDocument.status).toBe(400);
    expect(noDocument.html).toContain('upload a photo or scan');
    const wrongType = await submitHostedPage(page.body.url, 'verified', {
      name: 'x.txt',
      type: 'text/plain',
      bytes: new Uint8Array([1]),
    });
    expect(wrongType.status).toBe(400);
    const verified = await submitHostedPage(page.body.url, 'verified', {
      name: 'passport.png',
      type: 'image/png',
      bytes: PNG,
    });
    expect(verified.html).toContain('data-result="verified"');
    expect(
      (await submitHostedPage(page.body.url, 'verified', { name: 'p.png', type: 'image/png', bytes: PNG }))
        .html,
    ).toContain('Verification complete');

    const inProgress = await kyc(token, 'GET', '');
    expect(inProgress.body).toMatchObject({
      status: 'in_progress',
      missingSteps: ['poa-verification'],
      verifications: { identity: 'verified' },
    });
    const { html: poaHtml } = await verifyDocument(token, 'poa');
    expect(poaHtml).toContain('data-result="verified"');
    expect((await kyc(token, 'GET', '')).body).toMatchObject({ status: 'pending_review', missingSteps: [] });

    const decided = await h.request<{ status: string }>(
      'POST',
      `/sandbox/issuing/kyc/${customerId}/decision`,
      {
        headers: { authorization: `Bearer ${h.adminToken}` },
        json: { status: 'approved' },
      },
    );
    expect(decided.body.status).toBe('approved');
    // The customer is told, by email, once.
    expect(await inbox('kyc-approved@example.com')).toEqual([
      expect.objectContaining({ subject: 'Your identity is verified at KYC partner' }),
    ]);
    expect((await kyc(token, 'GET', '')).body).toMatchObject({ status: 'approved', missingSteps: [] });
    const frozen = await kyc<IssuingError>(token, 'POST', '/gender', { gender: 'male' });
    expect(frozen.status).toBe(409);
    expect(frozen.body.detail).toMatch(/approved/);

    const statuses = ['in_progress', 'pending_review', 'approved'];
    const deliveries = await receiver.waitFor(3, (r) => r.body.includes(customerId));
    const events = await Promise.all(
      deliveries.map((r) =>
        verifyIssuingWebhook<{ eventType: string; data: { status: string } }>(
          r.body,
          r.headers['x-service-signature'] as string,
          partner.webhookSigningKey,
        ),
      ),
    );
    expect(events.every((e) => e.eventType === 'kycStatusChanged')).toBe(true);
    expect(events.map((e) => e.data.status).sort()).toEqual([...statuses].sort());
  });

  it('a rejected document can be tried again; a rejection decision carries its reason', async () => {
    const { customerId, token } = await newCustomer('kyc-rejected@example.com');
    await kyc(token, 'POST', '/personal-info', KYC_STEPS[1]?.[1]);
    const { html } = await verifyDocument(token, 'id', 'expired');
    expect(html).toContain('data-result="rejected"');
    expect(html).toContain('document_expired');
    expect((await kyc(token, 'GET', '')).body.verifications.identity).toBe('rejected');
    await verifyDocument(token, 'id', 'verified');
    expect((await kyc(token, 'GET', '')).body.verifications.identity).toBe('verified');
    expect((await kyc(token, 'POST', '/id-verification/start')).status).toBe(409);

    const sandbox = (json: unknown) =>
      h.request<{ error?: { field: string } }>('POST', `/sandbox/issuing/kyc/${customerId}/decision`, {
        headers: { authorization: `Bearer ${h.adminToken}` },
        json,
      });
    expect((await sandbox({ status: 'rejected' })).body.error?.field).toBe('rejectReason');
    expect((await sandbox({ status: 'approve' })).status).toBe(400);
    expect((await sandbox({ status: 'rejected', rejectReason: 'sanctions list match' })).status).toBe(200);
    expect((await kyc(token, 'GET', '')).body).toMatchObject({
      status: 'rejected',
      rejectReason: 'sanctions list match',
    });
    expect((await sandbox({ status: 'rejected', rejectReason: 'again' })).status).toBe(409);
    // The customer is told, without the partner's reason.
    const told = await inbox('kyc-rejected@example.com');
    expect(told).toEqual([
      expect.objectContaining({ subject: 'We could not verify your identity at KYC partner' }),
    ]);
    expect(told[0]?.body).not.toContain('sanctions');
    const event = await receiver.waitFor(
      1,
      (r) => r.body.includes(customerId) && r.body.includes('rejectReason'),
    );
    expect(JSON.parse(event[0]?.body ?? '{}').data).toEqual({
      customerId,
      status: 'rejected',
      rejectReason: 'sanctions list match',
    });
    expect(
      (
        await h.request('POST', '/sandbox/issuing/kyc/cust_unknown/decision', {
          headers: { authorization: `Bearer ${h.adminToken}` },
          json: { status: 'approved' },
        })
      ).status,
    ).toBe(404);
  });

  it('answers a malformed upload to the hosted page with 400 and the page, never a 500', async () => {
    const { token } = await newCustomer('kyc-malformed@example.com');
    await kyc(token, 'POST', '/personal-info', KYC_STEPS[1]?.[1]);
    const started = await kyc<{ url: string }>(token, 'POST', '/id-verification/start');
    for (const [contentType, body] of [
      ['multipart/form-data', 'no boundary at all'],
      [
        'multipart/form-data; boundary=zz',
        '--zz\r\nContent-Disposition: form-data; name="outcome"\r\n\r\nverif',
      ],
      ['multipart/form-data; boundary=zz', 'not multipart'],
    ] as const) {
      const res = await fetch(started.body.url, {
        method: 'POST',
        headers: { 'content-type': contentType },
        body,
      });
      expect(res.status, `${contentType}: ${body}`).toBe(400);
      expect(await res.text()).toContain('<form method="post" enctype="multipart/form-data">');
    }
    // The session is still open: a real upload goes through.
    const { html } = await verifyDocument(token, 'id', 'verified');
    expect(html).toContain('data-result="verified"');
  });

  it('hosted links are unguessable, expire, and reveal nothing when wrong', async () => {
    const { token } = await newCustomer();
    await kyc(token, 'POST', '/residence', KYC_STEPS[2]?.[1]);
    const started = await kyc<{ url: string }>(token, 'POST', '/poa-verification/start');
    expect((await fetch(`${h.baseUrl}/hosted/kyc/kvs_guess`)).status).toBe(404);
    // The session id alone, or with another session's HMAC, opens nothing.
    const [sessionId = '', mac = ''] = (started.body.url.split('/').pop() ?? '').split('.');
    expect((await fetch(`${h.baseUrl}/hosted/kyc/${sessionId}`)).status).toBe(404);
    // Its first character changed (the last ones may carry bits base64 ignores: "AA" for "AB" is the same MAC)
    const forged = `${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
    expect((await fetch(`${h.baseUrl}/hosted/kyc/${sessionId}.${forged}`)).status).toBe(404);
    await h.advanceClock(60 * 60 + 1);
    const late = await submitHostedPage(started.body.url, 'verified', {
      name: 'bill.pdf',
      type: 'application/pdf',
      bytes: new Uint8Array([37, 80, 68, 70]),
    });
    expect(late.status).toBe(409);
    expect(late.html).toContain('expired');
  });
});
