// Retention (docs/operations.md): the sweeps delete a succeeded webhook's attempts and the sandbox's
// messages once they are older than their configured days, and keep everything younger.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments } from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  h = await Harness.start({
    env: { TESSERA_WEBHOOK_ATTEMPT_RETENTION_DAYS: '10', TESSERA_SANDBOX_MESSAGE_RETENTION_DAYS: '5' },
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
});
