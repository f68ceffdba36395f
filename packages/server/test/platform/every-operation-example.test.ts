// "Try it out" works on every operation: each operation of the five references is sent once per request
// example its document carries (the hand-written variants, else the example made from its schema), as
// the reference would send it, with the caller's real credentials and real ids of a sandbox in place of
// the example's ids (and, where a flow needs one, the real code from the sandbox's inbox or a real
// wallet's signature). Each must be accepted: 2xx. The harness then holds every answer to its document
// (Harness.close), so an answer the reference does not describe fails too.
import type { OpenAPIV3 } from 'openapi-types';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_PROFILE } from '../../src/admin/http/business-profile-routes.ts';
import { anOrder as aCryptoOrder, aStore, orderOf, pay } from '../harness/crypto-builders.ts';
import { APIS, documentsOf } from '../harness/document-check.ts';
import { Harness } from '../harness/harness.ts';
import { aCardholder, aCustomer as anIssuingCustomer } from '../harness/issuing-builders.ts';
import { aCustomer, aMerchant, anOrder, payments, type TestMerchant } from '../harness/payments-builders.ts';
import { latestCode } from '../harness/sandbox-inbox.ts';

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

/** Runs last: what ends the objects the other examples use (a deletion, a closing, a revocation). */
const ENDS = /^delete |\/(close|revoke|logout|reissue\/\{reason\}|rotate)$/;

let h: Harness;
let documents: Map<string, OpenAPIV3.Document>;
beforeAll(async () => {
  h = await Harness.start();
  documents = await documentsOf(h.baseUrl);
});
afterAll(() => h.close());

type Ids = Record<string, string | number | boolean>;

interface Sent {
  label: string;
  status: number;
  text: string;
}

/** What an operation is sent with: the caller's headers by security scheme, and real ids by name. */
interface Context {
  credentials: Record<string, Record<string, string>>;
  ids: Ids;
}

/** What a hook changes for one operation */
interface Hook {
  credentials?: Context['credentials'];
  ids?: Record<string, string | number | boolean | undefined>;
}

/**
 * Sends every operation of a document, each with each of its request examples, ids substituted. `before`
 * may change the context for one operation (a code read from the sandbox's inbox, another caller).
 */
async function sendEvery(
  api: (typeof APIS)[number]['name'],
  context: Context,
  before: (template: string, method: string) => Promise<Hook | undefined> = async () => undefined,
): Promise<Sent[]> {
  const document = documents.get(api) as OpenAPIV3.Document;
  const prefix = APIS.find((a) => a.name === api)?.prefix as string;
  const operations = Object.entries(document.paths).flatMap(([template, item]) =>
    METHODS.flatMap((method) => {
      const operation = item?.[method];
      return operation ? [{ template, method, operation, key: `${method} ${template}` }] : [];
    }),
  );
  operations.sort((a, b) => Number(ENDS.test(a.key)) - Number(ENDS.test(b.key)));
  const sent: Sent[] = [];
  for (const { template, method, operation } of operations) {
    const local = (await before(template, method)) ?? {};
    const known = { ...context.ids, ...local.ids } as Ids;
    const credentials = { ...context.credentials, ...local.credentials };
    const parameters = (operation.parameters ?? []) as OpenAPIV3.ParameterObject[];
    const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const parameter = parameters.find((p) => p.in === 'path' && p.name === name);
      return encodeURIComponent(String(known[name] ?? exampleOf(parameter) ?? name));
    });
    const query = new URLSearchParams();
    for (const parameter of parameters.filter((p) => p.in === 'query' && p.required)) {
      query.set(parameter.name, String(known[parameter.name] ?? exampleOf(parameter)));
    }
    const headers: Record<string, string> = {};
    for (const requirement of operation.security ?? document.security ?? []) {
      for (const scheme of Object.keys(requirement)) Object.assign(headers, credentials[scheme]);
    }
    for (const body of bodiesOf(operation)) {
      const label = `${method.toUpperCase()} ${template}${body.name ? ` (${body.name})` : ''}`;
      const url = `${prefix}${path}${query.size > 0 ? `?${query}` : ''}`;
      const payload = body.media ? await encoded(body.media, substitute(body.value, known)) : undefined;
      const answer = await h.request(method.toUpperCase(), url, {
        headers: { ...headers, ...(payload ? { 'content-type': payload.contentType } : {}) },
        ...(payload ? { body: payload.body } : {}),
      });
      sent.push({ label, status: answer.status, text: answer.text });
      if (answer.status < 300) harvest(answer.body, context.ids);
    }
  }
  return sent;
}

/** A parameter's example, as the reference fills it in. */
function exampleOf(parameter: OpenAPIV3.ParameterObject | undefined): unknown {
  const schema = parameter?.schema as OpenAPIV3.SchemaObject | undefined;
  return parameter?.example ?? schema?.example ?? schema?.enum?.[0];
}

/** The request examples of an operation, as the reference sends them: one per named variant. */
function bodiesOf(
  operation: OpenAPIV3.OperationObject,
): { name?: string; media?: string; value?: unknown }[] {
  const content = (operation.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content;
  const media = content && Object.keys(content)[0];
  if (!content || !media) return [{}];
  const { examples, example } = content[media] as OpenAPIV3.MediaTypeObject;
  if (examples) {
    return Object.entries(examples).map(([name, value]) => ({
      name,
      media,
      value: (value as OpenAPIV3.ExampleObject).value,
    }));
  }
  return [{ media, value: example }];
}

/** The example with every field named like a known id given the real one (numbers stay numbers). */
function substitute(value: unknown, ids: Ids): unknown {
  if (Array.isArray(value)) return value.map((item) => substitute(item, ids));
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [
      key,
      key in ids && (typeof child !== 'object' || child === null)
        ? typeof child === 'number'
          ? Number(ids[key])
          : typeof ids[key] === 'boolean'
            ? ids[key]
            : String(ids[key])
        : substitute(child, ids),
    ]),
  );
}

/** The body as the reference sends it; a file field of a multipart body carries a small real PDF. */
async function encoded(media: string, value: unknown): Promise<{ body: string; contentType: string }> {
  // A file of its own format (a sanctions list's XML) is sent as it is
  if (typeof value === 'string' && media.endsWith('xml')) return { body: value, contentType: media };
  if (media !== 'multipart/form-data') return { body: JSON.stringify(value), contentType: media };
  const form = new FormData();
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    for (const item of Array.isArray(field) ? field : [field]) {
      if (key === 'files') form.append(key, new Blob([PDF], { type: 'application/pdf' }), 'evidence.pdf');
      else form.append(key, String(item));
    }
  }
  const request = new Request('http://multipart.invalid', { method: 'POST', body: form });
  return { body: await request.text(), contentType: request.headers.get('content-type') as string };
}

const PDF = '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n';

/** Ids a successful answer names (`quoteId`, `topupId`…) that the later examples need. */
function harvest(body: unknown, ids: Ids): void {
  if (Array.isArray(body)) {
    harvest(body[0], ids);
    return;
  }
  if (!body || typeof body !== 'object') return;
  for (const [key, value] of Object.entries(body)) {
    if (/Id$/.test(key) && (typeof value === 'string' || typeof value === 'number') && !(key in ids)) {
      ids[key] = value;
    } else if (typeof value === 'object') harvest(value, ids);
  }
}

function refusedOnes(sent: Sent[]): string[] {
  return sent
    .filter(({ status }) => status >= 300)
    .map(({ label, status, text }) => `${label} → ${status}: ${text.slice(0, 240)}`);
}

const admin = () => ({ authorization: `Bearer ${h.adminToken}` });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('every operation’s request example, sent as the reference sends it', () => {
  it('issuing', async () => {
    const partner = await h.admin<{ partnerId: string; apiKey: string }>('POST', '/partners', {
      json: { name: 'Examples', webhookUrl: 'http://127.0.0.1:9/hooks' },
    });
    const partnerKey = { 'x-partner-api-key': partner.body.apiKey };
    const holder = await aCardholder(h, partner.body.apiKey, 100_000n);
    const sandbox = (path: string, json: unknown) =>
      h.request<Record<string, string>>('POST', `/sandbox${path}`, { headers: admin(), json });
    const purchase = { cardId: holder.cardId, amount: '20.00', currency: 'EUR', merchant: 'Shop' };
    const cleared = await sandbox('/issuing/authorizations', purchase);
    await sandbox(`/issuing/transactions/${cleared.body.transactionId}/clear`, {
      amount: '20.00',
      final: true,
    });
    await sandbox('/issuing/authorizations', { ...purchase, threeDS: true });
    const events = await h.request<{ data: { eventId: string }[] }>('GET', '/issuing/v1/events', {
      headers: partnerKey,
    });
    // KYC is taken by a customer who has not passed it, and a new account by one who has none yet.
    const applicant = await anIssuingCustomer(h, partner.body.apiKey, { kyc: 'none' });
    const newcomer = await anIssuingCustomer(h, partner.body.apiKey);
    const email = 'ada@example.com';
    const password = 'Sandbox-Example-1';
    const login = async () =>
      (
        await h.request<Record<string, string>>('POST', '/issuing/v1/auth/login/email', {
          headers: { 'x-partner-id': partner.body.partnerId },
          json: { email, password },
        })
      ).body;
    // The wallet flow is signed by a real wallet: the example's address is this one's.
    const wallet = privateKeyToAccount(generatePrivateKey());
    const signed = async (flow: 'register' | 'login') => {
      const challenge = await h.request<{ message: string }>(
        'POST',
        `/issuing/v1/auth/${flow}/wallet/challenge`,
        {
          headers: { 'x-partner-id': partner.body.partnerId },
          json: { walletAddress: wallet.address.toLowerCase() },
        },
      );
      return {
        signature: await wallet.signMessage({ message: challenge.body.message }),
        email: 'wallet@example.com',
      };
    };
    let tokens: Record<string, string> = {};
    let twoFactorSession = '';
    const sent = await sendEvery(
      'issuing',
      {
        credentials: {
          partnerApiKey: partnerKey,
          partnerId: { 'x-partner-id': partner.body.partnerId },
          customerToken: holder.auth,
        },
        ids: {
          customerId: holder.customerId,
          accountId: holder.accountId,
          cardId: holder.cardId,
          transactionId: cleared.body.transactionId as string,
          eventId: events.body.data[0]?.eventId as string,
          walletAddress: wallet.address.toLowerCase(),
        },
      },
      async (template, method) => {
        if (template.startsWith('/kyc')) return { credentials: { customerToken: applicant.auth } };
        // A physical card is activated once delivered (a virtual one is active from the start).
        if (template === '/cards/{cardId}/activate')
          return { ids: { cardId: await aDeliveredCard(holder.auth) } };
        if (template === '/accounts' && method === 'post')
          return { credentials: { customerToken: newcomer.auth } };
        if (template === '/accounts/{accountId}/close') {
          const own = await h.request<{ data: { accountId: string }[] }>('GET', '/issuing/v1/accounts', {
            headers: newcomer.auth,
          });
          return {
            ids: { accountId: own.body.data[0]?.accountId as string },
            credentials: { customerToken: newcomer.auth },
          };
        }
        // The example's email and wallet are the email and wallet flows': a partner's customer takes others.
        if (template === '/auth/register/partner')
          return {
            ids: { email: 'grace@example.com', walletAddress: '0x52908400098527886e0f7030069857d2e4169ee7' },
          };
        if (template === '/auth/register/wallet/verify') return { ids: await signed('register') };
        if (template === '/auth/login/wallet') return { ids: await signed('login') };
        if (template === '/auth/register/email/verify') return { ids: { code: await latestCode(h, email) } };
        if (template === '/auth/refresh') {
          tokens = await login();
          return { credentials: { customerToken: bearer(tokens.refreshToken as string) } };
        }
        if (template === '/auth/2fa/send') {
          // A login of a customer with two-factor on answers a session token, not tokens.
          tokens = await login();
          await h.request('PUT', '/issuing/v1/auth/2fa', {
            headers: bearer(tokens.accessToken as string),
            json: { enabled: true },
          });
          twoFactorSession = (await login()).sessionToken as string;
          return { credentials: { customerToken: bearer(twoFactorSession) } };
        }
        if (template === '/auth/2fa/verify')
          return {
            ids: { code: await latestCode(h, email) },
            credentials: { customerToken: bearer(twoFactorSession) },
          };
        if (template === '/auth/2fa' || template === '/auth/logout')
          return {
            credentials: {
              customerToken: bearer(
                tokens[template === '/auth/2fa' ? 'accessToken' : 'refreshToken'] as string,
              ),
            },
          };
        return undefined;
      },
    );
    expect(refusedOnes(sent)).toEqual([]);
  });

  it('payments', async () => {
    const m = await aMerchant(h, { ipnUrl: 'http://127.0.0.1:9/ipn' });
    const siteId = m.sites[0]?.id as number;
    const customerId = await aCustomer(h, m);
    const order = async (fields: Record<string, string>) =>
      (await payments(h, m, 'POST', '/order', anOrder(customerId, fields))).body.data as Record<
        string,
        number
      >;
    const stored = await order({ saveCard: '1', amount: '50.00' });
    const authorized = await order({ cardTransactionMode: 'auth', amount: '50.00' });
    const recurring = await order({
      orderType: 'recurring',
      intervalType: 'month',
      intervalValue: '1',
      amount: '7.99',
    });
    const managed = await order({ orderType: 'managed', amount: '7.99' });
    const chargeback = async () => {
      const paid = await order({ amount: '30.00' });
      const raised = await h.request<{ disputeId: number }>(
        'POST',
        `/sandbox/payments/transactions/${paid.transactionId}/chargeback`,
        { headers: admin(), json: { reasonCode: '13.1' } },
      );
      return raised.body.disputeId;
    };
    const [accepted, answered] = [await chargeback(), await chargeback()];
    // Funds settle after the site's delay, so a payout has something to pay.
    await h.advanceClock(5 * 24 * 3600);
    const link = await payments(h, m, 'POST', '/payment-link', {
      siteId: String(siteId),
      amount: '12.00',
      currency: 'EUR',
    });
    await payments(h, m, 'PUT', `/site/${siteId}/bank-account`, {
      iban: 'RO49AAAA1B31007593840000',
      bic: 'AAAARO22',
      holderName: 'Examples SRL',
    });
    const events = await payments(h, m, 'GET', '/events');
    const doomed = await aCustomer(h, m);
    const idOf: [RegExp, number | string][] = [
      [/^\/customer\//, customerId],
      [/^\/order\//, stored.orderId as number],
      [/^\/order-rebill\//, managed.orderId as number],
      [/^\/transaction\//, authorized.transactionId as number],
      [/^\/dispute\//, accepted as number],
      [/^\/card\//, stored.cardId as number],
    ];
    const sent = await sendEvery(
      'payments',
      {
        credentials: { apiPrivateKey: m.auth },
        ids: {
          customerId,
          siteId,
          cardId: stored.cardId as number,
          hash: link.body.data.hash as string,
          eventId: events.body.data[0]?.eventId as string,
        },
      },
      async (template, method) => {
        if (template === '/dispute/{id}/evidence') return { ids: { id: answered as number } };
        if (template === '/customer/{id}' && method === 'delete') return { ids: { id: doomed } };
        if (template === '/order/{id}' && method === 'delete')
          return { ids: { id: recurring.orderId as number } };
        if (template.startsWith('/payout/')) {
          const payouts = await payments(h, m, 'GET', '/payout');
          return { ids: { id: payouts.body.data[0]?.id as number } };
        }
        const byPath = idOf.find(([pattern]) => pattern.test(template));
        return byPath ? { ids: { id: byPath[1] } } : undefined;
      },
    );
    expect(refusedOnes(sent)).toEqual([]);
  });

  it('crypto', async () => {
    const store = await aStore(h, { refundsEnabled: true, webhookUrl: 'http://127.0.0.1:9/hooks' });
    const paidOrder = async () => {
      const order = await aCryptoOrder(h, store, { total: '40.00' });
      await pay(h, order.id);
      return order.id;
    };
    // One order with a refund already (to be read), one for each way of proposing a refund.
    const [paid, proposed, other] = [await paidOrder(), await paidOrder(), await paidOrder()];
    // Confirmed, then settled after the store's delay: refunds and a payout have funds.
    await h.advanceClock(150);
    await h.advanceClock(5 * 24 * 3600);
    const paymentOf = async (id: string) => (await orderOf(h, store, id)).payment_uuid as string;
    const call = <T>(method: string, path: string, attributes?: Record<string, unknown>, type?: string) =>
      h.request<T>(method, `/crypto/api/stores${path}`, {
        headers: store.auth,
        ...(attributes ? { json: { data: { type, attributes } } } : {}),
      });
    await call(
      'POST',
      `/refund/${await paymentOf(proposed)}`,
      { amount: '5.00', reason: 'Returned' },
      'refunds',
    );
    await call(
      'PUT',
      '/bank_account',
      { iban: 'RO49AAAA1B31007593840000', bic: 'AAAARO22', holder_name: 'Examples SRL' },
      'bank_accounts',
    );
    const events = await call<{ data: { id: string }[] }>('GET', '/events');
    const sent = await sendEvery(
      'crypto',
      {
        credentials: { storeApiKey: store.auth },
        ids: {
          client_id: store.clientId,
          client_secret: store.clientSecret,
          // The caller keeps the key it is calling with.
          revoke_existing: false,
          eventId: events.body.data[0]?.id as string,
        },
      },
      async (template, method) => {
        if (template === '/stores/orders/{id}') return { ids: { id: paid } };
        if (template.startsWith('/stores/refund')) {
          const order = method === 'get' ? proposed : template.startsWith('/stores/refund/') ? paid : other;
          return { ids: { payment_id: await paymentOf(order) } };
        }
        if (template === '/stores/exchange_rates/{id}') {
          const quote = await call<{ data: { id: string } }>(
            'POST',
            '/exchange_rates',
            { type: 'crypto', from: 'USDC', to: 'EUR' },
            'exchange_rates',
          );
          return { ids: { id: quote.body.data.id } };
        }
        if (template.startsWith('/stores/payouts/')) {
          const payouts = await call<{ data: { id: string }[] }>('GET', '/payouts');
          return { ids: { id: payouts.body.data[0]?.id as string } };
        }
        return undefined;
      },
    );
    expect(refusedOnes(sent)).toEqual([]);
  });

  it('admin', async () => {
    const partner = await h.admin<{ id: string }>('POST', '/partners', { json: { name: 'Admin examples' } });
    const m = await aMerchant(h, { ipnUrl: 'http://127.0.0.1:9/ipn' });
    const site = m.sites[0] as TestMerchant['sites'][number];
    const store = await aStore(h);
    await pay(h, (await aCryptoOrder(h, store, { total: '40.00' })).id);
    await h.advanceClock(150);
    // The payout's days settle the store's funds too; its bank account comes after, so no daily run takes them.
    const payoutId = await aPayout(m);
    await h.admin('PUT', `/stores/${store.id}/bank-account`, {
      json: { iban: 'RO49AAAA1B31007593840000', bic: 'AAAARO22', holderName: 'Examples SRL' },
    });
    const holder = await aCardholder(
      h,
      (await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Cards' } })).body.apiKey,
    );
    // A compliance case: a store's payout account held by a person a UN list names
    await h.admin('POST', '/compliance/sanctions/imports?source=un', {
      headers: { 'content-type': 'application/xml' },
      body: `<CONSOLIDATED_LIST dateGenerated="2026-11-01T00:00:00Z"><INDIVIDUALS><INDIVIDUAL><DATAID>6900099</DATAID>
        <FIRST_NAME>IVANA</FIRST_NAME><SECOND_NAME>EXAMPLEOVA</SECOND_NAME><UN_LIST_TYPE>DPRK</UN_LIST_TYPE>
        <REFERENCE_NUMBER>KPi.099</REFERENCE_NUMBER><LISTED_ON>2026-01-15</LISTED_ON></INDIVIDUAL></INDIVIDUALS>
        <ENTITIES/></CONSOLIDATED_LIST>`,
    });
    const listedStore = await aStore(h);
    await h.admin('PUT', `/stores/${listedStore.id}/bank-account`, {
      json: { iban: 'RO49AAAA1B31007593840000', holderName: 'Ivana Exampleova' },
    });
    const cases = await h.admin<{ data: { id: string }[] }>('GET', '/compliance/cases');
    // Business profiles to read, submit and decide (the PUT's own example is sent too)
    for (const path of [`/merchants/${m.id}/business-profile`, `/stores/${store.id}/business-profile`]) {
      expect((await h.admin('PUT', path, { json: EXAMPLE_PROFILE })).status).toBe(200);
    }
    // A document on each profile, to read back
    const documentOf = async (path: string) => {
      const form = new FormData();
      form.append('kind', 'other');
      form.append('file', new Blob([Buffer.from('%PDF-1.4\n%%EOF\n')]), 'example.pdf');
      const added = await fetch(`${h.baseUrl}/admin${path}/documents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.adminToken}` },
        body: form,
      });
      return ((await added.json()) as { data: { id: string }[] }).data[0]?.id as string;
    };
    const documents = {
      merchants: await documentOf(`/merchants/${m.id}/business-profile`),
      stores: await documentOf(`/stores/${store.id}/business-profile`),
    };
    const events = await payments(h, m, 'GET', '/events');
    const consoleUser = async () => {
      const users = await h.admin<{ data: { id: string; email: string }[] }>('GET', '/console-users');
      return users.body.data.find((u) => u.email === 'ada@example.com')?.id as string;
    };
    // A rule and two lists: one whose items are added and removed, one that is deleted.
    const riskRule = await h.admin<{ id: string }>('POST', '/risk/rules', {
      json: {
        name: 'examples',
        scope: { kind: 'platform' },
        decisionPoint: 'payments.charge',
        expression: 'false',
        action: 'block',
      },
    });
    const riskList = (name: string) =>
      h.admin<{ id: string }>('POST', '/risk/lists', {
        json: { name, kind: 'ip', scope: { kind: 'platform' } },
      });
    const itemsList = await riskList('examples_items');
    const deletedList = await riskList('examples_deleted');
    // Two charges held for review: one approved, one refused.
    await h.admin('POST', '/risk/rules', {
      json: {
        name: 'examples hold',
        scope: { kind: 'merchant', id: String(m.id) },
        decisionPoint: 'payments.charge',
        expression: 'amount == 4242',
        action: 'review',
      },
    });
    const customer = await aCustomer(h, m);
    for (let i = 0; i < 2; i++)
      await payments(h, m, 'POST', '/order', anOrder(customer, { amount: '42.42' }));
    const held = await h.admin<{ data: { id: string }[] }>('GET', `/risk/reviews?tenant=merchant:${m.id}`);
    const idOf: [RegExp, string | number][] = [
      [/^\/risk\/reviews\/\{id\}\/approve$/, held.body.data[0]?.id as string],
      [/^\/risk\/reviews\/\{id\}\/refuse$/, held.body.data[1]?.id as string],
      [/^\/risk\/rules\/backtest$/, m.id],
      [/^\/risk\/rules\//, riskRule.body.id],
      [/^\/risk\/lists\/\{id\}\/items/, itemsList.body.id],
      [/^\/risk\/lists\//, deletedList.body.id],
      [/^\/partners\//, partner.body.id],
      [/^\/merchants\//, m.id],
      [/^\/stores\//, store.id],
      [/^\/payouts\//, payoutId],
      [/^\/issuing\/accounts\//, holder.accountId],
      [/^\/events\//, events.body.data[0]?.eventId as string],
      [/^\/compliance\/cases\//, cases.body.data[0]?.id as string],
      // A member of the merchant above.
      [/^\/console-users$/, String(m.id)],
    ];
    const sent = await sendEvery(
      'admin',
      {
        credentials: { adminToken: admin() },
        ids: { siteId: site.id, apiKeyId: m.apiKeyId, cardId: holder.cardId, tenant: `site:${site.id}` },
      },
      async (template) => {
        if (template.startsWith('/console-users/{id}')) return { ids: { id: await consoleUser() } };
        if (template.endsWith('/documents/{documentId}')) {
          const merchant = template.startsWith('/merchants/');
          return {
            ids: {
              id: merchant ? m.id : store.id,
              documentId: merchant ? documents.merchants : documents.stores,
            },
          };
        }
        const byPath = idOf.find(([pattern]) => pattern.test(template));
        return byPath ? { ids: { id: byPath[1] } } : undefined;
      },
    );
    expect(refusedOnes(sent)).toEqual([]);
  });

  it('sandbox', async () => {
    const rail = <T = Record<string, string>>(path: string, json?: unknown) =>
      h.request<T>('POST', `/sandbox${path}`, { headers: admin(), ...(json ? { json } : {}) });
    // What moves the clock first (payouts, confirmations), then what a day would change (a topup's
    // deadline, a dispute's, a transfer's confirmations).
    const [returned, rejected, booked] = [
      await aPayout(await aMerchant(h)),
      await aPayout(await aMerchant(h)),
      await aPayout(await aMerchant(h)),
    ];
    await h.admin('POST', '/payout-runs');
    const store = await aStore(h, { refundsEnabled: true });
    const cryptoPaid = async () => {
      const order = await aCryptoOrder(h, store, { total: '40.00' });
      return { id: order.id, transfer: (await pay(h, order.id)).body.transactionHash };
    };
    const [accepted, declined] = [await cryptoPaid(), await cryptoPaid()];
    await h.advanceClock(150);
    const proposal = async (orderId: string) => {
      const paymentId = (await orderOf(h, store, orderId)).payment_uuid as string;
      await h.request('POST', `/crypto/api/stores/refund/${paymentId}`, {
        headers: store.auth,
        json: { data: { type: 'refunds', attributes: { amount: '5.00', reason: 'Returned' } } },
      });
      return paymentId;
    };
    const [acceptedRefund, declinedRefund] = [await proposal(accepted.id), await proposal(declined.id)];
    const [unpaid, reorged] = [(await aCryptoOrder(h, store, { total: '40.00' })).id, await cryptoPaid()];

    const m = await aMerchant(h);
    const siteId = m.sites[0]?.id as number;
    const customerId = await aCustomer(h, m);
    const paid = async () =>
      (await payments(h, m, 'POST', '/order', anOrder(customerId, { amount: '60.00' }))).body.data
        .transactionId as number;
    const [chargedBack, disputed] = [await paid(), await paid()];
    const raised = await rail<{ disputeId: number }>(`/payments/transactions/${disputed}/chargeback`, {
      reasonCode: '13.1',
    });

    const issuingPartner = await h.admin<{ apiKey: string }>('POST', '/partners', {
      json: { name: 'Rails' },
    });
    const holder = await aCardholder(h, issuingPartner.body.apiKey, 100_000n);
    const issuing = <T = Record<string, string>>(path: string, json?: unknown) =>
      h.request<T>('POST', `/issuing/v1${path}`, {
        headers: { ...holder.auth, accept: 'application/json' },
        json,
      });
    const purchase = { cardId: holder.cardId, amount: '20.00', currency: 'EUR', merchant: 'Shop' };
    const authorized = async () =>
      (await rail('/issuing/authorizations', purchase)).body.transactionId as string;
    const [toClear, toReverse, toDispute] = [await authorized(), await authorized(), await authorized()];
    await rail(`/issuing/transactions/${toDispute}/clear`, { amount: '20.00', final: true });
    // Disputes are the partner's to open.
    const dispute = await h.request<{ disputeId: string }>(
      'POST',
      `/issuing/v1/transactions/${toDispute}/disputes`,
      {
        headers: { 'x-partner-api-key': issuingPartner.body.apiKey },
        json: { reason: 'fraud', amount: '20.00' },
      },
    );
    const fiatTopup = await issuing('/topups/fiat', { accountId: holder.accountId, amount: '25.00' });
    const crypto = { currency: 'USDC', network: 'ETH', accountCurrency: 'EUR' };
    const quote = await issuing('/topups/crypto/exchange-rate', crypto);
    const cryptoTopup = await issuing('/topups/crypto', {
      ...crypto,
      accountId: holder.accountId,
      amount: '25.00',
      quoteId: quote.body.quoteId,
    });
    const plastic = await issuing('/cards', {
      isVirtual: false,
      currency: 'EUR',
      pin: '4827',
      deliveryAddress: PLASTIC_ADDRESS,
    });
    const applicant = await anIssuingCustomer(h, issuingPartner.body.apiKey, { kyc: 'none' });

    const byTemplate: Record<string, Ids> = {
      '/issuing/topups/{topupId}/complete': { topupId: fiatTopup.body.topupId as string },
      '/issuing/topups/{topupId}/pay-crypto': { topupId: cryptoTopup.body.topupId as string },
      '/issuing/transactions/{transactionId}/clear': { transactionId: toClear },
      '/issuing/transactions/{transactionId}/reverse': { transactionId: toReverse },
      '/issuing/refunds': { transactionId: toClear },
      '/issuing/disputes/{disputeId}/decide': {
        disputeId: dispute.body.disputeId,
      },
      '/issuing/cards/{cardId}/ship': { cardId: plastic.body.cardId as string },
      '/issuing/kyc/{customerId}/decision': { customerId: applicant.customerId },
      '/payments/transactions/{id}/chargeback': { id: chargedBack },
      '/payments/disputes/{id}/decide': { id: raised.body.disputeId },
      '/bank/payouts/{id}/return': { id: returned },
      '/bank/payouts/{id}/reject': { id: rejected },
      '/bank/payouts/{id}/pay': { id: booked },
      '/crypto/orders/{id}/pay': { id: unpaid },
      '/crypto/transfers/{transactionHash}/reorg': { transactionHash: reorged.transfer },
      '/crypto/refunds/{paymentId}/accept': { paymentId: acceptedRefund },
      '/crypto/refunds/{paymentId}/reject': { paymentId: declinedRefund },
    };
    const sent = await sendEvery(
      'sandbox',
      { credentials: { adminToken: admin() }, ids: { cardId: holder.cardId, siteId } },
      async (template) => (byTemplate[template] ? { ids: byTemplate[template] } : undefined),
    );
    expect(refusedOnes(sent)).toEqual([]);
  });
});

/** A physical card, shipped by the sandbox's card maker: its id. */
async function aDeliveredCard(auth: Record<string, string>): Promise<string> {
  const card = await h.request<{ cardId: string }>('POST', '/issuing/v1/cards', {
    headers: auth,
    json: {
      isVirtual: false,
      currency: 'EUR',
      pin: '4827',
      deliveryAddress: PLASTIC_ADDRESS,
    },
  });
  await h.request('POST', `/sandbox/issuing/cards/${card.body.cardId}/ship`, { headers: admin() });
  return card.body.cardId;
}

const PLASTIC_ADDRESS = {
  name: 'Ada Lovelace',
  line1: 'Str. Memorandumului 28',
  city: 'Cluj-Napoca',
  postalCode: '400114',
  country: 'RO',
};

/** A payout of 10.00 from a site with settled funds (given a bank account only then, so no daily run takes them first): its id. */
async function aPayout(m: TestMerchant): Promise<string> {
  const site = m.sites[0] as TestMerchant['sites'][number];
  const customerId = await aCustomer(h, m);
  await payments(h, m, 'POST', '/order', anOrder(customerId, { amount: '40.00' }));
  await h.advanceClock(5 * 24 * 3600);
  await payments(h, m, 'PUT', `/site/${site.id}/bank-account`, {
    iban: 'RO49AAAA1B31007593840000',
    bic: 'AAAARO22',
    holderName: 'Examples SRL',
  });
  const made = await payments(h, m, 'POST', '/payout', {
    siteId: String(site.id),
    currency: 'EUR',
    amount: '10.00',
  });
  if (made.status !== 201) throw new Error(`no payout: ${made.text}`);
  return made.body.data.id as string;
}
