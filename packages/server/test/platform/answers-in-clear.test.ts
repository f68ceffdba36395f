// Keyed answers stored in clear (docs/architecture.md, Idempotency): a route marked `answerInClear`
// keeps its stored answer unencrypted, which is allowed only when the answer holds nothing its rows keep
// encrypted or hashed. For each marked route (the set the app registered, so a new mark without a case
// here fails), a keyed request is made and its stored answer checked: in clear, the answer sent, every
// value in it one its row keeps in clear (or a URL made of such values), none of the row's encrypted or
// hashed columns; a replay answers it. Every other keyed route's answer is stored encrypted.
import { inflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSWER_DICTIONARY_V1 } from '../../src/platform/idempotency/answer-dictionary.ts';
import { keyDigest } from '../../src/platform/idempotency/idempotency-store.ts';
import { aStore, orderDocument } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder } from '../harness/payments-builders.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(() => h.close());

interface Case {
  /** Makes the keyed request; answers its text and the row it wrote */
  run: (key: string) => Promise<{
    text: string;
    replay: () => Promise<string>;
    row: Record<string, unknown>;
    /** The caller's scope, which with the key finds the key's row */
    scope: string;
  }>;
}

const CASES: Record<string, Case> = {
  'POST /crypto/api/stores/orders': {
    run: async (key) => {
      const store = await aStore(h);
      const send = () =>
        h.request<{ data: { id: string } }>('POST', '/crypto/api/stores/orders', {
          headers: { ...store.auth, 'idempotency-key': key },
          json: orderDocument({ reference: `clear-${key}` }),
        });
      const made = await send();
      expect(made.status).toBe(201);
      const row = await h.services.db
        .selectFrom('crypto_orders')
        .selectAll()
        .where('id', '=', made.body.data.id)
        .executeTakeFirstOrThrow();
      return {
        text: made.text,
        replay: async () => (await send()).text,
        row,
        scope: `crypto:store:${store.id}`,
      };
    },
  },
};

const storedAnswer = async (scope: string, key: string) =>
  (
    await h.services.db
      .selectFrom('idempotency_keys')
      .select('response_body')
      .where('key_digest', '=', keyDigest({ scope, key }).digest)
      .executeTakeFirstOrThrow()
  ).response_body as Buffer;

function leaves(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (typeof value === 'object') return Object.values(value).flatMap(leaves);
  return [String(value)];
}

describe('answers stored in clear', () => {
  it('are exactly the routes this test has a case for', () => {
    expect([...h.services.idempotency.answersInClear].sort()).toEqual(Object.keys(CASES).sort());
  });

  it.each(Object.keys(CASES))('%s: holds only what its row keeps in clear', async (route) => {
    const key = `clear-${Math.random().toString(36).slice(2)}`;
    const { text, replay, row, scope } = await (CASES[route] as Case).run(key);
    const stored = await storedAnswer(scope, key);
    // Its first byte says in clear, deflated with the answers' dictionary (3), then the answer as sent
    expect(stored[0]).toBe(3);
    expect(inflateRawSync(stored.subarray(1), { dictionary: ANSWER_DICTIONARY_V1 }).toString('utf8')).toBe(
      text,
    );
    expect(await replay()).toBe(text);
    const secretColumns = Object.entries(row).filter(([name]) =>
      /_enc$|_hash$|fingerprint|secret/.test(name),
    );
    for (const [name, value] of secretColumns) expect(text, name).not.toContain(String(value));
    const clear = new Set(
      Object.entries(row)
        .filter(([name]) => !secretColumns.some(([secret]) => secret === name))
        .flatMap(([, value]) => leaves(value)),
    );
    const base = h.config.publicUrl;
    for (const leaf of leaves(JSON.parse(text))) {
      const fromRow = clear.has(leaf);
      // A URL of the platform's made of row values (the payment page: /crypto/pay/{id}?uuid={id}).
      const url = leaf.startsWith(base) ? new URL(leaf) : undefined;
      const urlOfRow =
        url !== undefined &&
        [...url.pathname.split('/').filter(Boolean).slice(-1), ...url.searchParams.values()].every((part) =>
          clear.has(part),
        );
      const jsonApiType = leaf === 'orders_redirect';
      expect(fromRow || urlOfRow || jsonApiType, `${leaf} is not a value its row keeps in clear`).toBe(true);
    }
  });

  it('keeps every other keyed answer encrypted', async () => {
    const m = await aMerchant(h);
    const key = `sealed-${Math.random().toString(36).slice(2)}`;
    const made = await h.request('POST', '/payments/order', {
      headers: { ...m.auth, 'idempotency-key': key },
      form: anOrder(await aCustomer(h, m)),
    });
    expect(made.status).toBe(201);
    const stored = await storedAnswer(`payments:merchant:${m.id}`, key);
    // Sealed, deflated first where that is shorter (4, else 1), and not a byte of the answer readable
    expect([1, 4]).toContain(stored[0]);
    expect(stored.includes(Buffer.from(made.text.slice(0, 16)))).toBe(false);
  });
});
