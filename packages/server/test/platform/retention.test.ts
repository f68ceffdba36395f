// Retention (docs/operations.md): the sweeps delete a succeeded webhook's attempts and the sandbox's
// messages once they are older than their configured days, and keep everything younger; a used
// Idempotency-Key is refused for its configured days, then forgotten; a backlog goes in batches.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments } from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
// The rest of the SHA-256 of rows written here (migration 0087), which tells them apart from the app's
const BACKLOG = Buffer.alloc(16, 1);
const ANSWERS = Buffer.alloc(16, 2);
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  h = await Harness.start({
    env: {
      TESSERA_WEBHOOK_ATTEMPT_RETENTION_DAYS: '10',
      TESSERA_SANDBOX_MESSAGE_RETENTION_DAYS: '5',
      TESSERA_IDEMPOTENCY_KEY_RETENTION_DAYS: '3',
    },
  });
});
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

const count = async (table: 'webhook_attempts' | 'sandbox_messages') =>
  Number(
    (await sql<{ n: string }>`SELECT count(*)::text AS n FROM ${sql.table(table)}`.execute(h.services.db))
      .rows[0]?.n,
  );

describe('retention', () => {
  it('deletes succeeded webhook attempts and sandbox messages past their days, and nothing younger', async () => {
    const merchant = await aMerchant(h, { ipnUrl: receiver.url() });
    const customer = await aCustomer(h, merchant);
    expect((await payments(h, merchant, 'POST', '/order', anOrder(customer))).status).toBe(201);
    await receiver.waitFor(1);
    // A customer registering by email is sent a code: a sandbox message.
    const partner = await h.admin<{ partnerId: string }>('POST', '/partners', { json: { name: 'Retained' } });
    const registered = await h.request('POST', '/issuing/v1/auth/register/email', {
      headers: { 'x-partner-id': partner.body.partnerId },
      json: { email: 'retained@example.com', password: 'Str0ng!pass' },
    });
    expect(registered.status).toBe(202);
    // The attempt's row is written once the answer is in: wait for it.
    let attempts = 0;
    for (let i = 0; i < 100 && attempts === 0; i++) {
      attempts = await count('webhook_attempts');
      if (attempts === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const messages = await count('sandbox_messages');
    expect(attempts, 'webhook attempts').toBeGreaterThan(0);
    expect(messages, 'sandbox messages').toBeGreaterThan(0);

    // Younger than both: kept.
    await h.advanceClock(4 * 86_400);
    expect(await count('webhook_attempts')).toBe(attempts);
    expect(await count('sandbox_messages')).toBe(messages);
    // Past the messages' 5 days, not the attempts' 10.
    const advanced = await h.advanceClock(2 * 86_400);
    expect(advanced.processed['sandbox-message-retention']).toBeGreaterThanOrEqual(messages);
    expect(await count('sandbox_messages')).toBe(0);
    expect(await count('webhook_attempts')).toBe(attempts);
    await h.advanceClock(5 * 86_400);
    expect(await count('webhook_attempts')).toBe(0);
  });

  it('refuses a used Idempotency-Key for its configured days, then runs a request with it afresh', async () => {
    const withKey = { 'idempotency-key': 'retention-k1' };
    const first = await h.admin('POST', '/partners', { headers: withKey, json: { name: 'Kept three days' } });
    expect(first.status).toBe(201);
    // Past the answer's day: refused, not run again.
    await h.advanceClock(2 * 86_400);
    const refused = await h.admin<{ error: { code: string } }>('POST', '/partners', {
      headers: withKey,
      json: { name: 'Kept three days' },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('idempotency_key_expired');
    // Past the 3 configured days (not the default 30): forgotten.
    await h.advanceClock(86_400 + 1);
    const again = await h.admin('POST', '/partners', {
      headers: withKey,
      json: { name: 'After three days' },
    });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBeNull();
  });

  it('clears a backlog of key tombstones 5,000 rows per sweep, not in one statement', async () => {
    const db = h.services.db;
    await sql`
      INSERT INTO idempotency_keys (key_digest, key_check, request_sha256, response_status, response_content_type,
        response_body_enc, created_at, due_at)
      SELECT gen_random_uuid(), ${BACKLOG}, decode('00', 'hex'), 201, 'application/json', NULL, now() - interval '40 days',
        now() - interval '10 days'
      FROM generate_series(1, 5001) AS n`.execute(db);
    const backlog = async () =>
      Number(
        (
          await sql<{ n: string }>`
            SELECT count(*)::text AS n FROM idempotency_keys WHERE key_check = ${BACKLOG}`.execute(db)
        ).rows[0]?.n,
      );
    const first = await h.advanceClock(1);
    expect(first.processed['idempotency-keys']).toBe(5_000);
    expect(await backlog()).toBe(1);
    await h.advanceClock(1);
    expect(await backlog()).toBe(0);
  });

  it('drops a backlog of answers past their replay window 5,000 per sweep, and keeps the keys', async () => {
    const db = h.services.db;
    const at = h.services.clock.now();
    await sql`
      INSERT INTO idempotency_keys (key_digest, key_check, request_sha256, response_status, response_content_type,
        response_body, created_at, due_at)
      SELECT gen_random_uuid(), ${ANSWERS}, decode('00', 'hex'), 201, 'application/json', decode('007b7d', 'hex'),
        ${at}::timestamptz - interval '26 hours', ${at}::timestamptz - interval '2 hours'
      FROM generate_series(1, 5001) AS n`.execute(db);
    const answered = async () => {
      const { rows } = await sql<{ keys: string; answers: string; due: string }>`
        SELECT count(*)::text AS keys, count(response_body)::text AS answers,
          count(*) FILTER (WHERE due_at = created_at + interval '3 days')::text AS due
        FROM idempotency_keys WHERE key_check = ${ANSWERS}`.execute(db);
      return rows[0];
    };
    const first = await h.advanceClock(1);
    expect(first.processed['idempotency-keys']).toBeGreaterThanOrEqual(5_000);
    // An answer dropped moves its row's due_at to the retention's end (the 3 days configured)
    expect(await answered()).toEqual({ keys: '5001', answers: '1', due: '5000' });
    await h.advanceClock(1);
    expect(await answered()).toEqual({ keys: '5001', answers: '0', due: '5001' });
  });
});
