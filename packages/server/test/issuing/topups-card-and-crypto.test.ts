// Topups paid by card on the hosted page (the platform's acquiring: test cards, 3D Secure on the ACS,
// declines that leave the topup payable) and crypto topups (currencies, limits, quotes, fees, a deposit
// address, every confirmation reported, credit at the quoted rate less the fee). Webhooks counted,
// bad input named, other customers' topups and quotes invisible.
import { verifyIssuingWebhook } from '@tessera/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aCustomer, anAccount } from '../harness/issuing-builders.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';
import { FUTURE_EXPIRY } from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let partnerKey: string;
let signingKey: string;
const admin = () => ({ authorization: `Bearer ${h.adminToken}` });

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  const partner = await h.admin<{ apiKey: string; webhookSigningKey: string }>('POST', '/partners', {
    json: { name: 'Topups partner', webhookUrl: receiver.url('/topups') },
  });
  partnerKey = partner.body.apiKey;
  signingKey = partner.body.webhookSigningKey;
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

type TopupView = {
  topupId: string;
  status: string;
  method: string;
  amount: string;
  paymentUrl: string | null;
  lastDecline: string | null;
  creditedAmount: string | null;
  crypto: {
    currency: string;
    network: string;
    amount: string;
    depositAddress: string;
    rate: string;
    fee: string;
    received: string | null;
    confirmations: number;
    confirmationsRequired: number;
  } | null;
};

async function holder() {
  const customer = await aCustomer(h, partnerKey);
  const accountId = await anAccount(h, customer.auth);
  const balance = async () => {
    const res = await h.request<{ data: { balance: string }[] }>('GET', '/issuing/v1/accounts', {
      headers: await customer.relogin(),
    });
    return res.body.data[0]?.balance;
  };
  return { ...customer, accountId, balance };
}

const card = (cardNumber: string) => ({
  cardHolderName: 'Ada Lovelace',
  cardNumber,
  cardExpiryDate: FUTURE_EXPIRY,
  cardCvv: '123',
});

async function fiatTopup(auth: Record<string, string>, accountId: string, amount = '50.00') {
  const res = await h.request<TopupView>('POST', '/issuing/v1/topups/fiat', {
    headers: { ...auth, accept: 'application/json' },
    json: { accountId, amount },
  });
  expect(res.status).toBe(201);
  return res.body;
}

const post = (url: string, form: Record<string, string>) =>
  fetch(url, { method: 'POST', body: new URLSearchParams(form), redirect: 'manual' });

describe('topups paid by card on the hosted page', () => {
  it('offers card and bank transfer; an approved card credits the account at once', async () => {
    const c = await holder();
    // The real service's HTML form by default: no Accept, */*, a browser's Accept; JSON to a client that
    // asks for it (the SDK does).
    const answerTo = (accept?: string) =>
      h.request('POST', '/issuing/v1/topups/fiat', {
        headers: { ...c.auth, ...(accept === undefined ? {} : { accept }) },
        json: { accountId: c.accountId, amount: '20.00' },
      });
    const html = await answerTo();
    expect(html.status).toBe(201);
    expect(html.headers.get('content-type')).toMatch(/text\/html/);
    for (const accept of [
      '*/*',
      'text/html,application/xhtml+xml,*/*;q=0.8',
      'application/json, text/html',
    ]) {
      expect((await answerTo(accept)).headers.get('content-type'), accept).toMatch(/text\/html/);
    }
    for (const accept of ['application/json', 'application/json, text/plain, */*']) {
      const plain = await answerTo(accept);
      expect(plain.headers.get('content-type'), accept).toMatch(/application\/json/);
      expect(plain.body).toMatchObject({ paymentUrl: expect.stringContaining('/hosted/issuing/topups/') });
    }
    expect(html.text).toContain('Pay by card');
    expect(html.text).toContain('Or pay by bank transfer');

    const topup = await fiatTopup(c.auth, c.accountId);
    expect(topup.paymentUrl).toMatch(/\/hosted\/issuing\/topups\/top_[0-9A-Z]{26}\.[\w-]{43}$/);
    const paid = await post(topup.paymentUrl ?? '', card('4111111111111111'));
    expect(paid.status).toBe(303);
    const page = await h.request('GET', new URL(paid.headers.get('location') ?? '', h.baseUrl).pathname);
    expect(page.text).toContain('Your account was topped up with 50.00 EUR by card');
    const read = await h.request<TopupView>('GET', `/issuing/v1/topups/${topup.topupId}`, {
      headers: c.auth,
    });
    expect(read.body).toMatchObject({
      status: 'completed',
      method: 'card',
      creditedAmount: '50.00',
      paymentUrl: null,
    });
    expect(await c.balance()).toBe('50.00');
    // Paid by card: the bank cannot pay it again.
    const bank = await h.request('POST', `/sandbox/issuing/topups/${topup.topupId}/complete`, {
      headers: admin(),
    });
    expect(bank.status).toBe(200);
    expect(await c.balance()).toBe('50.00');
    // Nor another card.
    expect((await post(topup.paymentUrl ?? '', card('4111111111111111'))).status).toBe(409);
  });

  it('shows a decline and keeps the topup payable; 3D Secure goes through the ACS', async () => {
    const c = await holder();
    const topup = await fiatTopup(c.auth, c.accountId, '30.00');
    const declined = await post(topup.paymentUrl ?? '', card('4000000000009995'));
    expect(declined.status).toBe(402);
    expect(await declined.text()).toContain('insufficient funds');
    const after = await h.request<TopupView>('GET', `/issuing/v1/topups/${topup.topupId}`, {
      headers: c.auth,
    });
    expect(after.body).toMatchObject({ status: 'pending', lastDecline: 'insufficient_funds' });

    const challenged = await post(topup.paymentUrl ?? '', card('4000000000003220'));
    const page = await challenged.text();
    const creq = /name="creq" value="([^"]+)"/.exec(page)?.[1] ?? '';
    expect(page).toContain('/acs/challenge');
    const decided = await post(`${h.baseUrl}/acs/challenge/decide`, { creq, outcome: 'approve' });
    expect(decided.headers.get('location')).toBe(topup.paymentUrl);
    expect(await c.balance()).toBe('30.00');
    await expectLedgerInvariants(h);
  });

  it('names bad card fields, and knows no stranger’s token', async () => {
    const c = await holder();
    const topup = await fiatTopup(c.auth, c.accountId);
    for (const [fields, text] of [
      [{ cardNumber: '4111111111111112' }, 'valid card number'],
      [{ cardExpiryDate: '01/20' }, 'expired'],
      [{ cardExpiryDate: '2030-01' }, 'MM/YY'],
      [{ cardCvv: '12' }, 'security code'],
      [{ cardHolderName: '' }, 'name on the card'],
    ] as const) {
      const res = await post(topup.paymentUrl ?? '', { ...card('4111111111111111'), ...fields });
      expect(res.status).toBe(400);
      const body = await res.text();
      expect(body).toContain(text);
      expect(body).toContain('aria-invalid="true"');
    }
    const unknown = await post(
      `${h.baseUrl}/hosted/issuing/topups/00000000-0000-4000-8000-000000000000`,
      card('4111111111111111'),
    );
    expect(unknown.status).toBe(404);
    expect((await h.request('GET', '/hosted/issuing/topups/not-a-token')).status).toBe(404);
  });
});

describe('crypto topups', () => {
  const pin = (rate: string | null) =>
    h.request('POST', '/sandbox/fx/rates', { headers: admin(), json: { from: 'USDC', to: 'EUR', rate } });

  it('lists currencies and limits, quotes, prices the fee, and credits a confirmed deposit', async () => {
    const c = await holder();
    const currencies = await h.request<{ data: { currency: string; network: string }[] }>(
      'GET',
      '/issuing/v1/topups/crypto/currencies',
      { headers: c.auth },
    );
    expect(currencies.body.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ currency: 'USDC', network: 'ETH' }),
        expect.objectContaining({ currency: 'BTC', network: 'BTC' }),
      ]),
    );
    const limits = await h.request('GET', '/issuing/v1/topups/crypto/limits?currency=EUR', {
      headers: c.auth,
    });
    expect(limits.body).toMatchObject({ currency: 'EUR', minimum: '10.00', daily: { remaining: '5000.00' } });

    await pin('0.9');
    const fees = await h.request('POST', '/issuing/v1/topups/crypto/fees', {
      headers: c.auth,
      json: { currency: 'USDC', network: 'ETH', amount: '100.00' },
    });
    expect(fees.body).toMatchObject({
      amount: '100.00',
      fee: '1.00',
      total: '101.00',
      cryptoAmount: '112.222223',
      rate: '0.9',
    });

    const quote = await h.request<{ quoteId: string; rate: string; expiresAt: string }>(
      'POST',
      '/issuing/v1/topups/crypto/exchange-rate',
      { headers: c.auth, json: { currency: 'USDC', network: 'eth', accountCurrency: 'EUR' } },
    );
    expect(quote.status).toBe(201);
    expect(quote.body.rate).toBe('0.9');
    // The market moves; the quote holds.
    await pin('0.5');
    const created = await h.request<TopupView>('POST', '/issuing/v1/topups/crypto', {
      headers: c.auth,
      json: {
        accountId: c.accountId,
        amount: '100.00',
        currency: 'USDC',
        network: 'ETH',
        quoteId: quote.body.quoteId,
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      kind: 'crypto',
      method: 'crypto',
      status: 'pending',
      amount: '100.00',
    });
    expect(created.body.crypto).toMatchObject({
      currency: 'USDC',
      network: 'ETH',
      amount: '112.222223',
      rate: '0.9',
      fee: '1.00',
      confirmations: 0,
      confirmationsRequired: 12,
    });
    expect(created.body.crypto?.depositAddress).toMatch(/^0x[0-9a-fA-F]{40}$/);

    const reused = await h.request('POST', '/issuing/v1/topups/crypto', {
      headers: c.auth,
      json: {
        accountId: c.accountId,
        amount: '10.00',
        currency: 'USDC',
        network: 'ETH',
        quoteId: quote.body.quoteId,
      },
    });
    expect(reused.status).toBe(400);

    // The creation's own event first, so what follows counts only the payment's events.
    await receiver.waitFor(
      1,
      (r) => r.body.includes(created.body.topupId) && r.body.includes('topupCreated'),
    );
    const before = receiver.received.length;
    await h.request('POST', `/sandbox/issuing/topups/${created.body.topupId}/pay-crypto`, {
      headers: admin(),
      json: {},
    });
    let read = await h.request<TopupView>('GET', `/issuing/v1/topups/${created.body.topupId}`, {
      headers: c.auth,
    });
    expect(read.body).toMatchObject({
      status: 'confirming',
      crypto: { received: '112.222223', confirmations: 0 },
    });
    // Block by block (12 s on Ethereum): every new confirmation is reported.
    for (let i = 1; i <= 3; i++) {
      await h.advanceClock(12);
      read = await h.request<TopupView>('GET', `/issuing/v1/topups/${created.body.topupId}`, {
        headers: c.auth,
      });
      expect(read.body.crypto?.confirmations).toBe(i);
    }
    await h.advanceClock(12 * 9);
    read = await h.request<TopupView>('GET', `/issuing/v1/topups/${created.body.topupId}`, {
      headers: c.auth,
    });
    expect(read.body).toMatchObject({
      status: 'completed',
      creditedAmount: '100.00',
      crypto: { confirmations: 12 },
    });
    expect(await c.balance()).toBe('100.00');

    // topupStatusChanged for confirming, each confirmation seen, and completion; all signed.
    await receiver.waitFor(before + 5);
    const events = await Promise.all(
      receiver.received.slice(before).map(async (r) => {
        const signature = String(r.headers['x-service-signature']);
        return (await verifyIssuingWebhook(r.body, signature, signingKey)) as {
          eventType: string;
          data: { topupId?: string };
        };
      }),
    );
    const mine = events.filter((e) => e.data.topupId === created.body.topupId);
    expect(mine.every((e) => e.eventType === 'topupStatusChanged')).toBe(true);
    expect(mine.length).toBeGreaterThanOrEqual(5);
    await pin(null);
    await expectLedgerInvariants(h);
  });

  it('credits what arrived when the customer sends less, less the fee', async () => {
    const c = await holder();
    await pin('1');
    const created = await h.request<TopupView>('POST', '/issuing/v1/topups/crypto', {
      headers: c.auth,
      json: { accountId: c.accountId, amount: '50.00', currency: 'USDC', network: 'POLYGON' },
    });
    expect(created.body.crypto).toMatchObject({ amount: '50.5', fee: '0.50' });
    await h.request('POST', `/sandbox/issuing/topups/${created.body.topupId}/pay-crypto`, {
      headers: admin(),
      json: { amount: '20.50' },
    });
    await h.advanceClock(2 * 64);
    const read = await h.request<TopupView>('GET', `/issuing/v1/topups/${created.body.topupId}`, {
      headers: c.auth,
    });
    expect(read.body).toMatchObject({ status: 'completed', creditedAmount: '20.00' });
    expect(await c.balance()).toBe('20.00');
    await pin(null);
  });

  it('refuses bad input by field, expired and foreign quotes, and amounts over the limits', async () => {
    const c = await holder();
    const other = await holder();
    const create = (json: Record<string, unknown>, auth = c.auth) =>
      h.request<{ field?: string; error?: string }>('POST', '/issuing/v1/topups/crypto', {
        headers: auth,
        json: { accountId: c.accountId, amount: '20.00', currency: 'USDC', network: 'ETH', ...json },
      });
    for (const [json, field] of [
      [{ currency: 'EUR' }, 'currency'],
      [{ currency: 'DOGE' }, 'currency'],
      [{ network: 'BTC' }, 'network'],
      [{ amount: '5.00' }, 'amount'],
      [{ amount: '1.001' }, 'amount'],
      [{ accountId: 'nope' }, 'accountId'],
    ] as const) {
      const res = await create(json);
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.field).toBe(field);
    }
    expect((await create({ amount: '6000.00' })).status).toBe(422);
    expect((await create({}, other.auth)).status).toBe(404);

    const quote = await h.request<{ quoteId: string }>('POST', '/issuing/v1/topups/crypto/exchange-rate', {
      headers: c.auth,
      json: { currency: 'USDC', network: 'ETH' },
    });
    const wrongPair = await create({ quoteId: quote.body.quoteId, currency: 'USDT' });
    expect(wrongPair.body.field).toBe('quoteId');
    const foreign = await h.request('POST', '/issuing/v1/topups/crypto', {
      headers: other.auth,
      json: {
        accountId: other.accountId,
        amount: '20.00',
        currency: 'USDC',
        network: 'ETH',
        quoteId: quote.body.quoteId,
      },
    });
    expect(foreign.status).toBe(404);
    await h.advanceClock(15 * 60 + 1);
    // Access tokens are short-lived: log in again after moving the clock.
    const fresh = await c.relogin();
    const expired = await create({ quoteId: quote.body.quoteId }, fresh);
    expect(expired.status).toBe(400);
    expect(expired.body.field).toBe('quoteId');

    const badRate = await h.request<{ field?: string }>('POST', '/issuing/v1/topups/crypto/exchange-rate', {
      headers: fresh,
      json: { currency: 'USDC', network: 'ETH', accountCurrency: 'XYZ' },
    });
    expect(badRate.body.field).toBe('accountCurrency');
    const badFees = await h.request<{ field?: string }>('POST', '/issuing/v1/topups/crypto/fees', {
      headers: fresh,
      json: { currency: 'USDC', network: 'BTC', amount: '20.00' },
    });
    expect(badFees.status).toBe(400);
    expect(badFees.body.field).toBe('network');
    const badAmount = await h.request<{ field?: string }>('POST', '/issuing/v1/topups/crypto/fees', {
      headers: fresh,
      json: { currency: 'USDC', network: 'ETH', amount: 'ten' },
    });
    expect(badAmount.body.field).toBe('amount');
    const badLimits = await h.request<{ field?: string }>(
      'GET',
      '/issuing/v1/topups/crypto/limits?currency=E1',
      {
        headers: fresh,
      },
    );
    expect(badLimits.status).toBe(400);
    expect(badLimits.body.field).toBe('currency');
    expect((await h.request('GET', '/issuing/v1/topups/crypto/currencies')).status).toBe(401);

    const mine = await create({}, fresh);
    expect(mine.status).toBe(201);
    const theirs = await h.request(
      'GET',
      `/issuing/v1/topups/${(mine.body as { topupId?: string }).topupId}`,
      {
        headers: await other.relogin(),
      },
    );
    expect(theirs.status).toBe(404);
  });

  it('expires an unpaid address after an hour; a late deposit is still credited at the rate of the moment', async () => {
    const c = await holder();
    await pin('1');
    const created = await h.request<TopupView>('POST', '/issuing/v1/topups/crypto', {
      headers: c.auth,
      json: { accountId: c.accountId, amount: '10.00', currency: 'USDC', network: 'POLYGON' },
    });
    await h.advanceClock(3601);
    const auth = await c.relogin();
    let read = await h.request<TopupView>('GET', `/issuing/v1/topups/${created.body.topupId}`, {
      headers: auth,
    });
    expect(read.body.status).toBe('expired');
    await pin('0.5');
    await h.request('POST', `/sandbox/issuing/topups/${created.body.topupId}/pay-crypto`, {
      headers: admin(),
      json: {},
    });
    await h.advanceClock(2 * 64);
    read = await h.request<TopupView>('GET', `/issuing/v1/topups/${created.body.topupId}`, {
      headers: auth,
    });
    // 10.10 USDC at 0.5 is 5.05 EUR, less the 0.10 fee.
    expect(read.body).toMatchObject({ status: 'completed', creditedAmount: '4.95', crypto: { rate: '0.5' } });
    await pin(null);
  });
});
