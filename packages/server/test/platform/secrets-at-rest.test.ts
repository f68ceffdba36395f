// Nothing a person or a program must keep secret is stored or logged in clear. Every kind of secret
// the platform makes or receives is produced through the real routes: API keys, client and webhook
// secrets, session keys, IPN secrets, passwords, one-time codes, access and refresh tokens, card
// numbers, CVVs and PINs, hosted-page tokens (3D Secure, topup, KYC, refund decision) and idempotent
// answers holding keys. Then every table of the database is dumped as text, the write-ahead log written
// meanwhile is read byte by byte, and the logs are read: none of them holds any of these values.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { anOrder as aCryptoOrder, aStore, orderOf, pay } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aCardholder, aCustomer as anIssuingCustomer, KYC_STEPS } from '../harness/issuing-builders.ts';
import { aCustomer, aMerchant, anOrder, newCard } from '../harness/payments-builders.ts';

let h: Harness;
const startedAt = Date.now();
/** Every secret made or seen in this file, by what it is */
const secrets: Record<string, string> = {};
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  h = await Harness.start({ captureLogs: true });
  secrets.adminToken = h.adminToken;

  // Tenants' credentials (the partner's twice: once through an idempotent, stored answer).
  const partner = await h.admin<{ apiKey: string; webhookSigningKey: string; partnerId: string }>(
    'POST',
    '/partners',
    { headers: { 'idempotency-key': 'secrets-partner' }, json: { name: 'Secretive' } },
  );
  secrets.partnerApiKey = partner.body.apiKey;
  secrets.webhookSigningKey = partner.body.webhookSigningKey;
  const merchant = await aMerchant(h);
  secrets.merchantApiKey = merchant.apiKey;
  secrets.ipnSecret = merchant.sites[0]?.ipnSecret ?? '';
  const store = await aStore(h);
  secrets.clientSecret = store.clientSecret;
  secrets.storeWebhookSecret = store.webhookSecret;
  secrets.storeSessionKey = store.key;

  // A customer by email: the password, the verification code, tokens, then two-factor.
  const password = 'Correct-Horse-Battery-9';
  secrets.password = password;
  const email = 'secret.keeper@example.com';
  const publicHeaders = { 'x-partner-id': partner.body.partnerId };
  await h.request('POST', '/issuing/v1/auth/register/email', {
    headers: publicHeaders,
    json: { email, password },
  });
  const code = async () => {
    const mail = await h.request<{ data: { body: string }[] }>(
      'GET',
      `/sandbox/messages?recipient=${encodeURIComponent(email)}&limit=1`,
      { headers: bearer(h.adminToken) },
    );
    return /\b(\d{6})\b/.exec(mail.body.data[0]?.body ?? '')?.[1] ?? '';
  };
  secrets.verificationCode = await code();
  const tokens = await h.request<{ accessToken: string; refreshToken: string }>(
    'POST',
    '/issuing/v1/auth/register/email/verify',
    { headers: publicHeaders, json: { email, code: secrets.verificationCode } },
  );
  secrets.accessToken = tokens.body.accessToken;
  secrets.refreshToken = tokens.body.refreshToken;
  await h.request('PUT', '/issuing/v1/auth/2fa', {
    headers: bearer(tokens.body.accessToken),
    json: { enabled: true },
  });
  const login = await h.request<{ sessionToken: string }>('POST', '/issuing/v1/auth/login/email', {
    headers: publicHeaders,
    json: { email, password },
  });
  secrets.sessionToken = login.body.sessionToken;
  await h.request('POST', '/issuing/v1/auth/2fa/send', { headers: bearer(login.body.sessionToken) });
  secrets.twoFactorCode = await code();
  await h.request('POST', '/issuing/v1/auth/2fa/verify', {
    headers: bearer(login.body.sessionToken),
    json: { code: secrets.twoFactorCode },
  });

  // Cards: a virtual card's number and CVV, a physical card's PIN.
  const cardholder = await aCardholder(h, partner.body.apiKey, 10_000n);
  const revealed = await h.request<{ pan: string; cvv: string }>(
    'GET',
    `/issuing/v1/cards/${cardholder.cardId}/secrets`,
    {
      headers: cardholder.auth,
    },
  );
  secrets.issuedPan = revealed.body.pan;
  secrets.issuedCvv = `"${revealed.body.cvv}"`;
  const physical = await h.request('POST', '/issuing/v1/cards', {
    headers: cardholder.auth,
    json: {
      isVirtual: false,
      currency: 'EUR',
      pin: '7391',
      deliveryAddress: { name: 'A', line1: 'Str. 1', city: 'Cluj', postalCode: '400001', country: 'RO' },
    },
  });
  expect(physical.status).toBe(201);
  secrets.pinInJson = '"7391"';

  // Hosted-page tokens: a topup's card page, a KYC session, a 3D Secure challenge and its return leg.
  const topup = await h.request<{ paymentUrl: string }>('POST', '/issuing/v1/topups/fiat', {
    headers: { ...cardholder.auth, accept: 'application/json' },
    json: { accountId: cardholder.accountId, amount: '20.00' },
  });
  secrets.topupPageToken = topup.body.paymentUrl.split('/').pop() ?? '';
  const applicant = await anIssuingCustomer(h, partner.body.apiKey, { kyc: 'none' });
  for (const [step, json] of KYC_STEPS)
    await h.request('POST', `/issuing/v1/kyc/${step}`, { headers: applicant.auth, json });
  const kyc = await h.request<{ url: string }>('POST', '/issuing/v1/kyc/id-verification/start', {
    headers: applicant.auth,
  });
  secrets.kycSessionToken = kyc.body.url.split('/').pop() ?? '';
  const customerId = await aCustomer(h, merchant);
  const challenged = await h.request<{ data: { redirect: { params: { creq: string } } } }>(
    'POST',
    '/payments/order',
    {
      headers: merchant.auth,
      form: anOrder(customerId, { ...newCard('4000000000003220'), backUrl: 'https://shop.example/back' }),
    },
  );
  secrets.acsChallengeToken = challenged.body.data.redirect.params.creq;
  const decided = await fetch(`${h.baseUrl}/acs/challenge/decide`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ creq: secrets.acsChallengeToken, outcome: 'approved' }).toString(),
  });
  secrets.threeDsReturnToken = decided.headers.get('location')?.split('/').pop() ?? '';
  secrets.paymentsPan = '5555555555554444';
  await h.request('POST', '/payments/order', {
    headers: merchant.auth,
    form: anOrder(customerId, newCard('5555555555554444')),
  });

  // A crypto refund's decision page.
  const cryptoOrder = await aCryptoOrder(h, store);
  await pay(h, cryptoOrder.id);
  await h.advanceClock(150);
  const paymentId = (await orderOf(h, store, cryptoOrder.id)).payment_uuid;
  const refund = await h.request<{ data: { attributes: { decision_url: string } } }>(
    'POST',
    `/crypto/api/stores/refunds/${paymentId}`,
    { headers: store.auth, json: { data: { type: 'refunds', attributes: { amount: '1.00', reason: 'x' } } } },
  );
  secrets.refundDecisionToken = refund.body.data.attributes.decision_url.split('/').pop() ?? '';
  for (const [name, value] of Object.entries(secrets)) {
    if (value.length < 5 || value === '""')
      throw new Error(`no ${name} was made: the test would prove nothing`);
  }
}, 120_000);

afterAll(async () => {
  await h.close();
});

// A short numeric secret (the six-digit email code) is looked for as a whole number: as a bare substring
// it turns up by chance in any log's timings and ids.
const found = (haystack: string | Buffer) =>
  Object.entries(secrets)
    .filter(([, value]) =>
      /^\d{1,8}$/.test(value)
        ? new RegExp(`(?<![\\d.])${value}(?![\\d])`).test(haystack.toString('latin1'))
        : haystack.includes(value),
    )
    .map(([name]) => name);

describe('secrets', () => {
  it('are not in clear in any table', async () => {
    const tables = await sql<{ tablename: string }>`
      SELECT tablename FROM pg_tables WHERE schemaname = 'public'`.execute(h.services.db);
    const leaks: string[] = [];
    for (const { tablename } of tables.rows) {
      const rows = await sql<{
        row: string;
      }>`SELECT row_to_json(t)::text AS row FROM ${sql.table(tablename)} t`.execute(h.services.db);
      const text = rows.rows.map((r) => r.row).join('\n');
      for (const name of found(text)) leaks.push(`${name} in ${tablename}`);
    }
    expect(leaks).toEqual([]);
  });

  it('are not in the write-ahead log', async () => {
    // The test cluster commits without waiting for the log: write it out before reading it.
    await sql`SELECT pg_switch_wal()`.execute(h.services.db);
    const walDir = join(inject('postgresDataDir'), 'pg_wal');
    let scanned = 0;
    const leaks = new Set<string>();
    for (const file of await readdir(walDir)) {
      if (!/^[0-9A-F]{24}$/.test(file)) continue;
      if ((await stat(join(walDir, file))).mtimeMs < startedAt) continue;
      const wal = await readFile(join(walDir, file));
      scanned += wal.length;
      for (const name of found(wal)) leaks.add(name);
    }
    expect(scanned).toBeGreaterThan(0);
    expect([...leaks]).toEqual([]);
  });

  it('are not in the logs', () => {
    expect(h.logs.length).toBeGreaterThan(20);
    expect(found(h.logs.join(''))).toEqual([]);
  });
});
