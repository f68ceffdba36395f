// A sandbox whose webhook endpoint is down (docs/webhooks.md, Logs): its failed attempts are summarised
// per endpoint in the log — the first logged, the rest of the minute counted and told with the next
// line — while each attempt is still recorded in the delivery log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anOrder, aStore, cancelOnPayPage } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start({ captureLogs: true });
});
afterAll(() => h.close());

const failureLines = () =>
  h.logs
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.includes('webhook attempt failed'))
    .map((line) => JSON.parse(line) as { msg: string; endpoint: string; alsoFailed?: number });

describe('webhook failures in the log', () => {
  it('logs one line per endpoint a minute, telling how many attempts it did not log', async () => {
    // Port 9 (discard) refuses the connection on this machine.
    const store = await aStore(h, { webhookUrl: 'http://127.0.0.1:9/down?token=hidden' });
    for (let i = 0; i < 5; i++) {
      const order = await anOrder(h, store);
      await cancelOnPayPage(h, order.id, {}).catch(() => undefined);
    }
    const attempts = async () =>
      Number(
        (
          await h.services.db
            .selectFrom('webhook_attempts as a')
            .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('d.url', 'like', 'http://127.0.0.1:9/%')
            .executeTakeFirstOrThrow()
        ).n,
      );
    await expect.poll(attempts).toBe(5);
    expect(failureLines()).toEqual([expect.objectContaining({ endpoint: 'http://127.0.0.1:9/down' })]);
    // A minute later the retries are due: one more line, with the four it did not log.
    await h.advanceClock(61);
    await expect.poll(attempts).toBe(10);
    const lines = failureLines();
    expect(lines).toHaveLength(2);
    expect(lines[1]?.alsoFailed).toBe(4);
    expect(JSON.stringify(lines)).not.toContain('hidden');
  });
});
