// Traces (docs/operations.md, Traces): with OTEL_EXPORTER_OTLP_ENDPOINT set, the spans of a request go to
// an OTLP/HTTP collector — here one in this process, reading what the real exporter sends. A payments
// order (keyed) is a server span named by its route, continuing the caller's `traceparent`, with the
// idempotency claim, its SQL statements (text without values), the card network's call and the outbox
// below it, and its id in the request's log line; a card authorization with 3-D Secure and its
// approval; a payout run writing a bank file (the real file adapter); a crypto order paid through to its
// webhook, whose attempt is its own trace linked to the request that queued it.
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushTraces } from '../../src/platform/observability/tracing.ts';
import { anOrder as aCryptoOrder, aStore, pay } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import { aCustomer, aMerchant, anOrder } from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: {
    key: string;
    value: { stringValue?: string; intValue?: string | number; boolValue?: boolean };
  }[];
  links?: { traceId: string; spanId: string }[];
}

/** An OTLP/HTTP collector (JSON) in this process: every span it was sent. */
class Collector {
  readonly spans: OtlpSpan[] = [];
  resources: Record<string, unknown>[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<Collector> {
    const server = createServer();
    const collector = new Collector(server);
    server.on('request', (request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += String(chunk);
      });
      request.on('end', () => {
        if (request.url === '/v1/traces' && request.headers['content-type']?.startsWith('application/json')) {
          const sent = JSON.parse(body) as {
            resourceSpans: { resource: Record<string, unknown>; scopeSpans: { spans: OtlpSpan[] }[] }[];
          };
          for (const r of sent.resourceSpans) {
            collector.resources.push(r.resource);
            for (const s of r.scopeSpans) collector.spans.push(...s.spans);
          }
          response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } else response.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return collector;
  }

  get url() {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  trace(traceId: string) {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  close() {
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const attribute = (span: OtlpSpan | undefined, key: string) => {
  const value = span?.attributes?.find((a) => a.key === key)?.value;
  return value?.stringValue ?? value?.intValue ?? value?.boolValue;
};

/** The spans below `root` in its trace (children, their children…). */
function descendants(spans: OtlpSpan[], root: OtlpSpan): OtlpSpan[] {
  const below = spans.filter((s) => s.parentSpanId === root.spanId);
  return below.concat(below.flatMap((s) => descendants(spans, s)));
}

let h: Harness;
let collector: Collector;
let receiver: WebhookReceiver;

beforeAll(async () => {
  const bankDir = await mkdtemp(join(tmpdir(), 'tessera-traced-bank-'));
  collector = await Collector.start();
  receiver = await WebhookReceiver.start();
  h = await Harness.start({
    captureLogs: true,
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: 'tessera-under-test',
      // The real bank adapter (files), so a payout run writes one.
      TESSERA_BANK_RAIL: 'iso20022',
      TESSERA_BANK_OUTBOX_DIR: join(bankDir, 'outbox'),
      TESSERA_BANK_INBOX_DIR: join(bankDir, 'inbox'),
    },
  });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
  await collector.close();
});

/** The server span of a request, found by the id it answered with, once exported. */
async function serverSpanOf(requestId: string): Promise<OtlpSpan> {
  let found: OtlpSpan | undefined;
  await expect
    .poll(async () => {
      await flushTraces();
      found = collector.spans.find((s) => s.kind === 2 && attribute(s, 'tessera.request_id') === requestId);
      return found !== undefined;
    })
    .toBe(true);
  return found as OtlpSpan;
}

describe('traces over OTLP', () => {
  it('a keyed payments order: route, claim, SQL without values, the card network and the outbox under one span', async () => {
    const merchant = await aMerchant(h, { ipnUrl: receiver.url('/ipn') });
    const customer = await aCustomer(h, merchant);
    const callerTrace = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const order = await h.request('POST', '/payments/order', {
      headers: {
        ...merchant.auth,
        'idempotency-key': randomBytes(8).toString('hex'),
        traceparent: `00-${callerTrace}-${callerSpan}-01`,
      },
      form: anOrder(customer, { amount: '12.34' }),
    });
    expect(order.status, order.text).toBe(201);
    const requestId = order.headers.get('x-request-id') as string;
    const root = await serverSpanOf(requestId);
    // The caller's trace continues: its id, and the caller's span as the parent.
    expect(root.traceId).toBe(callerTrace);
    expect(root.parentSpanId).toBe(callerSpan);
    expect(root.name).toBe('POST /payments/order');
    expect(attribute(root, 'http.response.status_code')).toBe(201);
    const below = descendants(collector.trace(root.traceId), root);
    const names = below.map((s) => s.name);
    expect(names).toContain('idempotency claim');
    expect(names.some((n) => n.startsWith('rail card-network.'))).toBe(true);
    expect(names.some((n) => n.startsWith('outbox '))).toBe(true);
    const statements = below.filter((s) => s.name.startsWith('db '));
    expect(statements.length).toBeGreaterThan(2);
    const texts = statements.map((s) => String(attribute(s, 'db.query.text') ?? ''));
    expect(texts.some((t) => /\$1/.test(t))).toBe(true);
    // Values never: not the card number, not the customer's email, not the amount.
    for (const text of texts) {
      expect(text).not.toContain('4111111111111111');
      expect(text).not.toContain('1234');
    }
    expect(collector.resources.some((r) => JSON.stringify(r).includes('tessera-under-test'))).toBe(true);
    // The request's log line names its trace.
    const line = h.logs
      .flatMap((chunk) => chunk.split('\n'))
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { reqId?: string; msg?: string; trace_id?: string })
      .find((l) => l.reqId === requestId && l.msg === 'request');
    expect(line?.trace_id).toBe(callerTrace);
  });

  it('a card authorization with 3-D Secure and its approval are traced, the network simulated as a rail', async () => {
    const partner = await h.admin<{ apiKey: string }>('POST', '/partners', {
      json: { name: 'Traced cards' },
    });
    const holder = await aCardholder(h, partner.body.apiKey);
    const pending = await h.request<{ status: string }>('POST', '/sandbox/issuing/authorizations', {
      headers: { authorization: `Bearer ${h.adminToken}` },
      json: { cardId: holder.cardId, amount: '5.00', currency: 'EUR', merchant: 'Traced', threeDS: true },
    });
    expect(pending.body.status).toBe('pending_3ds');
    const list = await h.request<{ data: { transactionAuthId: string }[] }>(
      'GET',
      '/issuing/v1/transactions/3d-secure',
      { headers: holder.auth },
    );
    const authId = list.body.data[0]?.transactionAuthId as string;
    const decided = await h.request<{ status: string }>(
      'PATCH',
      `/issuing/v1/transactions/3d-secure/${authId}`,
      {
        headers: holder.auth,
        json: { authType: 'fingerprint', authStatus: 'success' },
      },
    );
    expect(decided.body.status).toBe('authorized');
    const authorization = await serverSpanOf(pending.headers.get('x-request-id') as string);
    expect(authorization.name).toBe('POST /sandbox/issuing/authorizations');
    const approval = await serverSpanOf(decided.headers.get('x-request-id') as string);
    expect(approval.name).toBe('PATCH /issuing/v1/transactions/3d-secure/:transactionAuthId');
    for (const root of [authorization, approval]) {
      const below = descendants(collector.trace(root.traceId), root);
      expect(below.some((s) => s.name.startsWith('db '))).toBe(true);
      expect(below.some((s) => s.name.startsWith('outbox '))).toBe(true);
    }
  });

  it('a payout run: the bank file written is a rail span under the request', async () => {
    const merchant = await aMerchant(h);
    const site = `/merchants/${merchant.id}/sites/${merchant.sites[0]?.id}`;
    await h.admin('PUT', `${site}/payout-schedule`, { json: { interval: 'daily', delayDays: 0 } });
    await h.admin('PUT', `${site}/bank-account`, {
      json: { iban: 'DE89370400440532013000', holderName: 'Traced' },
    });
    const paid = await h.request('POST', '/payments/order', {
      headers: merchant.auth,
      form: anOrder(await aCustomer(h, merchant), { amount: '30.00' }),
    });
    expect(paid.status).toBe(201);
    const run = await h.admin<{ sent: number }>('POST', '/payout-runs');
    expect(run.status, run.text).toBe(200);
    expect(run.body.sent).toBe(1);
    const root = await serverSpanOf(run.headers.get('x-request-id') as string);
    const names = descendants(collector.trace(root.traceId), root).map((s) => s.name);
    expect(names).toContain('rail bank.dispatch');
    expect(names).toContain('rail bank.file');
  });

  it('a crypto order paid through to its webhook: the attempt is linked to the request that queued it', async () => {
    const store = await aStore(h, { webhookUrl: receiver.url('/crypto') });
    const order = await aCryptoOrder(h, store);
    const paid = await pay(h, order.id);
    expect(paid.status).toBe(201);
    await h.advanceClock(600);
    await receiver.waitFor(1, (r) => r.path === '/crypto');
    // The order's webhook was queued by a request about it (the payment, or the clock's confirmations).
    const linkedRequest = (attempt: OtlpSpan) =>
      collector.spans.find((s) => s.kind === 2 && s.traceId === attempt.links?.[0]?.traceId);
    let attempt: OtlpSpan | undefined;
    await expect
      .poll(async () => {
        await flushTraces();
        attempt = collector.spans.find(
          (s) =>
            s.name === 'webhook attempt' &&
            /crypto|clock/.test(linkedRequest(s)?.name ?? '') &&
            attribute(s, 'tessera.attempted') === true,
        );
        return attempt !== undefined;
      })
      .toBe(true);
    const found = attempt as OtlpSpan;
    const link = found.links?.[0];
    // Linked, not a child: the attempt is its own trace, and the link leads to a span of that request.
    expect(found.parentSpanId ?? '').toBe('');
    expect(found.traceId).not.toBe(link?.traceId);
    expect(collector.spans.some((s) => s.traceId === link?.traceId && s.spanId === link?.spanId)).toBe(true);
    // Below the attempt: its own SQL (the claim of the delivery, the attempt recorded).
    expect(descendants(collector.trace(found.traceId), found).some((s) => s.name.startsWith('db '))).toBe(
      true,
    );
  });

  it('a webhook attempt: an HTTP client span with the URL (no query), method, status and error, and the outcome on the attempt', async () => {
    // Credentials in a URL are refused when it is set, so only its query can carry a secret.
    const store = await aStore(h, { webhookUrl: `${receiver.url('/traced-hook')}?token=s3cret` });
    receiver.respondWith({ kind: 'answer', status: 503 });
    const order = await aCryptoOrder(h, store);
    expect((await pay(h, order.id)).status).toBe(201);
    await h.advanceClock(600);
    await receiver.waitFor(2, (r) => r.path.startsWith('/traced-hook'));
    const attempts = () =>
      collector.spans.filter(
        (s) =>
          s.name === 'webhook attempt' &&
          descendants(collector.trace(s.traceId), s).some(
            (c) => c.name === 'POST' && String(attribute(c, 'url.full')).endsWith('/traced-hook'),
          ),
      );
    await expect
      .poll(async () => {
        await flushTraces();
        return attempts().map((a) => attribute(a, 'tessera.outcome'));
      })
      .toEqual(expect.arrayContaining(['retry', 'delivered']));
    const failed = attempts().find((a) => attribute(a, 'tessera.outcome') === 'retry') as OtlpSpan;
    expect(String(attribute(failed, 'tessera.retry_at'))).toMatch(/^\d{4}-\d\d-\d\dT/);
    const client = descendants(collector.trace(failed.traceId), failed).find(
      (c) => c.name === 'POST',
    ) as OtlpSpan;
    expect(client.kind).toBe(3); // CLIENT
    expect(attribute(client, 'http.request.method')).toBe('POST');
    expect(attribute(client, 'url.full')).toBe(receiver.url('/traced-hook'));
    expect(String(attribute(client, 'http.response.status_code'))).toBe('503');
    expect(attribute(client, 'error.type')).toBe('503');
    expect(JSON.stringify(collector.spans)).not.toContain('s3cret');
  });
});
