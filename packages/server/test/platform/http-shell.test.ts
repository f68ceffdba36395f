// The HTTP shell: request ids, each API's error envelope, rate limits, health, metrics, docs, logs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness, OWN_HARNESS_TIMEOUT_MS } from '../harness/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start({ captureLogs: true });
});
afterAll(async () => {
  await h.close();
});

describe('request ids', () => {
  it('generates one per request, or keeps a sane one the caller sent', async () => {
    const generated = await h.request('GET', '/healthz');
    expect(generated.headers.get('x-request-id')).toMatch(/^req_[0-9A-Z]{26}$/);
    const kept = await h.request('GET', '/healthz', { headers: { 'x-request-id': 'trace-123' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-123');
    const replaced = await h.request('GET', '/healthz', {
      headers: { 'x-request-id': 'bad id with spaces' },
    });
    expect(replaced.headers.get('x-request-id')).toMatch(/^req_/);
  });
});

describe('error envelopes per API', () => {
  it('issuing keeps {code, message} and adds the machine code', async () => {
    const res = await h.request<Record<string, unknown>>('GET', '/issuing/v1/no-such-route');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({
      code: 404,
      message: 'Not found',
      error: 'not_found',
      requestId: res.headers.get('x-request-id'),
    });
  });

  it('payments answers the spec envelope with an error array', async () => {
    const res = await h.request<Record<string, unknown>>('DELETE', '/payments/no-such-route');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({
      code: 404,
      message: 'Not Found',
      error: [{ code: 404, type: 'Exception' }],
    });
  });

  it('crypto answers the real service envelope with JSON:API error members', async () => {
    const res = await h.request<Record<string, unknown>>('GET', '/crypto/api/stores/nothing');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({
      code: 404,
      message: 'not_found',
      errors: [{ status: '404', title: 'Not found' }],
    });
  });

  it('the rest answers in the admin envelope, and never echoes a body it could not parse', async () => {
    expect((await h.request<Record<string, unknown>>('GET', '/nowhere')).body).toMatchObject({
      error: { code: 'not_found' },
    });
    const garbled = await h.admin<{ error: { code: string; message: string; field: string } }>(
      'POST',
      '/partners',
      {
        body: '{"name": "x", "cardNumber": "4111111111111111"',
        headers: { 'content-type': 'application/json' },
      },
    );
    expect(garbled.status).toBe(400);
    expect(garbled.body.error).toEqual({
      code: 'validation_failed',
      message: 'the body is not valid JSON',
      field: 'body',
    });
    expect(garbled.text).not.toContain('4111');
    const media = await h.admin<{ error: { code: string } }>('POST', '/partners', {
      body: '<name>x</name>',
      headers: { 'content-type': 'application/xml' },
    });
    expect(media.status).toBe(415);
    expect(media.body.error.code).toBe('unsupported_media_type');
    const huge = await h.admin('POST', '/partners', { json: { name: 'x'.repeat(2 * 1024 * 1024) } });
    expect(huge.status).toBe(413);
  });
});

describe('trailing slashes', () => {
  it('every API answers a path with a trailing slash as without (clients built on axios add one)', async () => {
    expect((await h.request('GET', '/healthz/')).body).toEqual({ status: 'ok' });
    expect((await h.admin('GET', '/partners/')).status).toBe(200);
    // Unauthenticated, each in its own envelope: the route matched, not a 404.
    expect((await h.request('GET', '/payments/order/')).status).toBe(401);
    expect((await h.request('POST', '/crypto/api/stores/orders/', { json: {} })).status).toBe(401);
    expect((await h.request('GET', '/issuing/v1/accounts/')).status).toBe(401);
  });
});

describe('operational routes', () => {
  it('answers liveness and readiness', async () => {
    expect((await h.request('GET', '/healthz')).body).toEqual({ status: 'ok' });
    expect((await h.request('GET', '/readyz')).body).toEqual({ status: 'ready' });
  });

  it('exposes Prometheus metrics by route template', async () => {
    await h.admin('GET', '/partners');
    const res = await h.request('GET', '/metrics');
    expect(res.headers.get('content-type')).toMatch(/text\/plain/);
    expect(res.text).toMatch(
      /tessera_http_requests_total\{method="GET",route="\/admin\/partners",status="200"\} \d+/,
    );
    expect(res.text).toContain('tessera_http_request_duration_seconds_bucket');
    expect(res.text).toContain('tessera_process_cpu_seconds_total');
  });

  it('serves one OpenAPI document per API, browsable from /docs', async () => {
    const index = await h.request('GET', '/docs');
    expect(index.headers.get('content-type')).toMatch(/text\/html/);
    for (const [name, prefix] of [
      ['issuing', '/issuing/v1'],
      ['payments', '/payments'],
      ['crypto', '/crypto/api'],
      ['admin', '/admin'],
      ['sandbox', '/sandbox'],
    ]) {
      expect(index.text).toContain(`href="${h.baseUrl}${prefix}/docs/"`);
      const doc = await h.request<{ openapi: string; info: { title: string }; servers: { url: string }[] }>(
        'GET',
        `/docs/${name}/openapi.json`,
      );
      expect(doc.status).toBe(200);
      expect(doc.body.openapi).toBe('3.1.0');
      expect(doc.body.servers[0]?.url).toBe(prefix);
      const ui = await h.request('GET', `${prefix}/docs/`);
      expect(ui.status, `${prefix}/docs/`).toBe(200);
      expect(ui.headers.get('content-type')).toMatch(/text\/html/);
    }
    const admin = await h.request<{ paths: Record<string, unknown> }>('GET', '/docs/admin/openapi.json');
    expect(Object.keys(admin.body.paths)).toEqual(
      expect.arrayContaining([
        '/partners',
        '/partners/{id}',
        '/merchants',
        '/stores',
        '/events',
        '/events/replay',
      ]),
    );
    const payments = await h.request<{ paths: Record<string, unknown> }>(
      'GET',
      '/docs/payments/openapi.json',
    );
    expect(Object.keys(payments.body.paths).sort()).toEqual([
      '/auth/session-token',
      '/balance',
      '/balance-transaction',
      '/balance/report',
      '/card',
      '/card/{id}',
      '/customer',
      '/customer/{id}',
      '/dispute',
      '/dispute/{id}',
      '/dispute/{id}/accept',
      '/dispute/{id}/evidence',
      '/events',
      '/events/replay',
      '/events/{eventId}',
      '/events/{eventId}/redeliver',
      '/order',
      '/order-rebill/{id}',
      '/order/{id}',
      '/payment-link',
      '/payment-link/{hash}',
      '/payment-link/{hash}/email',
      '/payout',
      '/payout/{id}',
      '/payout/{id}/report',
      '/site/{siteId}/bank-account',
      '/transaction',
      '/transaction/{id}',
    ]);
    expect((await h.request('GET', '/docs/nope/openapi.json')).status).toBe(404);
    // Five documents built from every route's schema on first request: 1–3 s each on 2 vCPU, 22 s in all
    // beside a bench, over the suite's 30 s once other files run too.
  }, 90_000);
});

describe('logs', () => {
  it('never contain card numbers, tokens, keys or secrets', async () => {
    const partner = await h.admin<{ apiKey: string; webhookSigningKey: string }>('POST', '/partners', {
      json: { name: 'Logged' },
    });
    await h.request('GET', '/issuing/v1/cards/4111111111111111/secrets', {
      headers: { authorization: 'Bearer cust_token_abcdef' },
    });
    await h.request('POST', '/admin/partners', {
      headers: { authorization: 'Bearer wrong-admin-token', 'x-partner-api-key': partner.body.apiKey },
      json: { name: 'x', cardNumber: '5555555555554444', cvv: '123' },
    });
    h.services.logger.info(
      { card: { cardNumber: '378282246310005', cvv: '1234' }, password: 'hunter2' },
      'checkout 4000000000000002',
    );
    const logs = h.logs.join('');
    expect(logs).toContain('"msg":"request"');
    for (const secret of [
      '4111111111111111',
      '5555555555554444',
      '378282246310005',
      '4000000000000002',
      'cust_token_abcdef',
      'wrong-admin-token',
      h.adminToken,
      partner.body.apiKey,
      partner.body.webhookSigningKey,
      'hunter2',
      '"1234"',
    ]) {
      expect(logs, secret).not.toContain(secret);
    }
    expect(logs).toContain('411111******1111');
  });
});

describe('request log', () => {
  it('is one info line per request: method, route, status, duration and id; query values kept unless secret', async () => {
    const before = h.logs.length;
    const answered = await h.admin('GET', '/partners?lang=de&perPage=5&token=tok_hidden_value&email=a@b.c');
    const id = answered.headers.get('x-request-id');
    const lines = h.logs
      .slice(before)
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.reqId === id);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'request',
      method: 'GET',
      route: '/admin/partners',
      status: 200,
    });
    expect(typeof lines[0]?.durationMs).toBe('number');
    expect(lines[0]?.url).toBe('/admin/partners?lang=de&perPage=5&token=[redacted]&email=[redacted]');
  });
});

describe('rate limiting', () => {
  it(
    'answers 429 with Retry-After per credential, in the API envelope',
    async () => {
      const limited = await Harness.start({ env: { TESSERA_RATE_LIMIT_PER_MINUTE: '3' } });
      try {
        for (let i = 0; i < 3; i++) expect((await limited.admin('GET', '/partners')).status).toBe(200);
        const refused = await limited.admin<{ error: { code: string } }>('GET', '/partners');
        expect(refused.status).toBe(429);
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(refused.body.error.code).toBe('rate_limited');
        // Another credential has its own budget.
        expect(
          (await limited.request('GET', '/admin/partners', { headers: { authorization: 'Bearer other' } }))
            .status,
        ).toBe(401);
        const issuing = await limited.request<Record<string, unknown>>('GET', '/issuing/v1/x', {
          headers: { authorization: 'Bearer c' },
        });
        expect(issuing.status).toBe(404);
        for (let i = 0; i < 3; i++)
          await limited.request('GET', '/issuing/v1/x', { headers: { authorization: 'Bearer c' } });
        const issuingLimited = await limited.request<Record<string, unknown>>('GET', '/issuing/v1/x', {
          headers: { authorization: 'Bearer c' },
        });
        expect(issuingLimited.status).toBe(429);
        expect(issuingLimited.body).toMatchObject({ code: 429, error: 'rate_limited' });
        // Health checks are never limited.
        for (let i = 0; i < 5; i++) expect((await limited.request('GET', '/healthz')).status).toBe(200);
      } finally {
        await limited.close();
      }
    },
    OWN_HARNESS_TIMEOUT_MS,
  );
});
