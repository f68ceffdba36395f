// Fiat topups: bank-transfer instructions (HTML as the real service, or JSON), completion by the bank
// rail crediting the ledger once, daily and monthly limits and usage, expiry, events, isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aCustomer, anAccount } from '../harness/issuing-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let partnerKey: string;

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  partnerKey = (
    await h.admin<{ apiKey: string }>('POST', '/partners', {
      json: { name: 'Topup partner', webhookUrl: receiver.url('/t') },
    })
  ).body.apiKey;
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

type Topup = {
  topupId: string;
  status: string;
  amount: string;
  reference: string;
  bankTransfer: { iban: string; reference: string };
};
type Usage = {
  currency: string;
  daily: { limit: string; used: string; remaining: string };
  monthly: { limit: string; used: string; remaining: string };
};
const json = { accept: 'application/json' };
const admin = () => ({ authorization: `Bearer ${h.adminToken}` });

async function withAccount() {
  const customer = await aCustomer(h, partnerKey);
  const accountId = await anAccount(h, customer.auth);
  return { ...customer, accountId };
}

describe('fiat topups', () => {
  it('answer bank-transfer instructions as an HTML page, credit the account once when the bank confirms', async () => {
    const c = await withAccount();
    const page = await h.request('POST', '/issuing/v1/topups/fiat', {
      headers: { ...c.auth, accept: 'text/html,application/xhtml+xml' },
      json: { accountId: c.accountId, amount: '150.25' },
    });
    expect(page.status).toBe(201);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.text).toContain('150.25 EUR');
    const reference = /data-field="reference \(required\)">(TSR-[A-Z0-9]{10})</.exec(page.text)?.[1];
    const topupId = /data-topup-id="(top_[0-9A-Z]{26})"/.exec(page.text)?.[1];
    expect(reference).toBeTruthy();
    const listed = await h.request<{ data: Topup[] }>('GET', '/issuing/v1/topups', { headers: c.auth });
    expect(listed.body.data[0]).toMatchObject({
      topupId,
      status: 'pending',
      amount: '150.25',
      reference,
      bankTransfer: { reference },
    });

    const completed = await h.request<Topup>('POST', `/sandbox/issuing/topups/${topupId}/complete`, {
      headers: admin(),
    });
    expect(completed.body.status).toBe('completed');
    expect(
      (await h.request<Topup>('POST', `/sandbox/issuing/topups/${topupId}/complete`, { headers: admin() }))
        .body.status,
    ).toBe('completed');
    const accounts = await h.request<{ data: { balance: string }[] }>('GET', '/issuing/v1/accounts', {
      headers: c.auth,
    });
    expect(accounts.body.data[0]?.balance).toBe('150.25');

    const events = await receiver.waitFor(2, (r) => r.body.includes(topupId ?? 'none'));
    expect(events.map((r) => JSON.parse(r.body).eventType).sort()).toEqual([
      'topupCreated',
      'topupStatusChanged',
    ]);
  });

  it('answer JSON when asked, and refuse bad amounts, foreign or closed accounts', async () => {
    const c = await withAccount();
    const created = await h.request<Topup>('POST', '/issuing/v1/topups/fiat', {
      headers: { ...c.auth, ...json },
      json: { accountId: c.accountId, amount: 20 },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'pending',
      amount: '20.00',
      bankTransfer: { iban: expect.stringMatching(/^RO/) },
    });
    expect(
      (await h.request<Topup>('GET', `/issuing/v1/topups/${created.body.topupId}`, { headers: c.auth })).body
        .topupId,
    ).toBe(created.body.topupId);
    for (const amount of ['0', '-5', '1.001', 'ten']) {
      const res = await h.request<{ field: string }>('POST', '/issuing/v1/topups/fiat', {
        headers: { ...c.auth, ...json },
        json: { accountId: c.accountId, amount },
      });
      expect(res.status, amount).toBe(400);
      expect(res.body.field).toBe('amount');
    }
    expect(
      (
        await h.request<{ field: string }>('POST', '/issuing/v1/topups/fiat', {
          headers: c.auth,
          json: { accountId: 'x', amount: '1' },
        })
      ).body.field,
    ).toBe('accountId');
    const other = await withAccount();
    expect(
      (
        await h.request('POST', '/issuing/v1/topups/fiat', {
          headers: other.auth,
          json: { accountId: c.accountId, amount: '1' },
        })
      ).status,
    ).toBe(404);
    expect(
      (await h.request('GET', `/issuing/v1/topups/${created.body.topupId}`, { headers: other.auth })).status,
    ).toBe(404);
    expect(
      (await h.request('POST', '/sandbox/issuing/topups/top_unknown/complete', { headers: admin() })).status,
    ).toBe(404);
    expect((await h.request('GET', '/issuing/v1/topups')).status).toBe(401);
  });

  it('enforce and report the daily and monthly limits; unpaid instructions expire and stop counting', async () => {
    const c = await withAccount();
    const limits = await h.request<Usage>('GET', '/issuing/v1/topups/limits?currency=eur', {
      headers: c.auth,
    });
    expect(limits.body).toEqual({
      currency: 'EUR',
      daily: { limit: '5000.00', used: '0.00', remaining: '5000.00' },
      monthly: { limit: '20000.00', used: '0.00', remaining: '20000.00' },
    });
    await h.request('POST', '/issuing/v1/topups/fiat', {
      headers: { ...c.auth, ...json },
      json: { accountId: c.accountId, amount: '4000' },
    });
    const over = await h.request<{
      error: string;
      field: string;
      details: { period: string; remaining: string };
    }>('POST', '/issuing/v1/topups/fiat', {
      headers: { ...c.auth, ...json },
      json: { accountId: c.accountId, amount: '1000.01' },
    });
    expect(over.status).toBe(422);
    expect(over.body).toMatchObject({
      error: 'limit_exceeded',
      field: 'amount',
      details: { period: 'daily', remaining: '1000.00' },
    });
    expect(
      (await h.request<Usage>('GET', '/issuing/v1/topups/usage', { headers: c.auth })).body.daily,
    ).toEqual({ limit: '5000.00', used: '4000.00', remaining: '1000.00' });
    expect(
      (await h.request('GET', '/issuing/v1/topups/usage?currency=XYZ', { headers: c.auth })).status,
    ).toBe(400);

    await h.advanceClock(7 * 24 * 3600 + 1);
    const fresh = await c.relogin();
    const list = await h.request<{ data: Topup[] }>('GET', '/issuing/v1/topups', { headers: fresh });
    expect(list.body.data[0]?.status).toBe('expired');
    expect(
      (await h.request<Usage>('GET', '/issuing/v1/topups/usage', { headers: fresh })).body.monthly.used,
    ).toBe('0.00');
  });

  it('are limited per currency in its own terms (a yen is not a euro); a currency without limits is not offered', async () => {
    const customer = await aCustomer(h, partnerKey);
    const yen = await anAccount(h, customer.auth, 'JPY');
    const limits = await h.request<Usage>('GET', '/issuing/v1/topups/limits?currency=JPY', {
      headers: customer.auth,
    });
    expect(limits.body.daily).toEqual({ limit: '800000', used: '0', remaining: '800000' });
    const ok = await h.request('POST', '/issuing/v1/topups/fiat', {
      headers: { ...customer.auth, ...json },
      json: { accountId: yen, amount: '600000' },
    });
    expect(ok.status).toBe(201);

    const rand = await anAccount(h, customer.auth, 'ZAR');
    const refused = await h.request<{ error: string; details: { currency: string } }>(
      'POST',
      '/issuing/v1/topups/fiat',
      {
        headers: { ...customer.auth, ...json },
        json: { accountId: rand, amount: '10' },
      },
    );
    expect(refused.status).toBe(409);
    expect(refused.body.details).toEqual({ currency: 'ZAR' });
  });
});
