// /accounts: open per currency after KYC approval, list with exact balances, close only at zero with no
// hold pending; other customers' accounts are 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aCustomer, fundAccount } from '../harness/issuing-builders.ts';

let h: Harness;
let partnerKey: string;

beforeAll(async () => {
  h = await Harness.start();
  partnerKey = (
    await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Accounts partner' } })
  ).body.apiKey;
});
afterAll(async () => {
  await h.close();
});

type Account = {
  accountId: string;
  currency: string;
  status: string;
  balance: string;
  availableBalance: string;
  pendingAmount: string;
};
type IssuingError = { error: string; field?: string; detail: string; details?: Record<string, string> };

const customer = (approved = true) => aCustomer(h, partnerKey, { kyc: approved ? 'approved' : 'none' });

const accounts = <T>(auth: Record<string, string>, method: string, path: string, json?: unknown) =>
  h.request<T>(method, `/issuing/v1/accounts${path}`, {
    headers: auth,
    ...(json !== undefined ? { json } : {}),
  });

const fund = async (accountId: string, currency: string, minor: bigint) => {
  const { sourceLedgerAccountId, ledgerAccountId } = await fundAccount(h, accountId, currency, minor);
  return { source: { id: sourceLedgerAccountId }, ledgerAccountId };
};

describe('accounts', () => {
  it('open once KYC is approved, one per currency, listed with exact balances', async () => {
    const pending = await customer(false);
    const refused = await accounts<IssuingError>(pending.auth, 'POST', '', { currency: 'EUR' });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/KYC is approved/);

    const { auth } = await customer();
    const eur = await accounts<Account>(auth, 'POST', '', { currency: 'eur' });
    expect(eur.status).toBe(201);
    expect(eur.body).toMatchObject({
      currency: 'EUR',
      status: 'open',
      balance: '0.00',
      availableBalance: '0.00',
      pendingAmount: '0.00',
    });
    expect(eur.body.accountId).toMatch(/^[0-9a-f-]{36}$/);
    const duplicate = await accounts<IssuingError>(auth, 'POST', '', { currency: 'EUR' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.field).toBe('currency');
    const jpy = await accounts<Account>(auth, 'POST', '', { currency: 'JPY' });
    expect(jpy.body.balance).toBe('0');
    await fund(eur.body.accountId, 'EUR', 12_345n);
    const all = await accounts<{ data: Account[] }>(auth, 'GET', '');
    expect(all.body.data.map((a) => [a.currency, a.balance])).toEqual([
      ['EUR', '123.45'],
      ['JPY', '0'],
    ]);
    const filtered = await accounts<{ data: Account[] }>(auth, 'GET', '?currency=jpy');
    expect(filtered.body.data.map((a) => a.currency)).toEqual(['JPY']);
  });

  it('refuses unknown or non-fiat currencies, naming the field', async () => {
    const { auth } = await customer();
    for (const currency of ['XYZ', 'BTC', 'EURO', '', 12]) {
      const res = await accounts<IssuingError>(auth, 'POST', '', { currency });
      expect(res.status, String(currency)).toBe(400);
      expect(res.body.field).toBe('currency');
    }
    expect((await accounts(auth, 'GET', '?currency=E1')).status).toBe(400);
  });

  it('close only at zero balance with nothing held, then stay closed', async () => {
    const { auth } = await customer();
    const account = (await accounts<Account>(auth, 'POST', '', { currency: 'EUR' })).body;
    const { source, ledgerAccountId } = await fund(account.accountId, 'EUR', 500n);
    const funded = await accounts<IssuingError>(auth, 'POST', `/${account.accountId}/close`);
    expect(funded.status).toBe(409);
    // Amounts in error details are decimals in the account's currency, never minor units.
    expect(funded.body.details).toEqual({ balance: '5.00', currency: 'EUR' });

    const { ledger, transact } = h.services;
    const hold = await transact((tx) =>
      ledger.hold(tx, {
        operationId: `hold-${account.accountId}`,
        debitAccountId: ledgerAccountId,
        creditAccountId: source.id,
        amount: 500n,
      }),
    );
    expect((await accounts<{ data: Account[] }>(auth, 'GET', '')).body.data[0]).toMatchObject({
      balance: '5.00',
      availableBalance: '0.00',
      pendingAmount: '5.00',
    });
    const held = await accounts<IssuingError>(auth, 'POST', `/${account.accountId}/close`);
    expect(held.status).toBe(409);
    expect(held.body.detail).toMatch(/pending/);
    expect(held.body.details).toEqual({ pending: '5.00', currency: 'EUR' });
    await transact((tx) =>
      ledger.postHold(tx, { operationId: `post-${account.accountId}`, holdId: hold.id }),
    );

    const closed = await accounts<Account>(auth, 'POST', `/${account.accountId}/close`);
    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({ status: 'closed', balance: '0.00' });
    expect((await accounts(auth, 'POST', `/${account.accountId}/close`)).status).toBe(409);
    expect((await accounts<Account>(auth, 'POST', '', { currency: 'EUR' })).status).toBe(201);
  });

  it('closing an account closes its cards, each with its event', async () => {
    const { auth } = await customer();
    const account = (await accounts<Account>(auth, 'POST', '', { currency: 'EUR' })).body;
    const card = await h.request<{ cardId: string }>('POST', '/issuing/v1/cards', {
      headers: auth,
      json: { isVirtual: true, currency: 'EUR' },
    });
    expect(
      (await h.request('POST', `/issuing/v1/cards/${card.body.cardId}/freeze`, { headers: auth })).status,
    ).toBe(200);
    expect((await accounts(auth, 'POST', `/${account.accountId}/close`)).status).toBe(200);
    const after = await h.request<{ status: string }>('GET', `/issuing/v1/cards/${card.body.cardId}`, {
      headers: auth,
    });
    expect(after.body.status).toBe('closed');
    const events = await h.request<{ data: { type: string; payload: { data: { newStatus: string } } }[] }>(
      'GET',
      `/issuing/v1/events?objectId=${card.body.cardId}&type=cardStatusChanged`,
      { headers: { 'x-partner-api-key': partnerKey } },
    );
    expect(events.body.data.map((e) => e.payload.data.newStatus)).toEqual(['closed', 'frozen', 'active']);
  });

  it('keep customers apart and need an access token', async () => {
    const alice = await customer();
    const bob = await customer();
    const account = (await accounts<Account>(alice.auth, 'POST', '', { currency: 'EUR' })).body;
    expect((await accounts(bob.auth, 'POST', `/${account.accountId}/close`)).status).toBe(404);
    expect((await accounts<{ data: Account[] }>(bob.auth, 'GET', '')).body.data).toEqual([]);
    expect((await accounts(alice.auth, 'POST', '/not-a-uuid/close')).status).toBe(404);
    expect((await accounts(alice.auth, 'POST', '/00000000-0000-4000-8000-000000000000/close')).status).toBe(
      404,
    );
    expect((await accounts({}, 'GET', '')).status).toBe(401);
    expect(
      (await accounts({ 'x-partner-api-key': partnerKey }, 'POST', '', { currency: 'EUR' })).status,
    ).toBe(401);
  });
});
