// Every documented operation of the five APIs, fuzzed from its OpenAPI schemas (openapi-fuzzer.ts).
// `npm test` runs a bounded number of cases per operation; `npm run fuzz` many more (FUZZ_RUNS).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anOrder as aCryptoOrder, aStore, pay } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import { aCustomer, aMerchant, anOrder } from '../harness/payments-builders.ts';
import {
  type FuzzRequest,
  HOSTILE_STRINGS,
  nestedJson,
  type Operation,
  operationsOf,
  problemWith,
  requestsFor,
  type Schema,
} from './openapi-fuzzer.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 10);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

let h: Harness;
const credentials: Record<string, Record<string, string>> = {};
const knownIds: Record<string, string[]> = {};
const remember = (name: string, ...values: (string | number | undefined)[]) => {
  knownIds[name] = [...(knownIds[name] ?? []), ...values.filter((v) => v !== undefined).map(String)];
};

beforeAll(async () => {
  h = await Harness.start({ env: { TESSERA_RATE_LIMIT_PER_MINUTE: '100000000' } });
  const admin = { authorization: `Bearer ${h.adminToken}` };
  credentials.admin = admin;
  credentials.sandbox = admin;

  // Issuing: a partner and a cardholder with an account, a card and a transaction.
  const partner = await h.admin<{ id: string; apiKey: string; partnerId: string }>('POST', '/partners', {
    json: { name: 'Fuzzed' },
  });
  const cardholder = await aCardholder(h, partner.body.apiKey, 100_000n);
  const auth = await h.request<{ transactionId: string }>('POST', '/sandbox/issuing/authorizations', {
    headers: admin,
    json: { cardId: cardholder.cardId, amount: '1.00', currency: 'EUR', merchant: 'Fuzz shop' },
  });
  credentials.issuing = {
    'x-partner-api-key': partner.body.apiKey,
    'x-partner-id': partner.body.partnerId,
    ...cardholder.auth,
  };
  remember('cardId', cardholder.cardId);
  remember('accountId', cardholder.accountId);
  remember('customerId', cardholder.customerId);
  remember('transactionId', auth.body.transactionId);
  remember('id', partner.body.id);

  // Payments: a merchant with a customer, an order (a saved card), a payment link.
  const merchant = await aMerchant(h);
  credentials.payments = merchant.auth;
  const customerId = await aCustomer(h, merchant);
  const order = await h.request<{ data: { orderId: number; transactionId: number; cardId: number } }>(
    'POST',
    '/payments/order',
    { headers: merchant.auth, form: anOrder(customerId, { saveCard: 'yes' }) },
  );
  const link = await h.request<{ data: { hash: string } }>('POST', '/payments/payment-link', {
    headers: merchant.auth,
    form: { amount: '5.00', currency: 'EUR', description: 'Fuzz link' },
  });
  remember('id', customerId, order.body.data.orderId, order.body.data.transactionId, order.body.data.cardId);
  remember('customerId', customerId);
  remember('orderId', order.body.data.orderId);
  remember('hash', link.body.data?.hash);

  // Crypto: a store with a paid order.
  const store = await aStore(h);
  credentials.crypto = store.auth;
  const cryptoOrder = await aCryptoOrder(h, store);
  await pay(h, cryptoOrder.id);
  remember('id', cryptoOrder.id);
  remember('orderId', cryptoOrder.id);
  remember(
    'eventId',
    ...(await h.services.db.selectFrom('events').select('id').limit(3).execute()).map((e) => e.id),
  );
}, 120_000);

afterAll(async () => {
  await h.close();
});

/** The API's credentials nine times out of ten; else none, wrong ones, or hostile ones. */
function credentialsFor(api: string): fc.Arbitrary<Record<string, string>> {
  const good = credentials[api] ?? {};
  return fc.oneof(
    { arbitrary: fc.constant(good), weight: 9 },
    {
      arbitrary: fc.constantFrom<Record<string, string>>(
        {},
        { authorization: 'Bearer nope' },
        { authorization: 'Basic Zm9vOmJhcg==' },
        { authorization: `bearer ${'x'.repeat(5000)}` },
        { 'x-partner-api-key': "'; DROP TABLE partners; --", 'x-partner-id': 'not-a-uuid' },
        { 'x-partner-id': '00000000-0000-0000-0000-000000000000' },
      ),
      weight: 1,
    },
  );
}

const APIS: [string, string][] = [
  ['issuing', '/issuing/v1'],
  ['payments', '/payments'],
  ['crypto', '/crypto/api'],
  ['admin', '/admin'],
  ['sandbox', '/sandbox'],
];

/** HTTP headers carry visible ASCII; a hostile header value is sent as the bytes fetch allows. */
const headerSafe = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.replace(/[^\x20-\x7e]/g, '?')]));

async function send(request: FuzzRequest) {
  const response = await fetch(`${h.baseUrl}${request.url}`, {
    method: request.method,
    headers: headerSafe(request.headers),
    ...(request.body !== undefined ? { body: request.body } : {}),
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    requestId: response.headers.get('x-request-id'),
    text: await response.text(),
  };
}

// First, while every credential is fresh (the fuzzing below logs out and revokes).
describe('JSON nested deeper than the limit', () => {
  it.each(APIS)(
    '%s: a body nested 10,000 levels deep is a 400 in the envelope naming the limit, on every JSON route',
    async (api, base) => {
      const document = (await h.request<Schema>('GET', `/docs/${api}/openapi.json`)).body;
      const withBody = operationsOf(api, base, document).filter((op) => op.body !== undefined);
      expect(withBody.length).toBeGreaterThan(api === 'sandbox' ? 3 : 5);
      const wrong: string[] = [];
      for (const op of withBody) {
        const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) =>
          encodeURIComponent(knownIds[name]?.[0] ?? knownIds.id?.[0] ?? 'x'),
        );
        for (const open of ['[', '{"a":'] as const) {
          const answer = await send({
            method: op.method,
            url: `${op.base}${path}`,
            headers: { ...credentials[api], 'content-type': 'application/json' },
            body: nestedJson(10_000, open),
          });
          const problem = problemWith(api, answer);
          if (problem || answer.status !== 400 || !answer.text.includes('deeper than 32 levels'))
            wrong.push(`${op.method} ${op.path} ${open}: ${answer.status} ${answer.text.slice(0, 120)}`);
        }
      }
      expect(wrong).toEqual([]);
    },
  );
});

describe(`fuzzing every documented operation (${RUNS} cases each)`, () => {
  it.each(APIS)(
    '%s',
    async (api, base) => {
      const document = (await h.request<Schema>('GET', `/docs/${api}/openapi.json`)).body;
      const operations: Operation[] = operationsOf(api, base, document);
      expect(operations.length).toBeGreaterThan(5);
      const problems = new Map<string, string>();
      let sent = 0;
      for (const op of operations) {
        await fc.assert(
          fc.asyncProperty(requestsFor(op, credentialsFor(api), knownIds), async (request) => {
            sent++;
            const problem = problemWith(api, await send(request));
            if (problem) {
              const where = `${op.method} ${op.path}: ${problem.replace(/req_\w+/g, 'req_…')}`;
              if (!problems.has(where))
                problems.set(
                  where,
                  `${request.method} ${request.url.slice(0, 200)} ${request.body?.slice(0, 300) ?? ''}`,
                );
            }
          }),
          { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}) },
        );
      }
      process.stdout.write(
        `fuzz ${api}: ${operations.length} operations, ${sent} requests, ${problems.size} problems\n`,
      );
      expect([...problems].map(([where, example]) => `${where}\n    e.g. ${example}`)).toEqual([]);
    },
    600_000,
  );

  it('uses the hostile strings it claims to', () => {
    expect(HOSTILE_STRINGS).toContain('\u0000');
  });
});
