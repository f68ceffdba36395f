// Clearing that differs from the authorization (docs/issuing.md, Clearing): parts that keep the rest held,
// more than authorized within the tolerance (and declined beyond it, or when the account is short, with
// nothing posted), late presentment after the hold lapsed, force posts, refunds to the card, partial
// reversals; the events and the balances after each, and the ledger's invariants at the end.
import { verifyIssuingWebhook } from '@tessera/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness, OWN_HARNESS_TIMEOUT_MS } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let partner: { apiKey: string; webhookSigningKey: string };

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  partner = (
    await h.admin<typeof partner>('POST', '/partners', {
      json: { name: 'Clearing partner', webhookUrl: receiver.url('/clearing') },
    })
  ).body;
});
afterAll(async () => {
  await expectLedgerInvariants(h);
  await h.close();
  await receiver.close();
});

type Tx = {
  transactionId: string;
  type: string;
  status: string;
  amount: string;
  settledAmount: string | null;
  heldAmount: string | null;
  refundedAmount: string;
  forcePost: boolean;
  originalTransactionId: string | null;
};
type Refusal = {
  error: { code: string; message: string; field?: string; details?: Record<string, unknown> };
};

const sandbox = <T>(path: string, json?: Record<string, unknown>) =>
  h.request<T>('POST', `/sandbox/issuing${path}`, {
    headers: { authorization: `Bearer ${h.adminToken}` },
    ...(json ? { json } : {}),
  });
const authorize = (cardId: string, amount: string) =>
  sandbox<Tx>('/authorizations', { cardId, amount, currency: 'EUR', merchant: 'Fuel Station' });
const clear = (id: string, json?: Record<string, unknown>) =>
  sandbox<Tx & Refusal>(`/transactions/${id}/clear`, json);
const reverse = (id: string, json?: Record<string, unknown>) =>
  sandbox<Tx & Refusal>(`/transactions/${id}/reverse`, json);
const eventTypes = async (transactionId: string, count: number) => {
  const deliveries = await receiver.waitFor(count, (r) => r.body.includes(transactionId));
  const events = await Promise.all(
    deliveries.map((r) =>
      verifyIssuingWebhook<{ eventType: string; data: Record<string, unknown> }>(
        r.body,
        r.headers['x-service-signature'] as string,
        partner.webhookSigningKey,
      ),
    ),
  );
  return events.map((e) => e.eventType);
};

describe('clearing in parts', () => {
  it('posts each part and keeps the rest held until the final one, which releases what is left', async () => {
    const holder = await aCardholder(h, partner.apiKey, 20_000n);
    const auth = await authorize(holder.cardId, '100.00');
    const id = auth.body.transactionId;

    const first = await clear(id, { amount: '30.00', final: false });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'authorized', settledAmount: '30.00', heldAmount: '70.00' });
    expect(await holder.balance()).toMatchObject({
      balance: '170.00',
      availableBalance: '100.00',
      pendingAmount: '70.00',
    });
    const second = await clear(id, { amount: '50.00', final: false });
    expect(second.body).toMatchObject({ status: 'authorized', settledAmount: '80.00', heldAmount: '20.00' });
    const last = await clear(id, { amount: '15.00' });
    expect(last.body).toMatchObject({ status: 'settled', settledAmount: '95.00', heldAmount: '0.00' });
    expect(await holder.balance()).toMatchObject({
      balance: '105.00',
      availableBalance: '105.00',
      pendingAmount: '0.00',
    });
    expect((await clear(id, { amount: '1.00' })).status).toBe(409);
    expect((await eventTypes(id, 4)).sort()).toEqual([
      'transactionCreated',
      'transactionSettled',
      'transactionSettled',
      'transactionSettled',
    ]);
  });

  it('a part without an amount clears what is still held; a lapse after parts keeps what was cleared', async () => {
    const holder = await aCardholder(h, partner.apiKey, 10_000n);
    const whole = await authorize(holder.cardId, '12.34');
    expect((await clear(whole.body.transactionId)).body).toMatchObject({
      status: 'settled',
      settledAmount: '12.34',
    });

    const lapsing = await authorize(holder.cardId, '40.00');
    await clear(lapsing.body.transactionId, { amount: '10.00', final: false });
    await h.advanceClock(7 * 24 * 3600 + 1);
    const after = await h.request<Tx>('GET', `/issuing/v1/transactions/${lapsing.body.transactionId}`, {
      headers: await holder.relogin(),
    });
    expect(after.body).toMatchObject({ status: 'expired', settledAmount: '10.00', heldAmount: '0.00' });
    expect(await holder.balance()).toMatchObject({ balance: '77.66', availableBalance: '77.66' });
  });
});

describe('clearing above the authorization', () => {
  it('posts up to the tolerance from the available balance; beyond it nothing is posted', async () => {
    const holder = await aCardholder(h, partner.apiKey, 10_000n);
    const tip = await authorize(holder.cardId, '50.00');
    const cleared = await clear(tip.body.transactionId, { amount: '60.00' });
    expect(cleared.body).toMatchObject({ status: 'settled', amount: '50.00', settledAmount: '60.00' });
    expect(await holder.balance()).toMatchObject({ balance: '40.00', availableBalance: '40.00' });

    const over = await authorize(holder.cardId, '10.00');
    const refused = await clear(over.body.transactionId, { amount: '12.01' });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      field: 'amount',
      details: { reason: 'over_tolerance', maxAmount: '12.00' },
    });
    const unchanged = await h.request<Tx>('GET', `/issuing/v1/transactions/${over.body.transactionId}`, {
      headers: await holder.relogin(),
    });
    expect(unchanged.body).toMatchObject({ status: 'authorized', settledAmount: null, heldAmount: '10.00' });
    expect(await holder.balance()).toMatchObject({ balance: '40.00', availableBalance: '30.00' });
    // Parts count together: 8 + 4 = 12 is the ceiling, one cent more is declined.
    await clear(over.body.transactionId, { amount: '8.00', final: false });
    expect((await clear(over.body.transactionId, { amount: '4.01' })).status).toBe(422);
    expect((await clear(over.body.transactionId, { amount: '4.00' })).body).toMatchObject({
      status: 'settled',
      settledAmount: '12.00',
    });
  });

  it('is declined, with nothing posted, when the account cannot cover the excess', async () => {
    const holder = await aCardholder(h, partner.apiKey, 5_200n);
    const auth = await authorize(holder.cardId, '50.00');
    const refused = await clear(auth.body.transactionId, { amount: '55.00' });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toMatchObject({ reason: 'insufficient_funds' });
    expect(await holder.balance()).toMatchObject({
      balance: '52.00',
      availableBalance: '2.00',
      pendingAmount: '50.00',
    });
    expect((await clear(auth.body.transactionId, { amount: '52.00' })).body.status).toBe('settled');
    expect(await holder.balance()).toMatchObject({ balance: '0.00', availableBalance: '0.00' });
  });

  it(
    'follows the configured tolerance',
    async () => {
      const strict = await Harness.start({ env: { TESSERA_ISSUING_CLEARING_TOLERANCE_PERCENT: '0' } });
      try {
        const owner = (
          await strict.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Strict' } })
        ).body;
        const holder = await aCardholder(strict, owner.apiKey);
        const auth = await strict.request<Tx>('POST', '/sandbox/issuing/authorizations', {
          headers: { authorization: `Bearer ${strict.adminToken}` },
          json: { cardId: holder.cardId, amount: '10.00', currency: 'EUR', merchant: 'Bar' },
        });
        const clearing = (amount: string) =>
          strict.request('POST', `/sandbox/issuing/transactions/${auth.body.transactionId}/clear`, {
            headers: { authorization: `Bearer ${strict.adminToken}` },
            json: { amount },
          });
        expect((await clearing('10.01')).status).toBe(422);
        expect((await clearing('10.00')).status).toBe(200);
      } finally {
        await strict.close();
      }
    },
    OWN_HARNESS_TIMEOUT_MS,
  );
});

describe('late presentment, force posts, reversals and refunds', () => {
  it('a clearing after the hold lapsed still posts, from what the account holds now', async () => {
    const holder = await aCardholder(h, partner.apiKey, 5_000n);
    const late = await authorize(holder.cardId, '40.00');
    const poor = await authorize(holder.cardId, '10.00');
    await h.advanceClock(7 * 24 * 3600 + 1);
    const cleared = await clear(late.body.transactionId);
    expect(cleared.body).toMatchObject({ status: 'settled', settledAmount: '40.00', heldAmount: '0.00' });
    expect(await holder.balance()).toMatchObject({ balance: '10.00', availableBalance: '10.00' });
    const short = await clear(poor.body.transactionId, { amount: '11.00' });
    expect(short.status).toBe(422);
    expect(short.body.error.details).toMatchObject({ reason: 'insufficient_funds' });
    expect(await holder.balance()).toMatchObject({ balance: '10.00' });
    expect(await eventTypes(late.body.transactionId, 3)).toEqual([
      'transactionCreated',
      'transactionStatusChanged',
      'transactionSettled',
    ]);
  });

  it('a force post pays without an authorization, and is declined when the account is short', async () => {
    const holder = await aCardholder(h, partner.apiKey, 3_000n);
    const forced = await sandbox<Tx>('/force-posts', {
      cardId: holder.cardId,
      amount: '25.00',
      currency: 'EUR',
      merchant: 'Airline',
    });
    expect(forced.status).toBe(201);
    expect(forced.body).toMatchObject({
      type: 'card_payment',
      status: 'settled',
      forcePost: true,
      settledAmount: '25.00',
      heldAmount: null,
    });
    expect(await holder.balance()).toMatchObject({ balance: '5.00', availableBalance: '5.00' });
    const refused = await sandbox<Refusal>('/force-posts', {
      cardId: holder.cardId,
      amount: '5.01',
      currency: 'EUR',
      merchant: 'Airline',
    });
    expect(refused.status).toBe(422);
    const usd = await sandbox<Refusal>('/force-posts', {
      cardId: holder.cardId,
      amount: '1',
      currency: 'USD',
      merchant: 'Airline',
    });
    expect(usd.status).toBe(400);
    expect(usd.body.error.field).toBe('currency');
    expect(
      (
        await sandbox('/force-posts', {
          cardId: '00000000-0000-4000-8000-000000000000',
          amount: '1',
          currency: 'EUR',
          merchant: 'Airline',
        })
      ).status,
    ).toBe(404);
    expect((await eventTypes(forced.body.transactionId, 2)).sort()).toEqual([
      'transactionCreated',
      'transactionSettled',
    ]);
  });

  it('a partial reversal releases part of the hold; releasing the rest of a partly cleared one settles it', async () => {
    const holder = await aCardholder(h, partner.apiKey, 10_000n);
    const auth = await authorize(holder.cardId, '100.00');
    const id = auth.body.transactionId;
    const partial = await reverse(id, { amount: '30.00' });
    expect(partial.body).toMatchObject({ status: 'authorized', heldAmount: '70.00' });
    expect(await holder.balance()).toMatchObject({ balance: '100.00', availableBalance: '30.00' });
    const tooMuch = await reverse(id, { amount: '70.01' });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.error.field).toBe('amount');
    await clear(id, { amount: '20.00', final: false });
    const rest = await reverse(id);
    expect(rest.body).toMatchObject({ status: 'settled', settledAmount: '20.00', heldAmount: '0.00' });
    expect(await holder.balance()).toMatchObject({ balance: '80.00', availableBalance: '80.00' });
    expect((await reverse(id)).status).toBe(409);
  });

  it('a refund credits the card as its own transaction, up to what is left of the payment', async () => {
    const holder = await aCardholder(h, partner.apiKey, 10_000n);
    const auth = await authorize(holder.cardId, '100.00');
    const id = auth.body.transactionId;
    expect((await sandbox<Refusal>('/refunds', { transactionId: id, amount: '1.00' })).status).toBe(409);
    await clear(id, { amount: '80.00' });
    const refund = await sandbox<Tx>('/refunds', { transactionId: id, amount: '30.00' });
    expect(refund.status).toBe(201);
    expect(refund.body).toMatchObject({
      type: 'refund',
      status: 'settled',
      amount: '30.00',
      originalTransactionId: id,
    });
    const tooMuch = await sandbox<Refusal>('/refunds', { transactionId: id, amount: '50.01' });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.error).toMatchObject({ field: 'amount', details: { refundable: '50.00' } });
    expect((await sandbox('/refunds', { transactionId: id, amount: '50.00' })).status).toBe(201);
    const original = await h.request<Tx>('GET', `/issuing/v1/transactions/${id}`, {
      headers: await holder.relogin(),
    });
    expect(original.body).toMatchObject({
      status: 'settled',
      settledAmount: '80.00',
      refundedAmount: '80.00',
    });
    expect(await holder.balance()).toMatchObject({ balance: '100.00', availableBalance: '100.00' });
    expect((await eventTypes(refund.body.transactionId, 2)).sort()).toEqual([
      'transactionCreated',
      'transactionSettled',
    ]);
  });
});
