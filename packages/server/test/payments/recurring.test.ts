// Recurring billing on the sandbox clock: three periods with one failure recovered by a retry, month-end
// anchors that do not drift, hard declines and exhausted retries that stop the order; managed rebills;
// terminating a subscription; deleting a customer ends its subscriptions and mandates.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import {
  aCustomer,
  aMerchant,
  anOrder,
  decryptIpns,
  newCard,
  payments,
  type TestMerchant,
} from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

const DAY = 86_400;
let h: Harness;
let receiver: WebhookReceiver;
let m: TestMerchant;

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  m = await aMerchant(h, { ipnUrl: receiver.url('/ipn') });
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

/** Each recurring test uses its own card number, so scripted outcomes never cross tests. */
let cardSerial = 0;
function uniqueVisa(): string {
  const body = `4242424${String(++cardSerial).padStart(8, '0')}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return body + String((10 - (sum % 10)) % 10);
}

const script = (cardNumber: string, outcomes: string[]) =>
  h.request('POST', '/sandbox/payments/cards/script', {
    headers: { authorization: `Bearer ${h.adminToken}` },
    json: { cardNumber, outcomes },
  });
const clockNow = async () =>
  new Date(
    (
      await h.request<{ now: string }>('GET', '/sandbox/clock', {
        headers: { authorization: `Bearer ${h.adminToken}` },
      })
    ).body.now,
  );
const orderOf = async (id: number) => (await payments(h, m, 'GET', `/order/${id}`)).body.data;
const depositsOf = async (orderId: number) =>
  (await payments(h, m, 'GET', `/transaction?orderId=${orderId}&reverseSorting=0&transactionType=deposit`))
    .body.data as { amount: number; transactionStatus: string; errorCode: number | null }[];

describe('recurring orders', () => {
  it('bills three periods; a failed bill is retried on the retryPayment schedule and recovers', async () => {
    const card = uniqueVisa();
    const customerId = await aCustomer(h, m);
    const res = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, {
        ...newCard(card),
        orderType: 'recurring',
        amount: '9.99',
        intervalType: 'day',
        intervalValue: '30',
        retryPayment: 'P1D,P3D',
        externalCustomData: 'plan=basic',
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body.data.cardId).toEqual(expect.any(Number));
    const { orderId } = res.body.data;
    let order = await orderOf(orderId);
    expect(order).toMatchObject({ orderStatus: 'in-progress', billedPeriods: 0 });
    const firstPayment = new Date(order.createdAt).getTime();
    expect(new Date(order.nextBillDate).getTime() - firstPayment).toBe(30 * DAY * 1000);

    // Period 2 fails (insufficient funds: retryable), the retry a day later succeeds.
    await script(card, ['insufficient_funds']);
    await h.advanceClock(30 * DAY);
    order = await orderOf(orderId);
    expect(order.orderStatus).toBe('retrying');
    expect(new Date(order.nextBillDate).getTime() - firstPayment).toBe(31 * DAY * 1000);
    await h.advanceClock(DAY);
    order = await orderOf(orderId);
    expect(order).toMatchObject({ orderStatus: 'in-progress', billedPeriods: 1 });
    // The schedule keeps to its anchor: period 3 falls 60 days after the first payment, not 30 after the retry.
    expect(new Date(order.nextBillDate).getTime() - firstPayment).toBe(60 * DAY * 1000);

    await h.advanceClock(29 * DAY);
    order = await orderOf(orderId);
    expect(order.billedPeriods).toBe(2);
    const deposits = await depositsOf(orderId);
    expect(deposits.map((t) => t.transactionStatus)).toEqual([
      'complete-ok',
      'complete-failed',
      'complete-ok',
      'complete-ok',
    ]);
    expect(deposits.every((t) => t.amount === 9.99)).toBe(true);

    // Every charge was an IPN carrying externalCustomData.
    await receiver.waitFor(4, (r) => r.body.length > 0);
    await expect
      .poll(
        () =>
          decryptIpns(receiver, m.sites[0]?.ipnSecret ?? '').filter(
            (i) => i.orderId === orderId && i.transactionId,
          ).length,
      )
      .toBe(4);
    const ipns = decryptIpns(receiver, m.sites[0]?.ipnSecret ?? '').filter((i) => i.orderId === orderId);
    expect(ipns.every((i) => i.externalCustomData === 'plan=basic')).toBe(true);
  });

  it('stops after the last retry fails, and at once on a hard decline', async () => {
    const soft = uniqueVisa();
    const customerId = await aCustomer(h, m);
    const exhausted = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, {
        ...newCard(soft),
        orderType: 'recurring',
        intervalType: 'day',
        intervalValue: '7',
        retryPayment: 'PT12H',
      }),
    );
    await script(soft, ['insufficient_funds', 'insufficient_funds']);
    await h.advanceClock(7 * DAY);
    expect((await orderOf(exhausted.body.data.orderId)).orderStatus).toBe('retrying');
    await h.advanceClock(12 * 3600);
    const stopped = await orderOf(exhausted.body.data.orderId);
    expect(stopped).toMatchObject({ orderStatus: 'complete-failed', nextBillDate: null });

    const hard = uniqueVisa();
    const declined = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, {
        ...newCard(hard),
        orderType: 'recurring',
        intervalType: 'day',
        intervalValue: '7',
        retryPayment: 'P1D,P2D',
      }),
    );
    await script(hard, ['expired_card']);
    await h.advanceClock(7 * DAY);
    expect((await orderOf(declined.body.data.orderId)).orderStatus).toBe('complete-failed');
    expect((await depositsOf(declined.body.data.orderId)).at(-1)?.errorCode).toBe(812);
  });

  it('charges a trial now and bills from firstBillDate, month-end dates clamped without drift', async () => {
    const customerId = await aCustomer(h, m);
    const now = await clockNow();
    const firstBill = new Date(Date.UTC(now.getUTCFullYear() + 1, 0, 31, 12));
    const res = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, {
        ...newCard(uniqueVisa()),
        orderType: 'recurring',
        amount: '20.00',
        trialAmount: '1.00',
        firstBillDate: firstBill.toISOString(),
        intervalType: 'month',
        intervalValue: '1',
      }),
    );
    expect(res.status).toBe(201);
    const { orderId } = res.body.data;
    expect((await depositsOf(orderId)).map((t) => t.amount)).toEqual([1]);
    let order = await orderOf(orderId);
    expect(new Date(order.nextBillDate).toISOString()).toBe(firstBill.toISOString());

    const year = firstBill.getUTCFullYear();
    const expected = [
      Date.UTC(year, 1, year % 4 === 0 ? 29 : 28, 12),
      Date.UTC(year, 2, 31, 12),
      Date.UTC(year, 3, 30, 12),
    ];
    await h.advanceClock(Math.ceil((firstBill.getTime() - now.getTime()) / 1000));
    for (const next of expected) {
      order = await orderOf(orderId);
      expect(new Date(order.nextBillDate).getTime()).toBe(next);
      await h.advanceClock(Math.ceil((next - (await clockNow()).getTime()) / 1000));
    }
    order = await orderOf(orderId);
    expect(order.billedPeriods).toBe(4);
    expect((await depositsOf(orderId)).map((t) => t.amount)).toEqual([1, 20, 20, 20, 20]);
  });

  it('terminateOrder=yes stops a subscription that has payments; plain cancel is refused', async () => {
    const customerId = await aCustomer(h, m);
    const res = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, { orderType: 'recurring', intervalType: 'month', intervalValue: '1' }),
    );
    const refused = await payments(h, m, 'DELETE', `/order/${res.body.data.orderId}`, {
      reason: 'customer-demand',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error?.[0]?.message).toMatch(/terminateOrder/);
    const stopped = await payments(h, m, 'DELETE', `/order/${res.body.data.orderId}`, {
      reason: 'customer-demand',
      terminateOrder: 'yes',
    });
    expect(stopped.body.data).toMatchObject({ orderStatus: 'canceled', nextBillDate: null });
    await h.advanceClock(40 * DAY);
    expect(await depositsOf(res.body.data.orderId)).toHaveLength(1);
  });
});

describe('managed orders', () => {
  it('rebills the stored card on the merchant’s request; declines answer 402; only managed orders', async () => {
    const card = uniqueVisa();
    const customerId = await aCustomer(h, m);
    const res = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, { ...newCard(card), orderType: 'managed' }),
    );
    expect(res.status).toBe(201);
    const { orderId, cardId } = res.body.data;
    const rebill = await payments(h, m, 'PATCH', `/order-rebill/${orderId}`, {
      customerId: String(customerId),
      amount: '4.20',
    });
    expect(rebill.status).toBe(200);
    expect(rebill.body.data).toMatchObject({ id: orderId, cardId, transactionStatus: 'complete-ok' });
    await script(card, ['decline']);
    const declined = await payments(h, m, 'PATCH', `/order-rebill/${orderId}`, {
      customerId: String(customerId),
      amount: '4.20',
    });
    expect(declined.status).toBe(402);
    expect(declined.body.data.orderId).toBe(orderId);
    const wrongCustomer = await payments(h, m, 'PATCH', `/order-rebill/${orderId}`, {
      customerId: String(await aCustomer(h, m)),
      amount: '1.00',
    });
    expect(wrongCustomer.status).toBe(400);
    expect(wrongCustomer.body.error?.[0]?.field).toBe('customerId');
    const missing = await payments(h, m, 'PATCH', `/order-rebill/${orderId}`, {
      customerId: String(customerId),
    });
    expect(missing.body.error?.[0]?.field).toBe('amount');
    const purchase = await payments(h, m, 'POST', '/order', anOrder(customerId));
    const notManaged = await payments(h, m, 'PATCH', `/order-rebill/${purchase.body.data.orderId}`, {
      customerId: String(customerId),
      amount: '1.00',
    });
    expect(notManaged.status).toBe(409);
    expect((await depositsOf(orderId)).map((t) => t.amount)).toEqual([10.9, 4.2, 4.2]);
  });
});

describe('deleting a customer', () => {
  it('cancels its recurring and managed orders and deletes its stored cards', async () => {
    const customerId = await aCustomer(h, m);
    const recurring = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, { orderType: 'recurring', intervalType: 'day', intervalValue: '1' }),
    );
    const managed = await payments(h, m, 'POST', '/order', anOrder(customerId, { orderType: 'managed' }));
    const deleted = await payments(h, m, 'DELETE', `/customer/${customerId}`);
    expect(deleted.body).toEqual({ code: 200, message: 'Success' });
    expect((await orderOf(recurring.body.data.orderId)).orderStatus).toBe('canceled');
    expect((await orderOf(managed.body.data.orderId)).orderStatus).toBe('canceled');
    const cards = await payments(h, m, 'GET', `/card?customerId=${customerId}`);
    expect(cards.body.data).toEqual([]);
    expect((await payments(h, m, 'GET', `/customer/${customerId}`)).status).toBe(404);
    await h.advanceClock(2 * DAY);
    expect(await depositsOf(recurring.body.data.orderId)).toHaveLength(1);
  });
});
