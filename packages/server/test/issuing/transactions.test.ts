// Card transactions and 3D Secure: authorizations with ledger holds, declines with reasons, challenges
// approved, declined and timed out (clock advanced), clearing, reversal, hold expiry, and the events.
import { verifyIssuingWebhook } from '@tessera/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let partner: { apiKey: string; webhookSigningKey: string };

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  partner = (
    await h.admin<typeof partner>('POST', '/partners', {
      json: { name: 'Tx partner', webhookUrl: receiver.url('/tx') },
    })
  ).body;
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

type Tx = {
  transactionId: string;
  status: string;
  amount: string;
  settledAmount: string | null;
  declineReason: string | null;
  threeDS: { transactionAuthId: string; status: string; expiresAt: string } | null;
};
const admin = () => ({ authorization: `Bearer ${h.adminToken}` });

const cardholder = (funds?: bigint) => aCardholder(h, partner.apiKey, funds);

const authorize = (cardId: string, amount: string, extra: Record<string, unknown> = {}) =>
  h.request<Tx>('POST', '/sandbox/issuing/authorizations', {
    headers: admin(),
    json: { cardId, amount, currency: 'EUR', merchant: 'Coffee Shop', ...extra },
  });
const eventsFor = async (transactionId: string, count: number) => {
  const deliveries = await receiver.waitFor(count, (r) => r.body.includes(transactionId));
  return Promise.all(
    deliveries.map((r) =>
      verifyIssuingWebhook<{ eventType: string; data: Record<string, unknown> }>(
        r.body,
        r.headers['x-service-signature'] as string,
        partner.webhookSigningKey,
      ),
    ),
  );
};

describe('authorizations', () => {
  it('holds the amount, then clears a smaller amount and releases the rest', async () => {
    const holder = await cardholder();
    const auth = await authorize(holder.cardId, '25.50');
    expect(auth.status).toBe(201);
    expect(auth.body).toMatchObject({
      status: 'authorized',
      amount: '25.50',
      declineReason: null,
      threeDS: null,
    });
    expect(await holder.balance()).toMatchObject({
      balance: '100.00',
      availableBalance: '74.50',
      pendingAmount: '25.50',
    });

    const cleared = await h.request<Tx>(
      'POST',
      `/sandbox/issuing/transactions/${auth.body.transactionId}/clear`,
      { headers: admin(), json: { amount: '20.00' } },
    );
    expect(cleared.body).toMatchObject({ status: 'settled', amount: '25.50', settledAmount: '20.00' });
    expect(await holder.balance()).toMatchObject({
      balance: '80.00',
      availableBalance: '80.00',
      pendingAmount: '0.00',
    });
    expect(
      (
        await h.request('POST', `/sandbox/issuing/transactions/${auth.body.transactionId}/clear`, {
          headers: admin(),
        })
      ).status,
    ).toBe(409);

    const events = await eventsFor(auth.body.transactionId, 2);
    expect(events.map((e) => e.eventType).sort()).toEqual(['transactionCreated', 'transactionSettled']);
    const detail = await h.request<Tx>('GET', `/issuing/v1/transactions/${auth.body.transactionId}`, {
      headers: holder.auth,
    });
    expect(detail.body).toMatchObject({ status: 'settled', settledAmount: '20.00', cardId: holder.cardId });
  });

  it('declines with a reason: no funds, frozen card, another currency, over the limit', async () => {
    const holder = await cardholder(1_000n);
    const poor = await authorize(holder.cardId, '10.01');
    expect(poor.body).toMatchObject({ status: 'declined', declineReason: 'insufficient_funds' });
    expect((await holder.balance()).availableBalance).toBe('10.00');
    expect((await authorize(holder.cardId, '5', { currency: 'USD' })).body.declineReason).toBe(
      'currency_not_supported',
    );
    expect((await authorize(holder.cardId, '10000.01')).body.declineReason).toBe('amount_over_limit');
    await h.request('POST', `/issuing/v1/cards/${holder.cardId}/freeze`, { headers: holder.auth });
    expect((await authorize(holder.cardId, '1.00')).body.declineReason).toBe('card_not_active');
    expect((await eventsFor(poor.body.transactionId, 1))[0]?.eventType).toBe('transactionCreated');
  });

  it('refuses malformed requests naming the field, and unknown cards', async () => {
    const holder = await cardholder();
    for (const [amount, field] of [
      ['1.001', 'amount'],
      ['-5', 'amount'],
      ['abc', 'amount'],
    ]) {
      const res = await authorize(holder.cardId, amount as string);
      expect(res.status, amount).toBe(400);
      expect((res.body as unknown as { error: { field: string } }).error.field).toBe(field);
    }
    expect((await authorize('00000000-0000-4000-8000-000000000000', '1.00')).status).toBe(404);
    expect(
      (
        await h.request('POST', '/sandbox/issuing/authorizations', {
          headers: admin(),
          json: { cardId: holder.cardId, amount: '1', currency: 'EUR' },
        })
      ).status,
    ).toBe(400);
  });

  it('a reversal releases the hold; an uncleared hold lapses after 7 days', async () => {
    const holder = await cardholder();
    const reversed = await authorize(holder.cardId, '30.00');
    const after = await h.request<Tx>(
      'POST',
      `/sandbox/issuing/transactions/${reversed.body.transactionId}/reverse`,
      { headers: admin() },
    );
    expect(after.body.status).toBe('reversed');
    expect((await holder.balance()).availableBalance).toBe('100.00');
    expect(
      (
        await h.request('POST', `/sandbox/issuing/transactions/${reversed.body.transactionId}/reverse`, {
          headers: admin(),
        })
      ).status,
    ).toBe(409);

    const lapsing = await authorize(holder.cardId, '40.00');
    expect((await holder.balance()).availableBalance).toBe('60.00');
    const swept = await h.advanceClock(7 * 24 * 3600 + 1);
    expect(swept.processed['issuing-authorization-holds']).toBeGreaterThanOrEqual(1);
    expect(await holder.balance()).toMatchObject({ balance: '100.00', availableBalance: '100.00' });
    const detail = await h.request<Tx>('GET', `/issuing/v1/transactions/${lapsing.body.transactionId}`, {
      headers: await holder.relogin(),
    });
    expect(detail.body.status).toBe('expired');

    // Both ends are told: the reversal and the lapse each send transactionStatusChanged.
    const reversedEvents = await eventsFor(reversed.body.transactionId, 2);
    expect(reversedEvents.map((e) => e.eventType)).toContain('transactionStatusChanged');
    expect(reversedEvents.find((e) => e.eventType === 'transactionStatusChanged')?.data).toEqual({
      transactionId: reversed.body.transactionId,
      status: 'reversed',
    });
    const lapsedEvents = await eventsFor(lapsing.body.transactionId, 2);
    expect(lapsedEvents.find((e) => e.eventType === 'transactionStatusChanged')?.data).toEqual({
      transactionId: lapsing.body.transactionId,
      status: 'expired',
    });
  });

  it('a card the issuer suspends declines until it is reinstated', async () => {
    const holder = await cardholder();
    const suspend = await h.admin<{ status: string }>('POST', `/issuing/cards/${holder.cardId}/suspend`);
    expect(suspend.body).toEqual({ cardId: holder.cardId, status: 'suspended' });
    expect((await authorize(holder.cardId, '1.00')).body).toMatchObject({
      status: 'declined',
      declineReason: 'card_not_active',
    });
    // Only the issuer lifts it: the cardholder cannot unfreeze a suspension.
    const unfreeze = await h.request('POST', `/issuing/v1/cards/${holder.cardId}/unfreeze`, {
      headers: holder.auth,
    });
    expect(unfreeze.status).toBe(409);
    expect((await h.admin('POST', `/issuing/cards/${holder.cardId}/suspend`)).status).toBe(409);
    const reinstated = await h.admin<{ status: string }>('POST', `/issuing/cards/${holder.cardId}/reinstate`);
    expect(reinstated.body.status).toBe('active');
    expect((await authorize(holder.cardId, '1.00')).body.status).toBe('authorized');
    expect(
      (await h.admin('POST', '/issuing/cards/00000000-0000-4000-8000-000000000000/suspend')).status,
    ).toBe(404);
  });
});

describe('3D Secure', () => {
  it('a challenge approved by the cardholder authorizes and holds', async () => {
    const holder = await cardholder();
    const pending = await authorize(holder.cardId, '12.34', { threeDS: true });
    expect(pending.body).toMatchObject({ status: 'pending_3ds', threeDS: { status: 'pending' } });
    expect((await holder.balance()).availableBalance).toBe('100.00');
    const list = await h.request<{ data: { transactionAuthId: string; amount: string; merchant: string }[] }>(
      'GET',
      '/issuing/v1/transactions/3d-secure',
      { headers: holder.auth },
    );
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ amount: '12.34', merchant: 'Coffee Shop' });
    const authId = list.body.data[0]?.transactionAuthId;
    const decided = await h.request<Tx>('PATCH', `/issuing/v1/transactions/3d-secure/${authId}`, {
      headers: holder.auth,
      json: { authType: 'fingerprint', authStatus: 'success' },
    });
    expect(decided.body).toMatchObject({
      status: 'authorized',
      threeDS: { status: 'authorized', authType: 'fingerprint' },
    });
    expect((await holder.balance()).availableBalance).toBe('87.66');
    const again = await h.request<{ details: { status: string } }>(
      'PATCH',
      `/issuing/v1/transactions/3d-secure/${authId}`,
      {
        headers: holder.auth,
        json: { authType: 'pinCode', authStatus: 'failed' },
      },
    );
    expect(again.status).toBe(409);
    expect(again.body.details.status).toBe('authorized');

    const events = await eventsFor(pending.body.transactionId, 3);
    const requested = events.find((e) => e.eventType === 'transaction3dsRequested');
    expect(requested?.data).toMatchObject({
      transactionId: pending.body.transactionId,
      // The id the decision goes to, so a partner can act on the event alone.
      transactionAuthId: authId,
      cardId: holder.cardId,
      amount: 12.34,
      currency: 'EUR',
      merchant: 'Coffee Shop',
    });
    expect(typeof requested?.data.requestedAt).toBe('string');
    expect(events.find((e) => e.eventType === 'transaction3dsCompleted')?.data).toEqual({
      transactionId: pending.body.transactionId,
      status: 'authorized',
    });
  });

  it('an approval is checked again: a card frozen meanwhile fails the challenge and holds nothing', async () => {
    const holder = await cardholder();
    const pending = await authorize(holder.cardId, '10.00', { threeDS: true });
    const authId = pending.body.threeDS?.transactionAuthId;
    expect(
      (await h.request('POST', `/issuing/v1/cards/${holder.cardId}/freeze`, { headers: holder.auth })).status,
    ).toBe(200);
    const decided = await h.request<Tx>('PATCH', `/issuing/v1/transactions/3d-secure/${authId}`, {
      headers: holder.auth,
      json: { authType: 'fingerprint', authStatus: 'success' },
    });
    expect(decided.body).toMatchObject({
      status: 'declined',
      declineReason: 'card_not_active',
      threeDS: { status: 'failed' },
    });
    expect(await holder.balance()).toMatchObject({ availableBalance: '100.00', pendingAmount: '0.00' });
    const events = await eventsFor(pending.body.transactionId, 3);
    expect(events.find((e) => e.eventType === 'transaction3dsCompleted')?.data).toEqual({
      transactionId: pending.body.transactionId,
      status: 'failed',
    });
  });

  it('a declined or cancelled challenge declines the payment', async () => {
    const holder = await cardholder();
    for (const [authStatus, status, reason] of [
      ['failed', 'declined', '3ds_declined'],
      ['canceled', 'cancelled', '3ds_cancelled'],
    ] as const) {
      const pending = await authorize(holder.cardId, '5.00', { threeDS: true });
      const decided = await h.request<Tx>(
        'PATCH',
        `/issuing/v1/transactions/3d-secure/${pending.body.threeDS?.transactionAuthId}`,
        {
          headers: holder.auth,
          json: { authType: 'other', authStatus },
        },
      );
      expect(decided.body).toMatchObject({ status: 'declined', declineReason: reason, threeDS: { status } });
      const completed = (await eventsFor(pending.body.transactionId, 3)).find(
        (e) => e.eventType === 'transaction3dsCompleted',
      );
      expect(completed?.data.status).toBe(status);
    }
    expect((await holder.balance()).availableBalance).toBe('100.00');
  });

  it('an unanswered challenge times out when the clock passes its expiry', async () => {
    const holder = await cardholder();
    const pending = await authorize(holder.cardId, '7.00', { threeDS: true });
    const expiresAt = Date.parse(pending.body.threeDS?.expiresAt ?? '');
    const created = Date.parse(
      (await h.request<{ now: string }>('GET', '/sandbox/clock', { headers: admin() })).body.now,
    );
    expect(expiresAt - created).toBe(600_000);
    expect((await h.advanceClock(599)).processed['issuing-3ds-challenges']).toBe(0);
    expect((await h.advanceClock(1)).processed['issuing-3ds-challenges']).toBe(1);
    const late = await h.request(
      'PATCH',
      `/issuing/v1/transactions/3d-secure/${pending.body.threeDS?.transactionAuthId}`,
      {
        headers: holder.auth,
        json: { authType: 'pinCode', authStatus: 'success' },
      },
    );
    expect(late.status).toBe(409);
    const detail = await h.request<Tx>('GET', `/issuing/v1/transactions/${pending.body.transactionId}`, {
      headers: holder.auth,
    });
    expect(detail.body).toMatchObject({
      status: 'declined',
      declineReason: '3ds_timeout',
      threeDS: { status: 'timeout' },
    });
    const completed = (await eventsFor(pending.body.transactionId, 3)).find(
      (e) => e.eventType === 'transaction3dsCompleted',
    );
    expect(completed?.data).toEqual({ transactionId: pending.body.transactionId, status: 'timeout' });
  });

  it('validates the decision body and keeps challenges to their cardholder', async () => {
    const holder = await cardholder();
    const other = await cardholder();
    const pending = await authorize(holder.cardId, '3.00', { threeDS: true });
    const path = `/issuing/v1/transactions/3d-secure/${pending.body.threeDS?.transactionAuthId}`;
    for (const [json, field] of [
      [{ authType: 'pinCode' }, 'authStatus'],
      [{ authStatus: 'success' }, 'authType'],
      [{ authType: 'retina', authStatus: 'success' }, 'authType'],
      [{ authType: 'pinCode', authStatus: 'approved' }, 'authStatus'],
    ] as const) {
      const res = await h.request<{ field: string }>('PATCH', path, { headers: holder.auth, json });
      expect(res.status).toBe(400);
      expect(res.body.field).toBe(field);
    }
    expect(
      (
        await h.request('PATCH', path, {
          headers: other.auth,
          json: { authType: 'pinCode', authStatus: 'success' },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await h.request<{ data: unknown[] }>('GET', '/issuing/v1/transactions/3d-secure', {
          headers: other.auth,
        })
      ).body.data,
    ).toEqual([]);
    expect(
      (
        await h.request('GET', `/issuing/v1/transactions/${pending.body.transactionId}`, {
          headers: other.auth,
        })
      ).status,
    ).toBe(404);
    expect((await h.request('GET', '/issuing/v1/transactions/3d-secure')).status).toBe(401);
  });
});

describe('transaction list', () => {
  it('pages newest first and filters by status and dates', async () => {
    const holder = await cardholder();
    const ids: string[] = [];
    for (const amount of ['1.00', '2.00', '3.00'])
      ids.push((await authorize(holder.cardId, amount)).body.transactionId);
    await authorize(holder.cardId, '1000.00');
    const page1 = await h.request<{ data: Tx[]; total: number; page: number; size: number }>(
      'GET',
      '/issuing/v1/transactions?page=1&size=2',
      { headers: holder.auth },
    );
    expect(page1.body).toMatchObject({ total: 4, page: 1, size: 2 });
    expect(page1.body.data.map((t) => t.amount)).toEqual(['1000.00', '3.00']);
    const page2 = await h.request<{ data: Tx[] }>('GET', '/issuing/v1/transactions?page=2&size=2', {
      headers: holder.auth,
    });
    expect(page2.body.data.map((t) => t.amount)).toEqual(['2.00', '1.00']);
    const declined = await h.request<{ data: Tx[] }>(
      'GET',
      '/issuing/v1/transactions?status=declined&type=card_payment',
      { headers: holder.auth },
    );
    expect(declined.body.data.map((t) => t.declineReason)).toEqual(['insufficient_funds']);
    const future = new Date(Date.now() + 365 * 24 * 3600 * 1000).toISOString();
    expect(
      (
        await h.request<{ data: Tx[] }>(
          'GET',
          `/issuing/v1/transactions?startDate=${encodeURIComponent(future)}`,
          { headers: holder.auth },
        )
      ).body.data,
    ).toEqual([]);
    for (const query of ['size=101', 'page=0', 'status=weird', 'startDate=yesterday']) {
      expect(
        (await h.request('GET', `/issuing/v1/transactions?${query}`, { headers: holder.auth })).status,
        query,
      ).toBe(400);
    }
  });
});
