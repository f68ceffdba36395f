// A keyed card authorization is optimistic (idempotency-hooks.ts, config `idempotency: 'optimistic'`): its
// one statement waits to be sent with the key's answer, which is made before the statement runs. When the
// statement refuses it there (the account short, the card frozen since it was remembered), nothing of it
// is kept and the request runs again the general way: the client gets the decline, the key stores the
// decline, and exactly one transaction exists for the key.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everyProcessHeard } from '../../src/platform/tenants/tenant-changes.ts';
import { Harness } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let recording: string[] | undefined;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  h = await Harness.start({
    observeStatement: (statement) => {
      if (!statement.includes('tessera_processes')) recording?.push(statement);
    },
  });
});
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

type Tx = { transactionId: string; status: string; amount: string; declineReason: string | null };

const authorize = (cardId: string, amount: string, key: string) =>
  h.request<Tx>('POST', '/sandbox/issuing/authorizations', {
    headers: { authorization: `Bearer ${h.adminToken}`, 'idempotency-key': key },
    json: { cardId, amount, currency: 'EUR', merchant: 'Shop' },
  });

/** The statements one request sends, whitespace folded */
async function recorded<T>(call: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
  recording = [];
  const result = await call();
  const sent = recording.map((s) => s.replace(/\s+/g, ' ').trim());
  recording = undefined;
  return { result, sent };
}

async function transactionsOf(cardId: string) {
  const { rows } = await sql<{ id: string; status: string; amount: string; decline_reason: string | null }>`
    SELECT id, status, amount::text, decline_reason FROM issuing_transactions WHERE card_id = ${cardId} ORDER BY seq`.execute(
    h.services.db,
  );
  return rows;
}

async function partner(webhookUrl?: string) {
  const res = await h.admin<{ apiKey: string }>('POST', '/partners', {
    json: { name: `Optimistic ${Math.random()}`, ...(webhookUrl ? { webhookUrl } : {}) },
  });
  // A new partner clears every process's cached credentials when the process hears of it; a write answers
  // after 2 s even if one has not (tenant-changes.ts), and on a loaded machine one can hear later, in the
  // middle of a request recorded below, which then reads its credentials again.
  expect(await everyProcessHeard(h.services.db, 30_000)).toBe(true);
  return res.body.apiKey;
}

describe('a keyed card authorization', () => {
  it('is one statement with the key’s row and answer in it', async () => {
    const holder = await aCardholder(h, await partner(), 10_00n);
    expect((await authorize(holder.cardId, '1.00', 'warm-card')).status).toBe(201);
    const { result, sent } = await recorded(() => authorize(holder.cardId, '2.00', 'one-statement'));
    expect(result.body).toMatchObject({ status: 'authorized', amount: '2.00' });
    expect(sent, sent.join('\n---\n')).toHaveLength(1);
    expect(sent[0]).toMatch(/^WITH p0 AS \( ?SELECT statement_guard/);
    expect(sent[0]).toContain('INSERT INTO idempotency_keys');
  });

  it('refused at commit (short of funds) answers the decline, stores it, and keeps one transaction', async () => {
    const holder = await aCardholder(h, await partner(), 5_00n);
    expect((await authorize(holder.cardId, '4.00', 'first')).body.status).toBe('authorized');
    const { result: short, sent } = await recorded(() => authorize(holder.cardId, '2.00', 'short'));
    expect(short.status).toBe(201);
    expect(short.body).toMatchObject({
      status: 'declined',
      declineReason: 'insufficient_funds',
      amount: '2.00',
    });
    // The optimistic statement with the key (refused), then the request again: its key claimed with BEGIN.
    expect(sent[0]).toContain('INSERT INTO idempotency_keys');
    expect(sent[1]).toMatch(/^begin; SELECT pg_try_advisory_xact_lock/);

    const replay = await authorize(holder.cardId, '2.00', 'short');
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(short.body);
    expect(await transactionsOf(holder.cardId)).toEqual([
      expect.objectContaining({ status: 'authorized', amount: '400' }),
      expect.objectContaining({
        id: short.body.transactionId,
        status: 'declined',
        decline_reason: 'insufficient_funds',
      }),
    ]);
    // The same key with another amount is another request.
    expect((await authorize(holder.cardId, '0.50', 'short')).status).toBe(422);
    await expectLedgerInvariants(h);
  });

  it('refused because the card was frozen since it was remembered: declined card_not_active', async () => {
    const holder = await aCardholder(h, await partner(), 5_00n);
    expect((await authorize(holder.cardId, '1.00', 'before-freeze')).body.status).toBe('authorized');
    const frozen = await h.request('POST', `/issuing/v1/cards/${holder.cardId}/freeze`, {
      headers: await holder.relogin(),
    });
    expect(frozen.status).toBe(200);
    const declined = await authorize(holder.cardId, '1.00', 'after-freeze');
    expect(declined.body).toMatchObject({ status: 'declined', declineReason: 'card_not_active' });
    expect((await authorize(holder.cardId, '1.00', 'after-freeze')).body).toEqual(declined.body);
    expect((await transactionsOf(holder.cardId)).map((t) => t.status)).toEqual(['authorized', 'declined']);
  });

  it('refused when queuing its webhook sends it (a partner with a webhook URL): declined, one event', async () => {
    const holder = await aCardholder(h, await partner(receiver.url('/optimistic')), 3_00n);
    expect((await authorize(holder.cardId, '2.00', 'hooked-first')).body.status).toBe('authorized');
    const short = await authorize(holder.cardId, '2.00', 'hooked-short');
    expect(short.body).toMatchObject({ status: 'declined', declineReason: 'insufficient_funds' });
    expect((await authorize(holder.cardId, '2.00', 'hooked-short')).body).toEqual(short.body);
    const { rows } = await sql<{ type: string; deliveries: number }>`
      SELECT e.type, count(d.id)::int AS deliveries FROM events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id
      WHERE e.payload LIKE ${`%${short.body.transactionId}%`} GROUP BY e.id, e.type`.execute(h.services.db);
    expect(rows).toEqual([{ type: 'transactionCreated', deliveries: 1 }]);
    await expectLedgerInvariants(h);
  });

  it('with many at once on one short account: every answer stands, the holds never exceed the funds', async () => {
    const holder = await aCardholder(h, await partner(), 10_00n);
    expect((await authorize(holder.cardId, '0.01', 'many-warm')).status).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => authorize(holder.cardId, '2.00', `many-${i}`)),
    );
    const statuses = answers.map((a) => a.body.status);
    // 9.99 left: four of 2.00 fit, whatever the order
    expect(statuses.filter((s) => s === 'authorized')).toHaveLength(4);
    expect(statuses.filter((s) => s === 'declined')).toHaveLength(8);
    for (const [i, answer] of answers.entries()) {
      const replay = await authorize(holder.cardId, '2.00', `many-${i}`);
      expect(replay.body).toEqual(answer.body);
    }
    const rows = await transactionsOf(holder.cardId);
    expect(rows).toHaveLength(13);
    await expectLedgerInvariants(h);
  });
});
