// An object's page tells its story (docs/console.md, What happened): the events about it, oldest first,
// in words, each with its webhook's state and its wire type. Snapshots of two whole lives: a payment
// authorized, captured, partly refunded, charged back and won; a payout created, sent and paid.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient } from '../harness/console-client.ts';
import { Harness } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import {
  aCustomer,
  aMerchant,
  anOrder,
  aSitePayout,
  newCard,
  payments,
} from '../harness/payments-builders.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(async () => {
  await h.close();
});

/** The timeline's entries as a person reads them: what happened, and the event's wire type */
function timeline(html: string): string[] {
  const list = /<ol class="timeline">([\s\S]*?)<\/ol>/.exec(html)?.[1] ?? '';
  return [...list.matchAll(/<strong>([^<]*)<\/strong>[\s\S]*?<code class="wire">([^<]*)<\/code>/g)].map(
    (m) => `${m[1]} (${m[2]})`,
  );
}

const sandbox = (method: string, path: string, json: Record<string, unknown>) =>
  h.request<{ disputeId: number }>(method, `/sandbox${path}`, {
    headers: { authorization: `Bearer ${h.adminToken}` },
    json,
  });

describe('what happened to an object', () => {
  it('a payment: authorized, captured, partly refunded, charged back, won', async () => {
    const m = await aMerchant(h);
    const customer = await aCustomer(h, m);
    const order = await payments<{ data: { orderId: number; transactionId: number } }>(
      h,
      m,
      'POST',
      '/order',
      anOrder(customer, { ...newCard(), amount: '100.00', cardTransactionMode: 'auth' }),
    );
    expect(order.status, order.text).toBe(201);
    const { orderId, transactionId } = order.body.data;
    expect((await payments(h, m, 'PUT', `/transaction/${transactionId}`, { amount: '100.00' })).status).toBe(
      200,
    );
    expect(
      (await payments(h, m, 'DELETE', `/transaction/${transactionId}`, { amount: '30.00' })).status,
    ).toBe(200);
    const dispute = await sandbox('POST', `/payments/transactions/${transactionId}/chargeback`, {
      reasonCode: '10.4',
    });
    expect(dispute.status, dispute.text).toBe(201);
    expect(
      (await sandbox('POST', `/payments/disputes/${dispute.body.disputeId}/decide`, { outcome: 'won' }))
        .status,
    ).toBe(200);

    const operator = await ConsoleClient.operator(h);
    const page = await operator.get(`/console/payments/orders/${orderId}`);
    const story = [
      'Payment authorized — 100.00 EUR (transaction.in-progress)',
      'Payment succeeded — 100.00 EUR (transaction.complete-ok)',
      // The deposit's IPN is sent again when a refund of it changes its amounts: said so, not hidden
      'Payment succeeded — 100.00 EUR (the same state, told again) (transaction.complete-ok)',
      'Refund succeeded — 30.00 EUR (transaction.refund-ok)',
      'Charged back by the cardholder’s bank — 70.00 EUR (transaction.charge-back)',
      'Dispute won: the chargeback reversed — 70.00 EUR (transaction.complete-ok)',
    ];
    expect(timeline(page.text)).toEqual(story);
    // The payment's own page tells the same story: every transaction of it names it
    const payment = await operator.get(`/console/payments/transactions/${transactionId}`);
    expect(timeline(payment.text)).toEqual(story);
    // Each entry links its event, with its webhook's state in words
    expect(page.text).toMatch(
      /webhook <span class="status tone-neutral" data-status="none" title="none">No endpoint<\/span> · <a href="\/console\/developers\/events\/evt_/,
    );
  });

  it('a payout: created, sent, paid', async () => {
    const { payoutId } = await aSitePayout(h, 'Timeline GmbH');
    await h.advanceClock(86_400);
    const paid = await sandbox('POST', `/bank/payouts/${payoutId}/pay`, {});
    expect(paid.status, paid.text).toBe(200);
    const operator = await ConsoleClient.operator(h);
    const page = await operator.get(`/console/money/payouts/${payoutId}`);
    expect(timeline(page.text)).toEqual([
      'Payout created (payout.created)',
      'Payout on its way (payout.in_transit)',
      'Payout paid (payout.paid)',
    ]);
  });

  it('a card: made active, frozen and unfrozen, three changes, neither read as the same told again', async () => {
    const partner = await h.admin<{ apiKey: string }>('POST', '/partners', {
      json: { name: 'Timeline partner' },
    });
    const holder = await aCardholder(h, partner.body.apiKey);
    for (const step of ['freeze', 'unfreeze']) {
      const res = await h.request('POST', `/issuing/v1/cards/${holder.cardId}/${step}`, {
        headers: await holder.relogin(),
      });
      expect(res.status, res.text).toBe(200);
    }
    const operator = await ConsoleClient.operator(h);
    const page = await operator.get(`/console/issuing/cards/${holder.cardId}`);
    // Made active, frozen, unfrozen: three changes of one type about one card
    expect(timeline(page.text).filter((entry) => entry.includes('cardStatusChanged'))).toEqual([
      'Card status changed (cardStatusChanged)',
      'Card status changed (cardStatusChanged)',
      'Card status changed (cardStatusChanged)',
    ]);
  });
});
