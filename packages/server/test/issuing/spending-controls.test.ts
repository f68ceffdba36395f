// Spending controls of issued cards (docs/issuing.md, Spending controls): every dimension at every scope
// through the real routes, the sandbox network's authorizations carrying the merchant data; limits over the
// sandbox clock's days; a cardholder narrowing, never widening; limits exact under concurrent authorizations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { type Auth, aCardholder } from '../harness/issuing-builders.ts';

let h: Harness;
let partnerKey: string;
let otherPartnerKey: string;

beforeAll(async () => {
  h = await Harness.start();
  partnerKey = (await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Controls' } })).body
    .apiKey;
  otherPartnerKey = (await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Other' } })).body
    .apiKey;
});
afterAll(() => h.close());

type Tx = {
  transactionId: string;
  status: string;
  declineReason: string | null;
  spendingControl?: { scope: string; control: string };
};
type ErrorBody = { code: number; field?: string; message: string };
const admin = () => ({ authorization: `Bearer ${h.adminToken}` });
const partner = (key = partnerKey) => ({ 'x-partner-api-key': key });

const authorize = async (cardId: string, amount: string, extra: Record<string, unknown> = {}) =>
  (
    await h.request<Tx>('POST', '/sandbox/issuing/authorizations', {
      headers: admin(),
      json: {
        cardId,
        amount,
        currency: 'EUR',
        merchant: 'Corner Shop',
        mcc: '5411',
        merchantCountry: 'RO',
        merchantId: 'corner-1',
        channel: 'pos',
        ...extra,
      },
    })
  ).body;

const setControls = (path: string, body: unknown, headers: Auth = partner()) =>
  h.request<Record<string, unknown> & ErrorBody>('PUT', `/issuing/v1${path}/spending-controls`, {
    headers,
    json: body,
  });

const declinedBy = (t: Tx) => ({ status: t.status, reason: t.declineReason, by: t.spendingControl });
const refusedBy = (scope: string, control: string) => ({
  status: 'declined',
  reason: 'spending_control',
  by: { scope, control },
});
const passed = { status: 'authorized', reason: null, by: undefined };

describe('a card’s controls, set by its partner', () => {
  it('refuses by merchant category (codes, ranges, groups) and admits only an allowed one', async () => {
    const holder = await aCardholder(h, partnerKey);
    // Authorized once first: the card is then remembered for the one-statement way, which must see the controls.
    expect(declinedBy(await authorize(holder.cardId, '1.00', { mcc: '7995' }))).toEqual(passed);
    const set = await setControls(`/cards/${holder.cardId}`, {
      blockedMccs: ['gambling', '3000-3299', '5813'],
    });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ card: { blockedMccs: ['gambling', '3000-3299', '5813'], currency: 'EUR' } });
    for (const mcc of ['7995', '7801', '3100', '5813']) {
      expect(declinedBy(await authorize(holder.cardId, '1.00', { mcc }))).toEqual(
        refusedBy('card', 'blockedMccs'),
      );
    }
    expect(declinedBy(await authorize(holder.cardId, '1.00', { mcc: '5411' }))).toEqual(passed);
    // No category given: nothing blocked says no to it, but an allowed list cannot admit it.
    expect(declinedBy(await authorize(holder.cardId, '1.00', { mcc: undefined }))).toEqual(passed);

    await setControls(`/cards/${holder.cardId}`, { allowedMccs: ['5411', '5812'] });
    expect(declinedBy(await authorize(holder.cardId, '1.00', { mcc: '5812' }))).toEqual(passed);
    expect(declinedBy(await authorize(holder.cardId, '1.00', { mcc: '5999' }))).toEqual(
      refusedBy('card', 'allowedMccs'),
    );
    expect(declinedBy(await authorize(holder.cardId, '1.00', { mcc: undefined }))).toEqual(
      refusedBy('card', 'allowedMccs'),
    );
    // A refused authorization holds nothing.
    expect((await holder.balance()).availableBalance).toBe('96.00');
  });

  it('refuses by merchant country, channel and amount per authorization', async () => {
    const holder = await aCardholder(h, partnerKey);
    await setControls(`/cards/${holder.cardId}`, {
      blockedCountries: ['ru', 'KP'],
      channels: { atm: false, contactless: false },
      maxPerAuthorization: '25.00',
    });
    expect(declinedBy(await authorize(holder.cardId, '1.00', { merchantCountry: 'RU' }))).toEqual(
      refusedBy('card', 'blockedCountries'),
    );
    expect(declinedBy(await authorize(holder.cardId, '1.00', { channel: 'atm' }))).toEqual(
      refusedBy('card', 'channels'),
    );
    expect(declinedBy(await authorize(holder.cardId, '1.00', { channel: 'contactless' }))).toEqual(
      refusedBy('card', 'channels'),
    );
    expect(declinedBy(await authorize(holder.cardId, '25.01'))).toEqual(
      refusedBy('card', 'maxPerAuthorization'),
    );
    expect(declinedBy(await authorize(holder.cardId, '25.00', { channel: 'ecommerce' }))).toEqual(passed);

    await setControls(`/cards/${holder.cardId}`, { allowedCountries: ['RO', 'DE'] });
    expect(declinedBy(await authorize(holder.cardId, '1.00', { merchantCountry: 'DE' }))).toEqual(passed);
    expect(declinedBy(await authorize(holder.cardId, '1.00', { merchantCountry: 'FR' }))).toEqual(
      refusedBy('card', 'allowedCountries'),
    );
    // An empty body removes the card's controls.
    expect((await setControls(`/cards/${holder.cardId}`, {})).body).toEqual({});
    expect(declinedBy(await authorize(holder.cardId, '1.00', { merchantCountry: 'FR' }))).toEqual(passed);
  });

  it('limits the amount per day, per month and for life, and the count per day, over the sandbox clock', async () => {
    const holder = await aCardholder(h, partnerKey);
    await setControls(`/cards/${holder.cardId}`, {
      limits: [
        { amount: '30.00', interval: 'per_day' },
        { amount: '50.00', interval: 'per_month' },
        { amount: '70.00', interval: 'lifetime' },
      ],
      maxCountPerDay: 3,
    });
    // Start at a day's beginning, well inside a month.
    const now = new Date(
      (await h.request<{ now: string }>('GET', '/sandbox/clock', { headers: admin() })).body.now,
    );
    const toNextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 2) - now.getTime();
    await h.advanceClock(Math.ceil(toNextMonth / 1000));

    expect(declinedBy(await authorize(holder.cardId, '20.00'))).toEqual(passed);
    expect(declinedBy(await authorize(holder.cardId, '10.01'))).toEqual(refusedBy('card', 'limits.per_day'));
    expect(declinedBy(await authorize(holder.cardId, '5.00'))).toEqual(passed);
    expect(declinedBy(await authorize(holder.cardId, '1.00'))).toEqual(passed);
    expect(declinedBy(await authorize(holder.cardId, '1.00'))).toEqual(refusedBy('card', 'maxCountPerDay'));

    await h.advanceClock(86_400);
    expect(declinedBy(await authorize(holder.cardId, '24.00'))).toEqual(passed);
    expect(declinedBy(await authorize(holder.cardId, '0.01'))).toEqual(refusedBy('card', 'limits.per_month'));

    const firstOfNext = new Date(
      (await h.request<{ now: string }>('GET', '/sandbox/clock', { headers: admin() })).body.now,
    );
    await h.advanceClock(
      Math.ceil(
        (Date.UTC(firstOfNext.getUTCFullYear(), firstOfNext.getUTCMonth() + 1, 1) - firstOfNext.getTime()) /
          1000,
      ),
    );
    expect(declinedBy(await authorize(holder.cardId, '20.01'))).toEqual(refusedBy('card', 'limits.lifetime'));
    expect(declinedBy(await authorize(holder.cardId, '20.00'))).toEqual(passed);
  });

  it('counts a challenged authorization when the cardholder approves it, checking the limit again then', async () => {
    const holder = await aCardholder(h, partnerKey);
    await setControls(`/cards/${holder.cardId}`, { limits: [{ amount: '30.00', interval: 'per_day' }] });
    const challenged = await authorize(holder.cardId, '20.00', { threeDS: true });
    expect(challenged.status).toBe('pending_3ds');
    expect(declinedBy(await authorize(holder.cardId, '20.00'))).toEqual(passed);
    const pending = await h.request<{ data: { transactionAuthId: string }[] }>(
      'GET',
      '/issuing/v1/transactions/3d-secure',
      { headers: holder.auth },
    );
    const decided = await h.request<Tx>(
      'PATCH',
      `/issuing/v1/transactions/3d-secure/${pending.body.data[0]?.transactionAuthId}`,
      { headers: holder.auth, json: { authType: 'pinCode', authStatus: 'success' } },
    );
    expect(declinedBy(decided.body)).toEqual(refusedBy('card', 'limits.per_day'));
    expect((await holder.balance()).availableBalance).toBe('80.00');
  });

  it('keeps a limit exact under concurrent authorizations of one card', async () => {
    const holder = await aCardholder(h, partnerKey);
    await setControls(`/cards/${holder.cardId}`, { limits: [{ amount: '50.00', interval: 'per_day' }] });
    const results = await Promise.all(Array.from({ length: 12 }, () => authorize(holder.cardId, '10.00')));
    expect(results.filter((t) => t.status === 'authorized')).toHaveLength(5);
    expect(results.filter((t) => t.spendingControl?.control === 'limits.per_day')).toHaveLength(7);
    expect((await holder.balance()).availableBalance).toBe('50.00');
  });
});

describe('scopes', () => {
  it('lets a cardholder narrow the partner’s controls but never widen them', async () => {
    const holder = await aCardholder(h, partnerKey);
    await setControls(`/cards/${holder.cardId}`, { maxPerAuthorization: '50.00' });
    const own = await setControls(`/cards/${holder.cardId}`, { maxPerAuthorization: '20.00' }, holder.auth);
    expect(own.status).toBe(200);
    expect(own.body).toEqual({
      card: { maxPerAuthorization: '50.00', currency: 'EUR' },
      cardholder: { maxPerAuthorization: '20.00', currency: 'EUR' },
    });
    expect(declinedBy(await authorize(holder.cardId, '30.00'))).toEqual(
      refusedBy('cardholder', 'maxPerAuthorization'),
    );
    await setControls(`/cards/${holder.cardId}`, { maxPerAuthorization: '80.00' }, holder.auth);
    expect(declinedBy(await authorize(holder.cardId, '60.00'))).toEqual(
      refusedBy('card', 'maxPerAuthorization'),
    );
    expect(declinedBy(await authorize(holder.cardId, '45.00'))).toEqual(passed);
    // The cardholder reads what is in force on their card.
    const read = await h.request('GET', `/issuing/v1/cards/${holder.cardId}/spending-controls`, {
      headers: holder.auth,
    });
    expect(read.body).toEqual({
      card: { maxPerAuthorization: '50.00', currency: 'EUR' },
      cardholder: { maxPerAuthorization: '80.00', currency: 'EUR' },
    });
  });

  it('limits an account’s cards together, and every card of a program', async () => {
    const holder = await aCardholder(h, partnerKey);
    const second = await h.request<{ cardId: string }>('POST', '/issuing/v1/cards', {
      headers: holder.auth,
      json: { isVirtual: true, currency: 'EUR' },
    });
    const set = await setControls(`/accounts/${holder.accountId}`, {
      limits: [{ amount: '30.00', interval: 'per_day' }],
    });
    expect(set.body).toEqual({
      account: { limits: [{ amount: '30.00', interval: 'per_day' }], currency: 'EUR' },
    });
    expect(declinedBy(await authorize(holder.cardId, '20.00'))).toEqual(passed);
    expect(declinedBy(await authorize(second.body.cardId, '15.00'))).toEqual(
      refusedBy('account', 'limits.per_day'),
    );
    expect(declinedBy(await authorize(second.body.cardId, '10.00'))).toEqual(passed);

    // The program's controls reach every card of the partner, and only its own.
    const program = await setControls('', {
      blockedCountries: ['KP'],
      maxPerAuthorization: '5.00',
      currency: 'eur',
    });
    expect(program.body).toEqual({
      partner: { blockedCountries: ['KP'], maxPerAuthorization: '5.00', currency: 'EUR' },
    });
    const another = await aCardholder(h, partnerKey);
    expect(declinedBy(await authorize(another.cardId, '1.00', { merchantCountry: 'KP' }))).toEqual(
      refusedBy('partner', 'blockedCountries'),
    );
    expect(declinedBy(await authorize(another.cardId, '5.01'))).toEqual(
      refusedBy('partner', 'maxPerAuthorization'),
    );
    const foreign = await aCardholder(h, otherPartnerKey);
    expect(declinedBy(await authorize(foreign.cardId, '1.00', { merchantCountry: 'KP' }))).toEqual(passed);
    await setControls('', {});
    expect(declinedBy(await authorize(another.cardId, '6.00'))).toEqual(passed);
  });

  it('hides another partner’s and another cardholder’s cards and accounts (404)', async () => {
    const holder = await aCardholder(h, partnerKey);
    const stranger = await aCardholder(h, partnerKey);
    const body = { maxPerAuthorization: '1.00' };
    expect((await setControls(`/cards/${holder.cardId}`, body, partner(otherPartnerKey))).status).toBe(404);
    expect((await setControls(`/cards/${holder.cardId}`, body, stranger.auth)).status).toBe(404);
    expect((await setControls(`/accounts/${holder.accountId}`, body, partner(otherPartnerKey))).status).toBe(
      404,
    );
    expect((await setControls('/cards/not-a-card', body)).status).toBe(404);
    // Only the partner sets an account's or the program's controls.
    expect((await setControls(`/accounts/${holder.accountId}`, body, holder.auth)).status).toBe(401);
    expect((await setControls(`/cards/${holder.cardId}`, body, {})).status).toBe(401);
    expect(declinedBy(await authorize(holder.cardId, '2.00'))).toEqual(passed);
  });
});

describe('bad controls', () => {
  it('are a 400 naming the field, and change nothing', async () => {
    const holder = await aCardholder(h, partnerKey);
    const path = `/cards/${holder.cardId}`;
    const cases: [unknown, string][] = [
      [{ blockedMccs: ['54'] }, 'blockedMccs.0'],
      [{ allowedMccs: ['casinos'] }, 'allowedMccs.0'],
      [{ allowedMccs: [] }, 'allowedMccs'],
      [{ blockedCountries: ['XX'] }, 'blockedCountries.0'],
      [{ channels: { teleport: false } }, 'channels'],
      [{ channels: { atm: 'no' } }, 'channels.atm'],
      [{ maxPerAuthorization: '-1.00' }, 'maxPerAuthorization'],
      [{ maxPerAuthorization: '1.001' }, 'maxPerAuthorization'],
      [{ limits: [{ amount: 'lots', interval: 'per_day' }] }, 'limits[0].amount'],
      [{ limits: [{ amount: '1.00', interval: 'per_week' }] }, 'limits.0.interval'],
      [
        {
          limits: [
            { amount: '1.00', interval: 'per_day' },
            { amount: '2.00', interval: 'per_day' },
          ],
        },
        'limits',
      ],
      [{ maxCountPerDay: 0 }, 'maxCountPerDay'],
    ];
    for (const [body, field] of cases) {
      const answer = await setControls(path, body);
      expect({ body, status: answer.status, field: answer.body.field }).toEqual({ body, status: 400, field });
    }
    const program = await setControls('', { maxPerAuthorization: '5.00' });
    expect({ status: program.status, field: program.body.field }).toEqual({ status: 400, field: 'currency' });
    const sandbox = await h.request<ErrorBody>('POST', '/sandbox/issuing/authorizations', {
      headers: admin(),
      json: {
        cardId: holder.cardId,
        amount: '1.00',
        currency: 'EUR',
        merchant: 'X',
        mcc: '12345',
        channel: 'moto',
      },
    });
    expect(sandbox.status).toBe(400);
    const read = await h.request('GET', `/issuing/v1/cards/${holder.cardId}/spending-controls`, {
      headers: partner(),
    });
    expect(read.body).toEqual({});
  });
});
