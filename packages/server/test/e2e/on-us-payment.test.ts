// On-us: a card issued by the issuing API, charged through the payments API, is authorized by the
// issuing side of the same platform. The cardholder answers the 3D Secure challenge in the issuing API;
// the funds move from the cardholder's account to the merchant's site; a refund goes back to the card;
// the merchant gets its IPNs and the partner its webhooks; the ledger's invariants hold.
import { issuingClient, paymentsClient } from '@tessera/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';
import {
  aCustomer,
  aMerchant,
  decryptIpns,
  payments,
  type TestMerchant,
} from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let ipnReceiver: WebhookReceiver;
let partnerReceiver: WebhookReceiver;
let partnerKey: string;
let m: TestMerchant;

beforeAll(async () => {
  h = await Harness.start();
  ipnReceiver = await WebhookReceiver.start();
  partnerReceiver = await WebhookReceiver.start();
  partnerKey = (
    await h.admin<{ apiKey: string }>('POST', '/partners', {
      json: { name: 'On-us partner', webhookUrl: partnerReceiver.url('/issuing') },
    })
  ).body.apiKey;
  m = await aMerchant(h, { ipnUrl: ipnReceiver.url('/ipn') });
});
afterAll(async () => {
  await h.close();
  await ipnReceiver.close();
  await partnerReceiver.close();
});

/** The payments API's answer to the card network's generic decline */
const DO_NOT_HONOUR = 810;

const tokenOf = (auth: Record<string, string>) => (auth.authorization ?? '').replace(/^Bearer /, '');

type Secrets = { pan: string; cvv: string; expiryMonth: number; expiryYear: number };

async function issuedCard(funds: bigint) {
  const holder = await aCardholder(h, partnerKey, funds);
  const secrets = await h.request<Secrets>('GET', `/issuing/v1/cards/${holder.cardId}/secrets`, {
    headers: holder.auth,
  });
  expect(secrets.status).toBe(200);
  const s = secrets.body;
  return {
    holder,
    card: {
      cardNumber: s.pan,
      cardExpiryDate: `${String(s.expiryMonth).padStart(2, '0')}/${String(s.expiryYear).slice(-2)}`,
      cardCvv: s.cvv,
      cardHolderName: 'On Us',
      cardHolderCountry: 'RO',
    },
  };
}

/** An order with external 3-D Secure data (cavv): the issuer does not ask the cardholder again. */
const authenticatedOrder = (customerId: number, card: Record<string, string>, amount: string) =>
  payments(h, m, 'POST', '/order', {
    amount,
    currency: 'EUR',
    orderType: 'purchase',
    customerId: String(customerId),
    cavv: 'AAABBEg0VhI0VniQEjRWAAAAAAA=',
    eci: '05',
    ...card,
  });

const siteBalance = async () =>
  (
    await h.request<{ available: string }>(
      'GET',
      `/sandbox/payments/sites/${m.sites[0]?.id}/balance?currency=EUR`,
      {
        headers: { authorization: `Bearer ${h.adminToken}` },
      },
    )
  ).body.available;

describe('an issued card charged through the payments API', () => {
  it('is challenged in the issuing API, approved by the cardholder, captured and refunded on-us (through @tessera/sdk)', async () => {
    const { holder, card } = await issuedCard(100_00n);
    const customerId = await aCustomer(h, m);
    // The merchant's server and the cardholder's app, each with the SDK's typed client.
    const merchant = paymentsClient({ baseUrl: h.baseUrl, apiKey: m.apiKey });
    const cardholder = issuingClient({ baseUrl: h.baseUrl, accessToken: tokenOf(holder.auth) });
    const created = await merchant.POST('/order', {
      body: {
        amount: '30.00',
        currency: 'EUR',
        orderType: 'purchase',
        customerId,
        externalCustomData: 'on-us',
        ...card,
      },
    });
    const order = created.data?.data;
    if (!order?.redirect) throw new Error('no challenge');
    expect(order).toMatchObject({ is3d: 1, isRedirect: true, transactionStatus: '3d-pending' });

    // The hosted ACS page waits for the cardholder instead of deciding itself.
    const acs = await h.request('POST', '/acs/challenge', { form: order.redirect.params });
    expect(acs.text).toContain('Confirm this payment in your card app');
    const sneaky = await fetch(`${h.baseUrl}/acs/challenge/decide`, {
      method: 'POST',
      body: new URLSearchParams({ creq: order.redirect.params.creq ?? '', outcome: 'approve' }),
      redirect: 'manual',
    });
    expect(sneaky.status).toBe(403);

    // The cardholder sees the challenge in the issuing API, with the merchant's site name, and approves.
    const pending = (await cardholder.GET('/transactions/3d-secure', {})).data?.data ?? [];
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ amount: '30.00', merchant: 'Site 1' });
    await cardholder.PATCH('/transactions/3d-secure/{transactionAuthId}', {
      params: { path: { transactionAuthId: pending[0]?.transactionAuthId ?? '' } },
      body: { authType: 'fingerprint', authStatus: 'success' },
    });

    const t = await merchant.GET('/transaction/{id}', { params: { path: { id: order.transactionId } } });
    expect(t.data?.data).toMatchObject({ transactionStatus: 'complete-ok', capturedAmount: 30, is3d: 1 });
    expect(await siteBalance()).toBe('30.00');
    expect((await holder.balance()).availableBalance).toBe('70.00');
    // The waiting page now sends the browser on.
    const after = await fetch(`${h.baseUrl}/acs/challenge?creq=${order.redirect.params.creq}`, {
      redirect: 'manual',
    });
    expect(after.status).toBe(303);

    // The issuing side shows a settled card payment.
    const reissued = issuingClient({ baseUrl: h.baseUrl, accessToken: tokenOf(await holder.relogin()) });
    const issued = (await reissued.GET('/transactions', {})).data?.data ?? [];
    expect(issued.find((x) => x.type === 'card_payment')).toMatchObject({
      status: 'settled',
      amount: '30.00',
    });

    // A partial refund goes back to the card.
    const refund = await merchant.DELETE('/transaction/{id}', {
      params: { path: { id: order.transactionId } },
      body: { amount: '10.00', reason: 'customer-demand' },
    });
    expect(refund.response.status).toBe(200);
    expect((await holder.balance()).availableBalance).toBe('80.00');
    expect(await siteBalance()).toBe('20.00');
    const refunds = (await reissued.GET('/transactions', { params: { query: { type: 'refund' } } })).data
      ?.data;
    expect(refunds).toEqual([
      expect.objectContaining({ type: 'refund', status: 'settled', amount: '10.00' }),
    ]);

    // IPNs for the merchant (in any order, as deliveries may arrive): challenged, captured, refunded.
    await ipnReceiver.waitFor(4);
    const ipns = decryptIpns(ipnReceiver, m.sites[0]?.ipnSecret ?? '').filter(
      (i) => i.orderId === order.orderId,
    );
    expect(ipns.map((i) => `${i.transactionType}:${i.transactionStatus}`).sort()).toEqual([
      'deposit:3d-pending',
      'deposit:complete-ok',
      'deposit:complete-ok',
      'refund:refund-ok',
    ]);
    expect(ipns.every((i) => i.externalCustomData === 'on-us')).toBe(true);
    await partnerReceiver.waitFor(1, (r) => r.body.includes('transaction3dsRequested'));
    await expectLedgerInvariants(h);
  });

  it('declines on-us for insufficient funds, and when the cardholder refuses the challenge', async () => {
    const { holder, card } = await issuedCard(5_00n);
    const customerId = await aCustomer(h, m);
    // External 3DS data (cavv) means the issuer does not ask again: straight to the balance check.
    const poor = await authenticatedOrder(customerId, card, '50.00');
    expect(poor.status).toBe(402);
    expect(poor.body.error?.[0]?.code).toBe(811);

    const refused = await payments(h, m, 'POST', '/order', {
      amount: '2.00',
      currency: 'EUR',
      orderType: 'purchase',
      customerId: String(customerId),
      ...card,
    });
    const pending = await h.request<{ data: { transactionAuthId: string }[] }>(
      'GET',
      '/issuing/v1/transactions/3d-secure',
      {
        headers: holder.auth,
      },
    );
    await h.request(
      'PATCH',
      `/issuing/v1/transactions/3d-secure/${pending.body.data[0]?.transactionAuthId}`,
      {
        headers: holder.auth,
        json: { authType: 'pinCode', authStatus: 'failed' },
      },
    );
    const t = await payments(h, m, 'GET', `/transaction/${refused.body.data.transactionId}`);
    expect(t.body.data).toMatchObject({ transactionStatus: 'complete-failed', errorCode: 813 });
    expect((await holder.balance()).availableBalance).toBe('5.00');

    // A wrong CVV matches no issued card.
    const wrong = await payments(h, m, 'POST', '/order', {
      amount: '1.00',
      currency: 'EUR',
      orderType: 'purchase',
      customerId: String(customerId),
      ...card,
      cardCvv: card.cardCvv === '000' ? '001' : '000',
    });
    expect(wrong.status).toBe(402);
    expect(wrong.body.error?.[0]?.code).toBe(816);
  });

  it('declines on-us where the card’s spending controls refuse the site (e-commerce off, the site’s id recorded)', async () => {
    const { holder, card } = await issuedCard(50_00n);
    const customerId = await aCustomer(h, m);
    const order = () => authenticatedOrder(customerId, card, '3.00');
    const set = await h.request('PUT', `/issuing/v1/cards/${holder.cardId}/spending-controls`, {
      headers: holder.auth,
      json: { channels: { ecommerce: false } },
    });
    expect(set.status).toBe(200);
    const refused = await order();
    expect(refused.status).toBe(402);
    // The merchant hears the scheme's "do not honour"; the partner's record names the control.
    expect(refused.body.error?.[0]?.code).toBe(DO_NOT_HONOUR);
    const recorded = await h.services.db
      .selectFrom('issuing_transactions')
      .select(['status', 'decline_reason', 'declined_by', 'merchant_id', 'channel'])
      .where('card_id', '=', holder.cardId)
      .executeTakeFirstOrThrow();
    expect(recorded).toEqual({
      status: 'declined',
      decline_reason: 'spending_control',
      declined_by: 'cardholder.channels',
      merchant_id: `site:${m.sites[0]?.id}`,
      channel: 'ecommerce',
    });
    await h.request('PUT', `/issuing/v1/cards/${holder.cardId}/spending-controls`, {
      headers: holder.auth,
      json: {},
    });
    expect((await order()).status).toBe(201);
    expect((await holder.balance()).availableBalance).toBe('47.00');
  });

  it('meets a card’s category and country controls with the site’s MCC and country, as set by the operator', async () => {
    const { holder, card } = await issuedCard(50_00n);
    const customerId = await aCustomer(h, m);
    const site = m.sites[0]?.id as number;
    const order = () => authenticatedOrder(customerId, card, '2.00');
    const updated = await h.admin<{ mcc: string | null; country: string | null }>(
      'PATCH',
      `/merchants/${m.id}/sites/${site}`,
      { json: { mcc: '7995', country: 'MT' } },
    );
    expect(updated.body).toMatchObject({ mcc: '7995', country: 'MT' });
    const bad = await h.admin<{ error: { field?: string } }>('PATCH', `/merchants/${m.id}/sites/${site}`, {
      json: { mcc: '79', country: 'malta' },
    });
    expect(bad.status).toBe(400);
    // Gambling (7995) blocked by the partner: the on-us authorization carries the site's category.
    const byCategory = await h.request('PUT', `/issuing/v1/cards/${holder.cardId}/spending-controls`, {
      headers: { 'x-partner-api-key': partnerKey },
      json: { blockedMccs: ['7995'] },
    });
    expect(byCategory.status, byCategory.text).toBe(200);
    expect((await order()).status).toBe(402);
    await h.request('PUT', `/issuing/v1/cards/${holder.cardId}/spending-controls`, {
      headers: { 'x-partner-api-key': partnerKey },
      json: { allowedCountries: ['RO', 'DE'] },
    });
    expect((await order()).status).toBe(402);
    const declined = await h.services.db
      .selectFrom('issuing_transactions')
      .select(['declined_by', 'mcc', 'merchant_country'])
      .where('card_id', '=', holder.cardId)
      .orderBy('created_at')
      .execute();
    expect(declined).toEqual([
      { declined_by: 'card.blockedMccs', mcc: '7995', merchant_country: 'MT' },
      { declined_by: 'card.allowedCountries', mcc: '7995', merchant_country: 'MT' },
    ]);
    // The site moves to an allowed country: the same card pays there.
    await h.admin('PATCH', `/merchants/${m.id}/sites/${site}`, { json: { country: 'RO' } });
    expect((await order()).status).toBe(201);
    await h.admin('PATCH', `/merchants/${m.id}/sites/${site}`, { json: { mcc: null, country: null } });
  });
});
