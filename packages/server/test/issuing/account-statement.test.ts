// An issuing account's monthly statement (docs/payouts.md, Issuing statements): the topups and card
// payments of the month with their running balance, between the opening and the closing balance, for the
// account's customer (through the partner's app) and the operator; another customer's is a 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aCustomer, anAccount } from '../harness/issuing-builders.ts';

let h: Harness;
let partnerKey: string;
const admin = () => ({ authorization: `Bearer ${h.adminToken}` });

beforeAll(async () => {
  h = await Harness.start();
  partnerKey = (
    await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Statement partner' } })
  ).body.apiKey;
});
afterAll(() => h.close());

describe('GET /accounts/{accountId}/statement', () => {
  it('lists the month’s topups and cleared card payments with the running balance', async () => {
    const customer = await aCustomer(h, partnerKey);
    const accountId = await anAccount(h, customer.auth);
    const topup = await h.request<{ topupId: string }>('POST', '/issuing/v1/topups/fiat', {
      headers: { ...customer.auth, accept: 'application/json' },
      json: { accountId, amount: '200.00' },
    });
    expect(
      (
        await h.request('POST', `/sandbox/issuing/topups/${topup.body.topupId}/complete`, {
          headers: admin(),
        })
      ).status,
    ).toBe(200);
    const card = await h.request<{ cardId: string }>('POST', '/issuing/v1/cards', {
      headers: customer.auth,
      json: { isVirtual: true, currency: 'EUR' },
    });
    const auth = await h.request<{ transactionId: string }>('POST', '/sandbox/issuing/authorizations', {
      headers: admin(),
      json: { cardId: card.body.cardId, amount: '25.50', currency: 'EUR', merchant: 'Coffee, Shop' },
    });
    await h.request('POST', `/sandbox/issuing/transactions/${auth.body.transactionId}/clear`, {
      headers: admin(),
      json: { amount: '20.00' },
    });
    // A second authorization not yet cleared is a hold, not a movement: not on the statement.
    await h.request('POST', '/sandbox/issuing/authorizations', {
      headers: admin(),
      json: { cardId: card.body.cardId, amount: '5.00', currency: 'EUR', merchant: 'Bakery' },
    });
    const month = h.services.clock.now().toISOString().slice(0, 7);
    const statement = await h.request('GET', `/issuing/v1/accounts/${accountId}/statement?month=${month}`, {
      headers: await customer.relogin(),
    });
    expect(statement.status, statement.text).toBe(200);
    expect(statement.headers.get('content-type')).toContain('text/csv');
    const lines = statement.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('date,reference,description,merchant,amount,balance');
    expect(lines[1]).toBe(',,opening balance,,,0.00');
    expect(lines[2]).toMatch(new RegExp(`,${topup.body.topupId},topup,,200\\.00,200\\.00$`));
    expect(lines[3]).toMatch(
      new RegExp(`,${auth.body.transactionId},card payment,"Coffee, Shop",-20\\.00,180\\.00$`),
    );
    expect(lines[4]).toBe(',,closing balance,,,180.00');
    expect(lines).toHaveLength(5);
    // The next month opens where this one closed, and has no lines.
    const [year, m] = month.split('-').map(Number) as [number, number];
    const next = `${m === 12 ? year + 1 : year}-${String((m % 12) + 1).padStart(2, '0')}`;
    const later = await h.request('GET', `/issuing/v1/accounts/${accountId}/statement?month=${next}`, {
      headers: await customer.relogin(),
    });
    expect(later.text).toBe(
      'date,reference,description,merchant,amount,balance\r\n,,opening balance,,,180.00\r\n,,closing balance,,,180.00\r\n',
    );
    // The operator downloads the same statement.
    const operator = await h.admin('GET', `/issuing/accounts/${accountId}/statement?month=${month}`);
    expect(operator.text).toBe(statement.text);
  });

  it('is a 404 for another customer’s account and a 400 naming a bad month', async () => {
    const one = await aCustomer(h, partnerKey);
    const other = await aCustomer(h, partnerKey);
    const accountId = await anAccount(h, one.auth);
    expect(
      (
        await h.request('GET', `/issuing/v1/accounts/${accountId}/statement?month=2026-01`, {
          headers: other.auth,
        })
      ).status,
    ).toBe(404);
    const yearZero = await h.request('GET', `/issuing/v1/accounts/${accountId}/statement?month=0000-01`, {
      headers: one.auth,
    });
    expect(yearZero.status).toBe(400);
    const bad = await h.request<{ field?: string }>(
      'GET',
      `/issuing/v1/accounts/${accountId}/statement?month=2026-13`,
      { headers: one.auth },
    );
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('month');
  });
});
