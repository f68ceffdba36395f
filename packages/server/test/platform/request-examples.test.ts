// Every hand-written request example of the references ("Try it out" sends them as they are) is a
// request the sandbox accepts: each is sent with the caller's own credentials, and with its own
// customer and stored card in place of the example's ids (the first of each kind in a fresh sandbox).
import type { OpenAPIV3 } from 'openapi-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aStore } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments } from '../harness/payments-builders.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(() => h.close());

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** The hand-written examples of a document: [operation, example name, path, method, value]. */
async function examplesOf(api: string) {
  const document = (await (
    await fetch(`${h.baseUrl}/docs/${api}/openapi.json`)
  ).json()) as OpenAPIV3.Document;
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = item?.[method];
      const media = (operation?.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content[
        'application/json'
      ];
      return Object.entries(media?.examples ?? {}).map(([name, example]) => ({
        label: `${operation?.operationId} (${name})`,
        path,
        method,
        value: (example as OpenAPIV3.ExampleObject).value as Record<string, unknown>,
      }));
    }),
  );
}

describe('request examples', () => {
  it('payments: every example is accepted as written, with the caller’s own customer and card', async () => {
    const m = await aMerchant(h);
    const customerId = await aCustomer(h, m);
    const saved = await payments(h, m, 'POST', '/order', anOrder(customerId, { saveCard: '1' }));
    const cardId = saved.body.data.cardId as number;
    expect(cardId).toBeGreaterThan(0);
    const examples = await examplesOf('payments');
    expect(examples.map((e) => e.label)).toEqual(
      expect.arrayContaining(['postOrder (purchase)', 'postOrder (storedCard)', 'postOrder (recurring)']),
    );
    for (const example of examples) {
      const body = { ...example.value };
      if ('customerId' in body) body.customerId = customerId;
      if ('cardId' in body) body.cardId = cardId;
      const answer = await h.request(example.method.toUpperCase(), `/payments${example.path}`, {
        headers: m.auth,
        json: body,
      });
      expect(answer.status, `${example.label}: ${answer.text}`).toBeLessThan(300);
    }
  });

  it('crypto: every example is accepted as written', async () => {
    const store = await aStore(h);
    const examples = await examplesOf('crypto');
    expect(examples.length).toBeGreaterThan(1);
    for (const example of examples) {
      const answer = await h.request(example.method.toUpperCase(), `/crypto/api${example.path}`, {
        headers: store.auth,
        json: example.value,
      });
      expect(answer.status, `${example.label}: ${answer.text}`).toBeLessThan(300);
    }
  });
});
