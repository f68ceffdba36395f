// Cardholder disputes (docs/issuing.md, Disputes): the partner disputes a cleared payment, the account is
// credited provisionally, the network decides by hand or on the sandbox clock, the credit is kept or taken
// back (what the account no longer holds is the program's loss); refused inputs name the field; another
// partner's payment is a 404; events reach the partner; the ledger's invariants hold.
import { verifyIssuingWebhook } from '@tessera/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness, OWN_HARNESS_TIMEOUT_MS } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let partner: { apiKey: string; webhookSigningKey: string };
let other: { apiKey: string };

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  partner = (
    await h.admin<typeof partner>('POST', '/partners', {
      json: { name: 'Dispute partner', webhookUrl: receiver.url('/disputes') },
    })
  ).body;
  other = (await h.admin<typeof other>('POST', '/partners', { json: { name: 'Other partner' } })).body;
});
afterAll(async () => {
  await expectLedgerInvariants(h);
  await h.close();
  await receiver.close();
});

type Dispute = {
  disputeId: string;
  transactionId: string;
  status: string;
  reason: string;
  amount: string;
  provisionalCredit: string;
  unrecoveredAmount: string;
  decideBy: string;
  decidedAt: string | null;
};
// The issuing API's error envelope: {code, message, error, detail, field?, details?, requestId}
type Refusal = { error: string; field?: string; details?: Record<string, unknown> };

const admin = () => ({ authorization: `Bearer ${h.adminToken}` });
const sandbox = <T>(path: string, json?: Record<string, unknown>) =>
  h.request<T>('POST', `/sandbox/issuing${path}`, { headers: admin(), ...(json ? { json } : {}) });

/** A cardholder with 100.00 and a cleared payment of `amount` (default 40.00). */
async function aClearedPayment(amount = '40.00', target = h, key = partner.apiKey) {
  const holder = await aCardholder(target, key, 10_000n);
  const auth = await target.request<{ transactionId: string }>('POST', '/sandbox/issuing/authorizations', {
    headers: { authorization: `Bearer ${target.adminToken}` },
    json: { cardId: holder.cardId, amount, currency: 'EUR', merchant: 'Online Shop' },
  });
  await target.request('POST', `/sandbox/issuing/transactions/${auth.body.transactionId}/clear`, {
    headers: { authorization: `Bearer ${target.adminToken}` },
  });
  return { holder, transactionId: auth.body.transactionId };
}
const dispute = (transactionId: string, json: Record<string, unknown>, key = partner.apiKey, target = h) =>
  target.request<Dispute & Refusal>('POST', `/issuing/v1/transactions/${transactionId}/disputes`, {
    headers: { 'x-partner-api-key': key },
    json,
  });

describe('cardholder disputes', () => {
  it('credits the account at once; won, the credit stays and the network pays the program back', async () => {
    const { holder, transactionId } = await aClearedPayment();
    expect((await holder.balance()).balance).toBe('60.00');
    const opened = await dispute(transactionId, {
      reason: 'not_received',
      amount: '40.00',
      explanation: 'Never came',
    });
    expect(opened.status).toBe(201);
    expect(opened.body).toMatchObject({
      transactionId,
      status: 'under_review',
      reason: 'not_received',
      amount: '40.00',
      provisionalCredit: '40.00',
      decidedAt: null,
    });
    expect(await holder.balance()).toMatchObject({ balance: '100.00', availableBalance: '100.00' });

    const won = await sandbox<Dispute>(`/disputes/${opened.body.disputeId}/decide`, { outcome: 'won' });
    expect(won.body).toMatchObject({ status: 'won', unrecoveredAmount: '0.00' });
    expect((await holder.balance()).balance).toBe('100.00');
    expect((await sandbox(`/disputes/${opened.body.disputeId}/decide`, { outcome: 'lost' })).status).toBe(
      409,
    );

    const listed = await h.request<{ data: Dispute[] }>(
      'GET',
      `/issuing/v1/transactions/${transactionId}/disputes`,
      {
        headers: { 'x-partner-api-key': partner.apiKey },
      },
    );
    expect(listed.body.data.map((d) => d.status)).toEqual(['won']);
    const deliveries = await receiver.waitFor(2, (r) => r.body.includes(opened.body.disputeId));
    const events = await Promise.all(
      deliveries.map((r) =>
        verifyIssuingWebhook<{ eventType: string; data: Record<string, unknown> }>(
          r.body,
          r.headers['x-service-signature'] as string,
          partner.webhookSigningKey,
        ),
      ),
    );
    expect(events.map((e) => [e.eventType, e.data.status]).sort()).toEqual([
      ['disputeCreated', 'under_review'],
      ['disputeStatusChanged', 'won'],
    ]);
  });

  it('lost, the credit is taken back — what the account spent meanwhile is the program’s loss', async () => {
    const { holder, transactionId } = await aClearedPayment();
    const opened = await dispute(transactionId, { reason: 'fraud', amount: '40.00' });
    // The cardholder spends 80.00 of the 100.00 while the network reviews.
    const spend = await sandbox<{ transactionId: string }>('/force-posts', {
      cardId: holder.cardId,
      amount: '80.00',
      currency: 'EUR',
      merchant: 'Store',
    });
    expect(spend.status).toBe(201);
    const lost = await sandbox<Dispute>(`/disputes/${opened.body.disputeId}/decide`, { outcome: 'lost' });
    expect(lost.body).toMatchObject({
      status: 'lost',
      provisionalCredit: '40.00',
      unrecoveredAmount: '20.00',
    });
    expect(await holder.balance()).toMatchObject({ balance: '0.00', availableBalance: '0.00' });
    // A lost dispute gives its claim back: the payment can be disputed again.
    expect((await dispute(transactionId, { reason: 'other', amount: '40.00' })).status).toBe(201);
  });

  it('the network decides by itself after ten sandbox days: an amount ending in 13 cents is lost', async () => {
    const won = await aClearedPayment('25.00');
    const lost = await aClearedPayment('25.13');
    const a = await dispute(won.transactionId, { reason: 'duplicate', amount: '25.00' });
    const b = await dispute(lost.transactionId, { reason: 'duplicate', amount: '25.13' });
    const swept = await h.advanceClock(10 * 86_400 + 1);
    expect(swept.processed['issuing-dispute-decisions']).toBeGreaterThanOrEqual(2);
    const read = (id: string) =>
      h.request<Dispute>('GET', `/issuing/v1/disputes/${id}`, {
        headers: { 'x-partner-api-key': partner.apiKey },
      });
    expect((await read(a.body.disputeId)).body.status).toBe('won');
    expect((await read(b.body.disputeId)).body.status).toBe('lost');
    expect(await lost.holder.balance()).toMatchObject({ balance: '74.87' });
  });

  it(
    'without provisional credit, a won dispute credits the cardholder when decided',
    async () => {
      const plain = await Harness.start({ env: { TESSERA_ISSUING_DISPUTE_PROVISIONAL_CREDIT: 'false' } });
      try {
        const key = (
          await plain.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'No credit' } })
        ).body.apiKey;
        const { holder, transactionId } = await aClearedPayment('30.00', plain, key);
        const opened = await dispute(
          transactionId,
          { reason: 'not_as_described', amount: '30.00' },
          key,
          plain,
        );
        expect(opened.body.provisionalCredit).toBe('0.00');
        expect((await holder.balance()).balance).toBe('70.00');
        await plain.request('POST', `/sandbox/issuing/disputes/${opened.body.disputeId}/decide`, {
          headers: { authorization: `Bearer ${plain.adminToken}` },
          json: { outcome: 'won' },
        });
        expect((await holder.balance()).balance).toBe('100.00');
        await expectLedgerInvariants(plain);
      } finally {
        await plain.close();
      }
    },
    OWN_HARNESS_TIMEOUT_MS,
  );

  it('refuses a second dispute of the same amount, more than is left, refunds beyond it, and other partners', async () => {
    const { transactionId } = await aClearedPayment('40.00');
    expect((await dispute(transactionId, { reason: 'incorrect_amount', amount: '15.00' })).status).toBe(201);
    const beyond = await dispute(transactionId, { reason: 'incorrect_amount', amount: '25.01' });
    expect(beyond.status).toBe(400);
    expect(beyond.body).toMatchObject({
      error: 'validation_failed',
      field: 'amount',
      details: { disputable: '25.00' },
    });
    expect((await dispute(transactionId, { reason: 'incorrect_amount', amount: '25.00' })).status).toBe(201);
    const again = await dispute(transactionId, { reason: 'incorrect_amount', amount: '40.00' });
    expect(again.status).toBe(409);
    // What disputes claim cannot also be refunded.
    expect((await sandbox('/refunds', { transactionId, amount: '0.01' })).status).toBe(409);

    const uncleared = await aCardholder(h, partner.apiKey);
    const auth = await sandbox<{ transactionId: string }>('/authorizations', {
      cardId: uncleared.cardId,
      amount: '5.00',
      currency: 'EUR',
      merchant: 'Shop',
    });
    expect((await dispute(auth.body.transactionId, { reason: 'fraud', amount: '5.00' })).status).toBe(409);
    expect((await dispute(transactionId, { reason: 'fraud', amount: '1.00' }, other.apiKey)).status).toBe(
      404,
    );
    expect(
      (await dispute('00000000-0000-4000-8000-000000000000', { reason: 'fraud', amount: '1.00' })).status,
    ).toBe(404);
    const badReason = await dispute(transactionId, { reason: 'bored', amount: '1.00' });
    expect(badReason.status).toBe(400);
    expect(badReason.body.field).toBe('reason');
    const badAmount = await dispute(transactionId, { reason: 'fraud', amount: '1.001' });
    expect(badAmount.status).toBe(400);
    expect(badAmount.body.field).toBe('amount');
    expect(
      (
        await h.request('GET', `/issuing/v1/transactions/${transactionId}/disputes`, {
          headers: { 'x-partner-api-key': other.apiKey },
        })
      ).status,
    ).toBe(404);
  });
});
