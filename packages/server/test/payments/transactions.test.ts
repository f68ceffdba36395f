// /transaction: auth then partial capture then partial refunds (never refunding twice), voids, captures
// refused in the wrong state, authorizations lapsing on the clock, lists with filters, the ledger.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';
import {
  aCustomer,
  aMerchant,
  anOrder,
  decryptIpns,
  payments,
  type TestMerchant,
} from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let m: TestMerchant;
let customerId: number;

beforeAll(async () => {
  h = await Harness.start({ env: { TESSERA_PAYMENTS_AUTHORIZATION_SECONDS: '3600' } });
  receiver = await WebhookReceiver.start();
  m = await aMerchant(h, { ipnUrl: receiver.url('/ipn') });
  customerId = await aCustomer(h, m, { email: 'payer@example.com' });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

const balance = async () =>
  Number(
    (
      await h.request<{ available: string }>(
        'GET',
        `/sandbox/payments/sites/${m.sites[0]?.id}/balance?currency=EUR`,
        {
          headers: { authorization: `Bearer ${h.adminToken}` },
        },
      )
    ).body.available,
  );
const authorize = async (amount = '100.00') => {
  const res = await payments(
    h,
    m,
    'POST',
    '/order',
    anOrder(customerId, { amount, cardTransactionMode: 'auth' }),
  );
  expect(res.status).toBe(201);
  expect(res.body.data.transactionStatus).toBe('in-progress');
  return res.body.data as { orderId: number; transactionId: number };
};

describe('capture and refund', () => {
  it('authorizes, captures part (the rest released), refunds part, then the rest, never twice', async () => {
    const start = await balance();
    const { orderId, transactionId } = await authorize('100.00');
    expect(await balance()).toBe(start);

    const tooMuch = await payments(h, m, 'PUT', `/transaction/${transactionId}`, { amount: '100.01' });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.error?.[0]?.field).toBe('amount');

    const captured = await payments(h, m, 'PUT', `/transaction/${transactionId}`, { amount: '60.00' });
    expect(captured.status).toBe(200);
    expect(captured.body.data).toMatchObject({
      transactionStatus: 'complete-ok',
      capturedAmount: 60,
      amount: 100,
    });
    expect(await balance()).toBeCloseTo(start + 60, 2);
    const order = await payments(h, m, 'GET', `/order/${orderId}`);
    expect(order.body.data.orderStatus).toBe('complete-ok');

    const twice = await payments(h, m, 'PUT', `/transaction/${transactionId}`, { amount: '10.00' });
    expect(twice.status).toBe(409);

    const partial = await payments(h, m, 'DELETE', `/transaction/${transactionId}`, {
      amount: '25.00',
      reason: 'customer-demand',
      message: 'one item returned',
    });
    expect(partial.status).toBe(200);
    expect(partial.body.data).toMatchObject({
      transactionType: 'refund',
      transactionStatus: 'refund-ok',
      amount: 25,
      parentTransactionId: transactionId,
      reason: 'customer-demand',
    });
    // Twispay's WHMCS and Magento 2 modules record the refund by $json->data->transactionId.
    expect(partial.body.data.transactionId).toBe(partial.body.data.id);
    expect(partial.body.data.transactionId).not.toBe(transactionId);
    expect(await balance()).toBeCloseTo(start + 35, 2);

    const over = await payments(h, m, 'DELETE', `/transaction/${transactionId}`, { amount: '35.01' });
    expect(over.status).toBe(400);
    expect(over.body.error?.[0]?.field).toBe('amount');

    // The rest, with no amount: full refund of what is left.
    const rest = await payments(h, m, 'DELETE', `/transaction/${transactionId}`);
    expect(rest.body.data.amount).toBe(35);
    const deposit = await payments(h, m, 'GET', `/transaction/${transactionId}`);
    expect(deposit.body.data).toMatchObject({ transactionStatus: 'refund-ok', refundedAmount: 60 });
    const again = await payments(h, m, 'DELETE', `/transaction/${transactionId}`);
    expect(again.status).toBe(409);
    expect(await balance()).toBeCloseTo(start, 2);

    // A retried refund with the same Idempotency-Key answers the first refund, not a second one.
    const paid = await payments(h, m, 'POST', '/order', anOrder(customerId, { amount: '20.00' }));
    const key = { ...m.auth, 'idempotency-key': `refund-${paid.body.data.transactionId}` };
    const form = new URLSearchParams({ amount: '5.00' }).toString();
    const send = () =>
      h.request<{ data: { id: number } }>('DELETE', `/payments/transaction/${paid.body.data.transactionId}`, {
        headers: { ...key, 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
      });
    const [first, second] = [await send(), await send()];
    expect(second.body.data.id).toBe(first.body.data.id);
    const refunds = await payments(
      h,
      m,
      'GET',
      `/transaction?transactionType=refund&orderId=${paid.body.data.orderId}`,
    );
    expect(refunds.body.data).toHaveLength(1);

    await expectLedgerInvariants(h);
  });

  it('names bad capture and refund bodies, and changes nothing', async () => {
    const { transactionId } = await authorize('40.00');
    for (const [method, form, field] of [
      ['PUT', {}, 'amount'],
      ['PUT', { amount: 'all' }, 'amount'],
      ['PUT', { amount: '0' }, 'amount'],
      ['DELETE', { reason: 'bored' }, 'reason'],
      ['DELETE', { amount: '-5' }, 'amount'],
      ['DELETE', { amount: '39.00' }, 'amount'],
    ] as const) {
      const res = await payments(h, m, method, `/transaction/${transactionId}`, form);
      expect(res.status, `${method} ${JSON.stringify(form)}`).toBe(400);
      expect(res.body.error?.[0]).toMatchObject({ type: 'Validation', field });
    }
    const read = await payments(h, m, 'GET', `/transaction/${transactionId}`);
    expect(read.body.data).toMatchObject({ transactionStatus: 'in-progress', capturedAmount: 0 });
    expect((await payments(h, m, 'GET', '/transaction/abc')).body.error?.[0]?.field).toBe('id');
    expect((await payments(h, m, 'GET', '/transaction/999999')).status).toBe(404);
  });

  it('voids an authorization that is not captured (DELETE), and refuses to capture it afterwards', async () => {
    const { transactionId } = await authorize('40.00');
    const voided = await payments(h, m, 'DELETE', `/transaction/${transactionId}`, {
      reason: 'fraud-confirm',
    });
    expect(voided.body.data.transactionStatus).toBe('void-ok');
    const capture = await payments(h, m, 'PUT', `/transaction/${transactionId}`, { amount: '40.00' });
    expect(capture.status).toBe(409);
  });

  it('releases an authorization nobody captured once its period ends (the clock advanced)', async () => {
    const { orderId, transactionId } = await authorize('15.00');
    await h.advanceClock(3601);
    const read = await payments(h, m, 'GET', `/transaction/${transactionId}`);
    expect(read.body.data).toMatchObject({ transactionStatus: 'void-ok', reason: 'authorization-expired' });
    const order = await payments(h, m, 'GET', `/order/${orderId}`);
    expect(order.body.data.orderStatus).toBe('complete-failed');
    await expect
      .poll(() =>
        decryptIpns(receiver, m.sites[0]?.ipnSecret ?? '').find(
          (i) => i.transactionId === transactionId && i.status === 'void-ok',
        ),
      )
      .toMatchObject({ orderStatus: 'complete-failed' });
  });

  it('refuses to refund a failed transaction', async () => {
    const declined = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, { cardNumber: '4000000000000002' }),
    );
    const refund = await payments(h, m, 'DELETE', `/transaction/${declined.body.data.transactionId}`);
    expect(refund.status).toBe(409);
  });
});

describe('lists and filters', () => {
  it('filters by status (several), type, amount, currency and email; validates filters', async () => {
    await payments(h, m, 'POST', '/order', anOrder(customerId, { amount: '7.77', currency: 'USD' }));
    const usd = await payments(h, m, 'GET', '/transaction?currency=USD&amountFrom=7.00&amountTo=8.00');
    expect(usd.body.data.map((t: { amount: number }) => t.amount)).toEqual([7.77]);
    const statuses = await payments(
      h,
      m,
      'GET',
      '/transaction?transactionStatus[]=void-ok&transactionStatus[]=refund-ok&reverseSorting=0',
    );
    expect(
      statuses.body.data.every((t: { transactionStatus: string }) =>
        ['void-ok', 'refund-ok'].includes(t.transactionStatus),
      ),
    ).toBe(true);
    expect(statuses.body.data.length).toBeGreaterThanOrEqual(3);
    const byEmail = await payments(h, m, 'GET', '/transaction?email=payer@example.com&perPage=1');
    expect(byEmail.body.pagination?.totalItemCount).toBeGreaterThan(1);
    expect(byEmail.body.pagination?.pageCount).toBe(byEmail.body.pagination?.totalItemCount);
    const none = await payments(h, m, 'GET', '/transaction?email=nobody@example.com');
    expect(none.body.data).toEqual([]);
    const bad = await payments(h, m, 'GET', '/transaction?transactionType=gift');
    expect(bad.status).toBe(400);
    expect(bad.body.error?.[0]?.field).toBe('transactionType');
    const tooMany = await payments(h, m, 'GET', '/transaction?perPage=501');
    expect(tooMany.status).toBe(400);
  });
});

describe('the invoice of an order with an invoiceEmail', () => {
  const inbox = async (recipient: string) =>
    (
      await h.request<{ data: { subject: string; body: string }[] }>(
        'GET',
        `/sandbox/messages?recipient=${encodeURIComponent(recipient)}`,
        { headers: { authorization: `Bearer ${h.adminToken}` } },
      )
    ).body.data;

  it('is sent once per capture, for what was captured, and not for an authorization', async () => {
    const sale = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, { amount: '42.50', invoiceEmail: 'books@buyer.example', externalOrderId: 'inv-1' }),
    );
    expect(sale.status).toBe(201);
    const [invoice] = await inbox('books@buyer.example');
    expect(invoice?.subject).toMatch(/^Invoice for order inv-1 from /);
    expect(invoice?.body).toContain('42.50 EUR');
    expect(invoice?.body).toContain(`transaction ${sale.body.data.transactionId}`);

    const held = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, {
        amount: '80.00',
        cardTransactionMode: 'auth',
        invoiceEmail: 'held@buyer.example',
      }),
    );
    expect(held.body.data.transactionStatus).toBe('in-progress');
    expect(await inbox('held@buyer.example')).toEqual([]);
    const captured = await payments(h, m, 'PUT', `/transaction/${held.body.data.transactionId}`, {
      amount: '30.00',
    });
    expect(captured.status).toBe(200);
    const invoices = await inbox('held@buyer.example');
    expect(invoices).toHaveLength(1);
    expect(invoices[0]?.body).toContain('30.00 EUR');
    // A refund is no new invoice.
    await payments(h, m, 'DELETE', `/transaction/${held.body.data.transactionId}`, { amount: '5.00' });
    expect(await inbox('held@buyer.example')).toHaveLength(1);
  });
});
