// What the HTTP edge answers to broken and hostile requests, sent as raw bytes: every answer under an
// API's base path is that API's own error envelope, JSON, with x-request-id, and never a 5xx.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aStore } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aMerchant, type TestMerchant } from '../harness/payments-builders.ts';

let h: Harness;
let merchant: TestMerchant;
/** Per API: a POST route and the credential header that reaches its body */
let posts: Record<Api, { path: string; auth: string }>;
beforeAll(async () => {
  h = await Harness.start();
  merchant = await aMerchant(h);
  const partner = await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Edge' } });
  const store = await aStore(h);
  posts = {
    issuing: { path: '/issuing/v1/events/replay', auth: `x-partner-api-key: ${partner.body.apiKey}` },
    payments: { path: '/payments/order', auth: `Authorization: Bearer ${merchant.apiKey}` },
    crypto: { path: '/crypto/api/stores/orders', auth: `Authorization: Bearer ${store.key}` },
    admin: { path: '/admin/partners', auth: `Authorization: Bearer ${h.adminToken}` },
  };
});
afterAll(async () => {
  await h.close();
});

type Api = 'issuing' | 'payments' | 'crypto' | 'admin';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends exactly these bytes and reads the answer (one request, connection closed after). */
function raw(bytes: string | Buffer): Promise<RawAnswer> {
  const { port } = new URL(h.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      let body = rest.join('\r\n\r\n');
      if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const line = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, line), 16);
    if (!size) return out;
    out += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}

/** The API's own error envelope, JSON, with a request id. */
function expectEnvelope(api: Api, answer: RawAnswer, status: number) {
  expect(answer.status, answer.body).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.headers['x-request-id']).toMatch(/\S/);
  const body = JSON.parse(answer.body);
  if (api === 'issuing') expect(body).toMatchObject({ code: status, message: expect.any(String) });
  if (api === 'payments')
    expect(body.error?.[0]).toMatchObject({ type: expect.stringMatching(/Exception|Validation/) });
  if (api === 'crypto') expect(body.errors?.[0]).toMatchObject({ detail: expect.any(String) });
  if (api === 'admin') expect(body.error).toMatchObject({ code: expect.any(String) });
  return body;
}

const BASES: [Api, string][] = [
  ['issuing', '/issuing/v1/accounts'],
  ['payments', '/payments/order'],
  ['crypto', '/crypto/api/stores/orders'],
  ['admin', '/admin/partners'],
];

describe('broken requests', () => {
  it.each(BASES)('%s: a bad percent-escape in the path or query', async (api, path) => {
    expectEnvelope(
      api,
      await raw(`GET ${path}/%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
      400,
    );
    // In a query, a bad escape is kept as text (as PHP and qs read it): an answer in the envelope, no 5xx.
    const query = await raw(`GET ${path}?a=%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expectEnvelope(api, query, query.status);
    expect(query.status).toBeLessThan(500);
  });

  it.each(BASES)('%s: a URL too long (414) and headers too large (431)', async (api, path) => {
    expectEnvelope(
      api,
      await raw(`GET ${path}?q=${'a'.repeat(9000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
      414,
    );
    const big = `X-Big: ${'b'.repeat(20_000)}\r\n`;
    expectEnvelope(api, await raw(`GET ${path} HTTP/1.1\r\nHost: x\r\n${big}Connection: close\r\n\r\n`), 431);
  });

  it.each(BASES)('%s: a body too large, of an unsupported type, or malformed JSON', async (api) => {
    const { path, auth } = posts[api];
    const post = (type: string, body: string) =>
      raw(
        `POST ${path} HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    expectEnvelope(api, await post('application/json', `{"a":"${'x'.repeat(1_100_000)}"}`), 413);
    expectEnvelope(api, await post('text/csv', 'a,b'), 415);
    expectEnvelope(api, await post('application/json', '{"a":'), 400);
  });
});

describe('hostile strings', () => {
  it('refuses a NUL or a lone surrogate anywhere, naming the field, before anything is stored', async () => {
    const cases: [string, RequestInit & { path: string }][] = [
      ['name', { path: '/admin/partners', method: 'POST', body: JSON.stringify({ name: 'a\u0000b' }) }],
      ['name', { path: '/admin/partners', method: 'POST', body: '{"name":"a\\ud800b"}' }],
      [
        'sites.0.name',
        {
          path: '/admin/merchants',
          method: 'POST',
          body: JSON.stringify({ name: 'm', sites: [{ name: '\u0000' }] }),
        },
      ],
    ];
    for (const [field, { path, ...init }] of cases) {
      const res = await h.request<{ error: { field: string } }>(init.method ?? 'GET', path, {
        headers: { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' },
        body: String(init.body),
      });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.field).toBe(field);
    }
    const customData = await h.request<{ error: { field: string }[] }>('POST', '/payments/customer', {
      headers: { ...merchant.auth, 'content-type': 'application/json' },
      body: '{"identifier":"x","email":"a@example.com","firstName":"A","lastName":"B","country":"RO","tags":["\\udc00"]}',
    });
    expect(customData.status).toBe(400);
    expect(customData.body.error[0]?.field).toBe('tags.0');
    const form = await h.request<{ error: { field: string }[] }>('POST', '/payments/customer', {
      headers: merchant.auth,
      form: { identifier: 'y\u0000', email: 'a@example.com', firstName: 'A', lastName: 'B', country: 'RO' },
    });
    expect(form.status).toBe(400);
    expect(form.body.error[0]?.field).toBe('identifier');
    const query = await h.request<{ error: { field: string }[] }>(
      'GET',
      '/payments/order?externalOrderId=%00',
      {
        headers: merchant.auth,
      },
    );
    expect(query.status).toBe(400);
    expect(query.body.error[0]?.field).toBe('externalOrderId');
    const param = await h.request<{ errors: { source?: { pointer: string } }[] }>(
      'GET',
      '/crypto/api/stores/orders/%00',
      {
        headers: { authorization: 'Bearer u_test_nope' },
      },
    );
    expect(param.status).toBeLessThan(500);
    expect(
      (await h.services.db.selectFrom('partners').select('id').where('name', 'like', 'a%b').execute()).length,
    ).toBe(0);
  });

  it('treats a JSON content type with an empty body as no body', async () => {
    const res = await h.request<{ error: { field: string } }>('POST', '/admin/partners', {
      headers: { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' },
      body: '',
    });
    expect(res.status).toBe(400);
    expect(res.body.error.field).toBe('body');
    const events = await h.request('POST', '/admin/events/replay', {
      headers: { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' },
      body: '',
    });
    expect(events.status).toBe(400);
  });

  it('takes the bearer scheme in any case', async () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
      const res = await h.request('GET', '/admin/partners', {
        headers: { authorization: `${scheme} ${h.adminToken}` },
      });
      expect(res.status).toBe(200);
    }
  });
});
