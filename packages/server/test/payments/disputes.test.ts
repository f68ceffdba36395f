// Chargebacks (docs/payments.md, Disputes): the network disputes its test cards' captures three sandbox days
// later, or a chargeback comes through the sandbox route; the amount and the dispute fee leave the site's
// balance in the same transaction; the IPN (decrypted as the xMoney SDK does) says chargeback /
// charge-back; the merchant answers with evidence (multipart, sniffed, size-limited) or accepts; the network
// decides on the clock; a won dispute is a representment. Refunds wait for the dispute; bad inputs name
// the field; another merchant's dispute is a 404; the ledger's invariants hold.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';
import {
  aCustomer,
  aMerchant,
  anOrder,
  newCard,
  type PaymentsEnvelope,
  payments,
  type TestMerchant,
} from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';
import { decryptOrderResponse } from '../harness/xmoney-sdk-wire.ts';

const DAY = 86_400;
let h: Harness;
let receiver: WebhookReceiver;
let m: TestMerchant;
let customerId: number;

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  m = await aMerchant(h, { ipnUrl: receiver.url('/ipn') });
  customerId = await aCustomer(h, m);
  // A float on the site's balance, so chargebacks are covered by it.
  await pay('4111111111111111', '1000.00');
});
afterAll(async () => {
  await expectLedgerInvariants(h);
  // Chargebacks, fees and representments keep the books: ledger = balance transactions, revenue = fees.
  const now = (
    await h.request<{ now: string }>('GET', '/sandbox/clock', {
      headers: { authorization: `Bearer ${h.adminToken}` },
    })
  ).body.now.slice(0, 10);
  const reconciled = await h.admin<{ clean: boolean; findings: unknown[] }>('GET', `/reconcile?date=${now}`);
  expect(reconciled.body.findings).toEqual([]);
  await h.close();
  await receiver.close();
});

type Dispute = {
  id: number;
  transactionId: number;
  chargebackTransactionId: number;
  representmentTransactionId: number | null;
  status: string;
  network: string;
  reasonCode: string;
  amount: number;
  fee: number;
  uncoveredAmount: number;
  evidence: {
    text: Record<string, string> | null;
    files: { filename: string; contentType: string; bytes: number }[];
  };
};

async function pay(cardNumber: string, amount: string): Promise<number> {
  const res = await payments(h, m, 'POST', '/order', {
    ...anOrder(customerId),
    ...newCard(cardNumber),
    amount,
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.transactionId as number;
}
const site = () => m.sites[0] as TestMerchant['sites'][number];
const balance = async () =>
  (
    await h.request<{ available: string }>(
      'GET',
      `/sandbox/payments/sites/${site().id}/balance?currency=EUR`,
      {
        headers: { authorization: `Bearer ${h.adminToken}` },
      },
    )
  ).body.available;
const disputesOf = async (transactionId: number) =>
  (await payments(h, m, 'GET', `/dispute?transactionId=${transactionId}`)).body.data as Dispute[];
const sandbox = <T>(path: string, json: Record<string, unknown>) =>
  h.request<T & { error?: { field?: string; message?: string } }>('POST', `/sandbox/payments${path}`, {
    headers: { authorization: `Bearer ${h.adminToken}` },
    json,
  });
/** A POST written whole by node's own HTTP client, as a plugin's client does: the answer, or the error. */
function postWhole(url: string, headers: Record<string, string>, body: string) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The merchant's evidence, as a browser or an HTTP client sends a form with files. */
async function answer(
  disputeId: number,
  files: { field: string; name: string; bytes: Uint8Array }[],
  text: Record<string, string> = {},
  merchant = m,
) {
  const form = new FormData();
  for (const file of files) form.append(file.field, new Blob([file.bytes]), file.name);
  for (const [key, value] of Object.entries(text)) form.append(key, value);
  const res = await fetch(`${h.baseUrl}/payments/dispute/${disputeId}/evidence`, {
    method: 'POST',
    headers: merchant.auth,
    body: form,
  });
  return { status: res.status, body: (await res.json()) as PaymentsEnvelope };
}
const PDF = new TextEncoder().encode('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
/** An IPN as the merchant reads it: decrypted as the xMoney SDK's decryptOrderResponse does. */
const ipnOf = (r: { body: string }) =>
  decryptOrderResponse<{
    transactionId: number;
    transactionType: string;
    transactionStatus: string;
    amount: number;
  }>(
    { secretKey: site().secretKey, publicKey: site().publicKey, apiBase: '', checkoutHost: '' },
    new URLSearchParams(r.body).get('opensslResult') ?? '',
  );

describe('chargebacks raised by the network', () => {
  it('a fraud test card is charged back three days after capture; answered with evidence, it is won', async () => {
    const paid = await pay('4000000000000259', '100.00');
    const before = await balance();
    await h.advanceClock(3 * DAY + 60);
    const [dispute] = await disputesOf(paid);
    expect(dispute).toMatchObject({
      transactionId: paid,
      status: 'needs_response',
      network: 'VISA',
      reasonCode: '10.4',
      amount: 100,
      fee: 15,
      uncoveredAmount: 0,
    });
    if (!dispute) throw new Error('no dispute');
    expect(Number(await balance())).toBeCloseTo(Number(before) - 115, 2);

    // The IPN of the chargeback, decrypted as the xMoney SDK does.
    const [ipn] = await receiver.waitFor(
      1,
      (r) => ipnOf(r).transactionId === dispute.chargebackTransactionId,
    );
    expect(ipn && ipnOf(ipn)).toMatchObject({
      transactionType: 'chargeback',
      transactionStatus: 'charge-back',
      amount: 100,
    });
    // Refunds wait for the dispute.
    expect((await payments(h, m, 'DELETE', `/transaction/${paid}`)).status).toBe(409);

    const answered = await answer(
      dispute.id,
      [
        { field: 'receipt', name: 'receipt.pdf', bytes: PDF },
        { field: 'photo', name: 'delivery.png', bytes: PNG },
      ],
      { productDescription: 'A blue teapot', shippingTrackingNumber: 'RR123456789RO' },
    );
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(answered.body.data).toMatchObject({
      status: 'under_review',
      evidence: {
        text: { productDescription: 'A blue teapot', shippingTrackingNumber: 'RR123456789RO' },
        files: [
          { filename: 'receipt.pdf', contentType: 'application/pdf', bytes: PDF.length },
          { filename: 'delivery.png', contentType: 'image/png', bytes: PNG.length },
        ],
      },
    });
    // Stored encrypted: the bytes are not in the table.
    const stored = await h.services.db
      .selectFrom('payments_dispute_evidence')
      .select('content_enc')
      .execute();
    expect(stored.some((row) => row.content_enc.includes('PDF-1.4'))).toBe(false);
    expect((await answer(dispute.id, [{ field: 'again', name: 'again.pdf', bytes: PDF }])).status).toBe(409);

    await h.advanceClock(5 * DAY + 60);
    const [won] = await disputesOf(paid);
    expect(won?.status).toBe('won');
    expect(won?.representmentTransactionId).toBeGreaterThan(0);
    expect(Number(await balance())).toBeCloseTo(Number(before) - 15, 2);
    const representment = await payments(h, m, 'GET', `/transaction/${won?.representmentTransactionId}`);
    expect(representment.body.data).toMatchObject({
      transactionType: 'representment',
      transactionStatus: 'complete-ok',
      parentTransactionId: paid,
      amount: 100,
    });
    // Once won, what is left can be refunded again.
    expect((await payments(h, m, 'DELETE', `/transaction/${paid}`, { amount: '10.00' })).status).toBe(200);
  });

  it('a not-received Mastercard test card is lost whatever the evidence', async () => {
    const paid = await pay('5555550000002685', '40.00');
    await h.advanceClock(3 * DAY + 60);
    const [dispute] = await disputesOf(paid);
    expect(dispute).toMatchObject({ network: 'MASTERCARD', reasonCode: '4855', status: 'needs_response' });
    if (!dispute) throw new Error('no dispute');
    expect((await answer(dispute.id, [{ field: 'receipt', name: 'r.pdf', bytes: PDF }])).status).toBe(200);
    await h.advanceClock(5 * DAY + 60);
    expect((await disputesOf(paid))[0]?.status).toBe('lost');
  });
});

describe('chargebacks from the sandbox route', () => {
  it('takes part of a payment; the merchant accepts; refunds get only what is left', async () => {
    const paid = await pay('4111111111111111', '50.00');
    const before = Number(await balance());
    const raised = await sandbox<{ disputeId: number; status: string }>(`/transactions/${paid}/chargeback`, {
      reasonCode: '13.1',
      amount: '20.00',
    });
    expect(raised.status).toBe(201);
    expect(Number(await balance())).toBeCloseTo(before - 35, 2);
    const listed = await payments(
      h,
      m,
      'GET',
      `/transaction?transactionType=chargeback&transactionStatus=charge-back`,
    );
    expect(listed.body.data.map((t: { parentTransactionId: number }) => t.parentTransactionId)).toContain(
      paid,
    );
    expect((await sandbox(`/transactions/${paid}/chargeback`, { reasonCode: '13.1' })).status).toBe(409);
    const accepted = await payments(h, m, 'POST', `/dispute/${raised.body.disputeId}/accept`);
    expect(accepted.body.data.status).toBe('accepted');
    expect((await payments(h, m, 'POST', `/dispute/${raised.body.disputeId}/accept`)).status).toBe(409);
    const tooMuch = await payments(h, m, 'DELETE', `/transaction/${paid}`, { amount: '30.01' });
    expect(tooMuch.status).toBe(400);
    expect((await payments(h, m, 'DELETE', `/transaction/${paid}`, { amount: '30.00' })).status).toBe(200);
    // Refunded and charged back in full: nothing is left to dispute.
    expect((await sandbox(`/transactions/${paid}/chargeback`, { reasonCode: '13.1' })).status).toBe(409);
  });

  it('a refunded payment is charged back for at most what is left; an unanswered dispute is lost at its deadline', async () => {
    const paid = await pay('4111111111111111', '30.00');
    await payments(h, m, 'DELETE', `/transaction/${paid}`, { amount: '25.00' });
    const over = await sandbox(`/transactions/${paid}/chargeback`, { reasonCode: '10.4', amount: '5.01' });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ field: 'amount' });
    const raised = await sandbox<{ disputeId: number }>(`/transactions/${paid}/chargeback`, {
      reasonCode: '10.4',
    });
    expect(raised.status).toBe(201);
    await h.advanceClock(7 * DAY + 60);
    const late = await answer(raised.body.disputeId, [{ field: 'receipt', name: 'r.pdf', bytes: PDF }]);
    expect(late.status).toBe(409);
    expect((await disputesOf(paid))[0]?.status).toBe('lost');
  });

  it('refuses bad evidence naming the file, unknown reason codes, and other merchants', async () => {
    const paid = await pay('4111111111111111', '12.00');
    const unknown = await sandbox(`/transactions/${paid}/chargeback`, { reasonCode: '4837' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ field: 'reasonCode' });
    const raised = await sandbox<{ disputeId: number }>(`/transactions/${paid}/chargeback`, {
      reasonCode: '10.4',
    });
    const id = raised.body.disputeId;

    const big = new Uint8Array(5 * 1024 * 1024 + 1);
    big.set(PDF);
    const tooBig = await answer(id, [{ field: 'invoice', name: 'invoice.pdf', bytes: big }]);
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error?.[0]).toMatchObject({ field: 'invoice' });
    expect(tooBig.body.error?.[0]?.message).toContain('invoice.pdf');
    const fake = await answer(id, [
      { field: 'scan', name: 'scan.pdf', bytes: new TextEncoder().encode('not a pdf at all') },
    ]);
    expect(fake.status).toBe(400);
    expect(fake.body.error?.[0]).toMatchObject({ field: 'scan' });
    const keyed = await fetch(`${h.baseUrl}/payments/dispute/${id}/evidence`, {
      method: 'POST',
      headers: { ...m.auth, 'idempotency-key': 'evidence-1' },
      body: (() => {
        const form = new FormData();
        form.append('receipt', new Blob([PDF]), 'receipt.pdf');
        return form;
      })(),
    });
    expect(keyed.status).toBe(400);
    const unknownField = await answer(id, [], { favouriteColour: 'blue' });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error?.[0]).toMatchObject({ field: 'favouriteColour' });
    // Malformed multipart bodies, as a fuzzer sends them: each a 400 in the envelope, never a 500.
    const boundary = 'xYzBoundary';
    const raw = (contentType: string, body: string | Uint8Array) =>
      fetch(`${h.baseUrl}/payments/dispute/${id}/evidence`, {
        method: 'POST',
        headers: { ...m.auth, 'content-type': contentType },
        body,
      });
    const part = (headers: string, content: string) => `--${boundary}\r\n${headers}\r\n\r\n${content}\r\n`;
    const malformed: [string, string, string | Uint8Array][] = [
      ['no boundary', 'multipart/form-data', part('Content-Disposition: form-data; name="note"', 'x')],
      [
        'truncated',
        `multipart/form-data; boundary=${boundary}`,
        `--${boundary}\r\nContent-Disposition: form-data; name="receipt"; filename="r.pdf"\r\n\r\n%PDF-1.4`,
      ],
      [
        'a part without a name',
        `multipart/form-data; boundary=${boundary}`,
        `${part('Content-Disposition: form-data; filename="r.pdf"', '%PDF-1.4')}--${boundary}--\r\n`,
      ],
      [
        'too many parts',
        `multipart/form-data; boundary=${boundary}`,
        `${Array.from({ length: 40 }, (_, i) => part(`Content-Disposition: form-data; name="note${i}"`, 'x')).join('')}--${boundary}--\r\n`,
      ],
      ['garbage', `multipart/form-data; boundary=${boundary}`, 'this is not multipart at all'],
    ];
    for (const [name, contentType, body] of malformed) {
      const res = await raw(contentType, body);
      const envelope = (await res.json()) as PaymentsEnvelope;
      expect(res.status, `${name}: ${JSON.stringify(envelope)}`).toBe(400);
      expect(envelope.error?.[0], name).toMatchObject({ type: 'Validation' });
    }
    // A body too large for any route, of the wrong media type: 413 in the envelope, the connection kept.
    // Sent as a plain HTTP client writes it (the whole body, then waits): the answer must come back.
    const huge = await postWhole(
      `${h.baseUrl}/payments/dispute/${id}/evidence`,
      { ...m.auth, 'content-type': 'application/x-www-form-urlencoded' },
      `notes=${'x'.repeat(1.5 * 1024 * 1024)}`,
    );
    expect(huge.status).toBe(413);
    expect((JSON.parse(huge.text) as PaymentsEnvelope).code).toBe(413);
    const json = await raw('application/json', '{"notes":"x"}');
    expect([400, 415]).toContain(json.status);
    expect(((await json.json()) as PaymentsEnvelope).error?.[0]).toBeDefined();

    // Nothing was written by the refusals: the dispute still awaits an answer, with no files.
    const still = await payments(h, m, 'GET', `/dispute/${id}`);
    expect(still.body.data).toMatchObject({ status: 'needs_response', evidence: { files: [] } });

    const other = await aMerchant(h);
    expect((await payments(h, other, 'GET', `/dispute/${id}`)).status).toBe(404);
    expect((await answer(id, [{ field: 'receipt', name: 'r.pdf', bytes: PDF }], {}, other)).status).toBe(404);
    expect((await payments(h, other, 'POST', `/dispute/${id}/accept`)).status).toBe(404);
  });
});
