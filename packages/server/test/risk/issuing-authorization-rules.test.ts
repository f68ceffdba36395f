// Risk rules at issuing.authorization and issuing.topup (docs/risk.md), through the real admin, sandbox and issuing routes: a
// partner's rule declines (the wire's declined transaction, no rule named to the cardholder) or asks for 3-D
// Secure; shadow rules only recorded; velocity per card; the platform's rules for every partner; every
// authorization's signal kept whether or not a rule exists; a backtest over the recorded history.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aCardholder, aCustomer, anAccount } from '../harness/issuing-builders.ts';
import { FUTURE_EXPIRY } from '../harness/payments-builders.ts';

let h: Harness;
let partner: { id: string; apiKey: string };
beforeAll(async () => {
  h = await Harness.start();
  partner = (await h.admin<typeof partner>('POST', '/partners', { json: { name: 'Risky cards' } })).body;
});
afterAll(() => h.close());

type Tx = {
  transactionId: string;
  status: string;
  declineReason: string | null;
  threeDS: { status: string } | null;
};
type AdminError = { error: { code: string; field?: string; details?: Record<string, number> } };

const rule = (fields: Record<string, unknown>) =>
  h.admin<{ id: string } & AdminError>('POST', '/risk/rules', {
    json: {
      name: `rule ${Math.random().toString(36).slice(2, 8)}`,
      decisionPoint: 'issuing.authorization',
      action: 'decline',
      scope: { kind: 'partner', id: partner.id },
      ...fields,
    },
  });

const authorize = async (cardId: string, amount: string, extra: Record<string, unknown> = {}) =>
  (
    await h.request<Tx>('POST', '/sandbox/issuing/authorizations', {
      headers: { authorization: `Bearer ${h.adminToken}` },
      json: {
        cardId,
        amount,
        currency: 'EUR',
        merchant: 'Lucky Bets',
        mcc: '7995',
        channel: 'ecommerce',
        ...extra,
      },
    })
  ).body;

const now = async () =>
  (
    await h.request<{ now: string }>('GET', '/sandbox/clock', {
      headers: { authorization: `Bearer ${h.adminToken}` },
    })
  ).body.now;

describe('rules at issuing.authorization', () => {
  it('declines by a partner’s rule, recorded with the attributes it read, the card remembered or not', async () => {
    const holder = await aCardholder(h, partner.apiKey);
    // Authorized first with no rule: the card is then remembered for the one-statement way.
    expect((await authorize(holder.cardId, '1.00')).status).toBe('authorized');
    const declining = await rule({
      name: 'no gambling abroad',
      expression: 'issuing.mcc == "7995" && amount > 500',
    });
    expect(declining.status).toBe(201);

    const refused = await authorize(holder.cardId, '6.00');
    expect(refused).toMatchObject({ status: 'declined', declineReason: 'risk_declined' });
    expect(JSON.stringify(refused)).not.toMatch(/gambling|rr_/);
    expect((await holder.balance()).availableBalance).toBe('99.00');
    const decisions = await h.admin<{ data: Record<string, unknown>[] }>(
      'GET',
      `/risk/decisions?objectId=${refused.transactionId}`,
    );
    expect(decisions.body.data).toEqual([
      expect.objectContaining({
        ruleId: declining.body.id,
        ruleName: 'no gambling abroad',
        action: 'decline',
        acted: true,
        tenant: `partner:${partner.id}`,
        decisionPoint: 'issuing.authorization',
        attributes: expect.objectContaining({
          amount: 600,
          issuing: expect.objectContaining({
            mcc: '7995',
            channel: 'ecommerce',
            merchant_name: 'Lucky Bets',
          }),
          customer: { id: holder.customerId, age_days: 0, country: '' },
          account: expect.objectContaining({ age_days: 0 }),
        }),
      }),
    ]);
    expect((await authorize(holder.cardId, '6.00', { mcc: '5411' })).status).toBe('authorized');
    await h.admin('DELETE', `/risk/rules/${declining.body.id}`);
  });

  it('reads the cardholder’s country of residence from their KYC, the card remembered or not', async () => {
    const holder = await aCardholder(h, partner.apiKey, 10_000n, { residence: 'RO' });
    const abroad = await rule({
      name: 'spent abroad',
      expression: 'issuing.merchant_country != "" && issuing.merchant_country != customer.country',
    });
    expect(abroad.status, abroad.text).toBe(201);
    expect((await authorize(holder.cardId, '1.00', { merchantCountry: 'RO' })).status).toBe('authorized');
    const refused = await authorize(holder.cardId, '1.00', { merchantCountry: 'US' });
    expect(refused).toMatchObject({ status: 'declined', declineReason: 'risk_declined' });
    const decisions = await h.admin<{ data: { attributes: Record<string, unknown> }[] }>(
      'GET',
      `/risk/decisions?objectId=${refused.transactionId}`,
    );
    expect(decisions.body.data[0]?.attributes.customer).toEqual({
      id: holder.customerId,
      age_days: 0,
      country: 'RO',
    });
    await h.admin('DELETE', `/risk/rules/${abroad.body.id}`);
  });

  it('asks the cardholder for 3-D Secure by a challenge rule, and only records a shadow rule', async () => {
    const holder = await aCardholder(h, partner.apiKey);
    const challenging = await rule({
      action: 'challenge',
      expression: 'issuing.channel == "ecommerce" && amount >= 2000',
    });
    const shadow = await rule({ mode: 'shadow', expression: 'issuing.merchant_country == "KP"' });
    const challenged = await authorize(holder.cardId, '20.00');
    expect(challenged).toMatchObject({ status: 'pending_3ds', threeDS: { status: 'pending' } });
    expect((await authorize(holder.cardId, '20.00', { channel: 'pos' })).status).toBe('authorized');

    const watched = await authorize(holder.cardId, '1.00', { merchantCountry: 'KP' });
    expect(watched.status).toBe('authorized');
    const recorded = await h.admin<{ data: Record<string, unknown>[] }>(
      'GET',
      `/risk/decisions?ruleId=${shadow.body.id}`,
    );
    expect(recorded.body.data).toEqual([
      expect.objectContaining({ objectId: watched.transactionId, mode: 'shadow', acted: false }),
    ]);
    await h.admin('DELETE', `/risk/rules/${challenging.body.id}`);
    await h.admin('DELETE', `/risk/rules/${shadow.body.id}`);
  });

  it('counts velocity per card, and applies the platform’s rules to every partner', async () => {
    const holder = await aCardholder(h, partner.apiKey);
    const fast = await rule({ expression: 'velocity.card.count_10m >= 3' });
    const statuses = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await authorize(holder.cardId, '1.00', { mcc: '5411' })).status);
    expect(statuses).toEqual(['authorized', 'authorized', 'authorized', 'declined', 'declined']);
    await h.advanceClock(601);
    expect((await authorize(holder.cardId, '1.00', { mcc: '5411' })).status).toBe('authorized');
    await h.admin('DELETE', `/risk/rules/${fast.body.id}`);

    const other = (await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Other' } })).body;
    const stranger = await aCardholder(h, other.apiKey);
    const everywhere = await rule({
      scope: { kind: 'platform' },
      expression: 'issuing.merchant_id == "mule-shop"',
    });
    expect((await authorize(stranger.cardId, '1.00', { merchantId: 'mule-shop' })).declineReason).toBe(
      'risk_declined',
    );
    expect((await authorize(holder.cardId, '1.00', { merchantId: 'mule-shop' })).declineReason).toBe(
      'risk_declined',
    );
    await h.admin('DELETE', `/risk/rules/${everywhere.body.id}`);
  });

  it('refuses a rule with another point’s action, scope or attribute (400 naming it)', async () => {
    const blocked = await rule({ action: 'block', expression: 'amount > 1' });
    expect([blocked.status, blocked.body.error.field]).toEqual([400, 'action']);
    const merchant = await rule({ scope: { kind: 'merchant', id: '1' }, expression: 'amount > 1' });
    expect([merchant.status, merchant.body.error.field]).toEqual([400, 'scope.kind']);
    const typo = await rule({ expression: 'issuing.mccc == "7995"' });
    expect(typo.status).toBe(400);
    expect(typo.body.error).toMatchObject({ field: 'expression', details: { position: expect.any(Number) } });
    const paymentsOnly = await rule({ expression: 'card.bin == "400000"' });
    expect([paymentsOnly.status, paymentsOnly.body.error.field]).toEqual([400, 'expression']);
  });
});

describe('the sandbox’s test values at issuing.authorization', () => {
  it('decline or challenge an authorization from a test merchant id with no rule written', async () => {
    const holder = await aCardholder(h, partner.apiKey);
    expect(await authorize(holder.cardId, '1.00', { merchantId: 'risk-decline', mcc: '5411' })).toMatchObject(
      {
        status: 'declined',
        declineReason: 'risk_declined',
      },
    );
    expect(
      await authorize(holder.cardId, '1.00', { merchantId: 'risk-challenge', mcc: '5411' }),
    ).toMatchObject({
      status: 'pending_3ds',
    });
    expect((await authorize(holder.cardId, '1.00', { merchantId: 'corner-shop', mcc: '5411' })).status).toBe(
      'authorized',
    );
  });
});

describe('history at issuing.authorization', () => {
  it('keeps every authorization’s signal with no rule, and backtests a draft rule over it', async () => {
    const holder = await aCardholder(h, partner.apiKey);
    // The period starts after the other tests' authorizations (the sandbox clock stands still between them).
    await h.advanceClock(1);
    const from = await now();
    await authorize(holder.cardId, '3.00', { mcc: '5411' });
    await authorize(holder.cardId, '4.00');
    await authorize(holder.cardId, '5.00', { threeDS: true });
    const signals = await h.services.db
      .selectFrom('risk_signals')
      .select(['object_id', 'declined'])
      .where('decision_point', '=', 'issuing.authorization')
      .where('customer_id', '=', holder.customerId)
      .execute();
    expect(signals).toHaveLength(3);
    await h.advanceClock(60);
    const backtest = await h.admin<Record<string, unknown>>('POST', '/risk/rules/backtest', {
      json: {
        scope: { kind: 'partner', id: partner.id },
        decisionPoint: 'issuing.authorization',
        expression: 'issuing.mcc == "7995"',
        from,
        to: await now(),
      },
    });
    expect(backtest.status).toBe(200);
    expect(backtest.body).toMatchObject({ evaluated: 3, matched: 2, matchedAmounts: { EUR: '9.00' } });
  });
});

describe('rules at issuing.topup', () => {
  const topupRule = (fields: Record<string, unknown>) => rule({ decisionPoint: 'issuing.topup', ...fields });

  const fiatTopup = (auth: Record<string, string>, accountId: string, amount: string) =>
    h.request<{ topupId: string; paymentUrl: string; error?: { code: string } }>(
      'POST',
      '/issuing/v1/topups/fiat',
      { headers: { ...auth, accept: 'application/json' }, json: { accountId, amount } },
    );

  it('declines a topup by a partner’s rule: a 403 naming no rule, nothing written, the decision kept', async () => {
    const customer = await aCustomer(h, partner.apiKey, { residence: 'PT' });
    const accountId = await anAccount(h, customer.auth);
    const declining = await topupRule({
      name: 'large first topups',
      action: 'decline',
      expression: 'amount >= 100000 && customer.age_days < 1 && topup.method == "bank_transfer"',
    });
    expect(declining.status, declining.text).toBe(201);
    const refused = await fiatTopup(customer.auth, accountId, '1500.00');
    expect(refused.status, refused.text).toBe(403);
    expect(refused.text).not.toContain(declining.body.id);
    const listed = await h.request<{ data: unknown[] }>('GET', '/issuing/v1/topups', {
      headers: customer.auth,
    });
    expect(listed.body.data).toEqual([]);
    const decisions = await h.admin<{ data: { attributes: Record<string, unknown> }[] }>(
      'GET',
      `/risk/decisions?ruleId=${declining.body.id}`,
    );
    expect(decisions.body.data[0]?.attributes).toMatchObject({
      amount: 150000,
      currency: 'EUR',
      topup: { method: 'bank_transfer' },
      customer: { id: customer.customerId, age_days: 0, country: 'PT' },
      account: { id: accountId },
    });
    expect((await fiatTopup(customer.auth, accountId, '15.00')).status).toBe(201);
  });

  it('the sandbox’s test amounts decline (666.00) or challenge (777.00) a topup with no rule', async () => {
    const other = await h.admin<{ id: string; apiKey: string }>('POST', '/partners', {
      json: { name: 'Unruled' },
    });
    const customer = await aCustomer(h, other.body.apiKey);
    const accountId = await anAccount(h, customer.auth);
    const declined = await fiatTopup(customer.auth, accountId, '666.00');
    expect(declined.status, declined.text).toBe(403);
    const challenged = await fiatTopup(customer.auth, accountId, '777.00');
    expect(challenged.status, challenged.text).toBe(201);
    const paid = await fetch(challenged.body.paymentUrl, {
      method: 'POST',
      body: new URLSearchParams({
        cardHolderName: 'Ada Lovelace',
        cardNumber: '4111111111111111',
        cardExpiryDate: FUTURE_EXPIRY,
        cardCvv: '123',
      }),
      redirect: 'manual',
    });
    expect(await paid.text()).toContain('/acs/challenge');
    const decisions = await h.admin<{ data: { ruleName: string; action: string }[] }>(
      'GET',
      `/risk/decisions?objectId=${challenged.body.topupId}`,
    );
    expect(decisions.body.data).toMatchObject([
      { ruleName: 'sandbox test value 77700', action: 'challenge' },
    ]);
  });

  it('challenges a topup: its payment by card asks for 3-D Secure, which the issuer would not', async () => {
    const customer = await aCustomer(h, partner.apiKey);
    const accountId = await anAccount(h, customer.auth);
    expect(
      (
        await topupRule({
          name: 'card topups authenticated',
          action: 'challenge',
          expression: 'amount >= 2500',
        })
      ).status,
    ).toBe(201);
    const topup = await fiatTopup(customer.auth, accountId, '30.00');
    expect(topup.status, topup.text).toBe(201);
    // 4111… is approved without a challenge when nobody asks for one.
    const paid = await fetch(topup.body.paymentUrl, {
      method: 'POST',
      body: new URLSearchParams({
        cardHolderName: 'Ada Lovelace',
        cardNumber: '4111111111111111',
        cardExpiryDate: FUTURE_EXPIRY,
        cardCvv: '123',
      }),
      redirect: 'manual',
    });
    expect(await paid.text()).toContain('/acs/challenge');
    const small = await fiatTopup(customer.auth, accountId, '10.00');
    const plain = await fetch(small.body.paymentUrl, {
      method: 'POST',
      body: new URLSearchParams({
        cardHolderName: 'Ada Lovelace',
        cardNumber: '4111111111111111',
        cardExpiryDate: FUTURE_EXPIRY,
        cardCvv: '123',
      }),
      redirect: 'manual',
    });
    expect(plain.status).toBe(303);
  });
});
