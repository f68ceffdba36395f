// Risk rules on money out (docs/risk.md, decision points `payout` and `bank_account.change`), through the
// real admin, payments and crypto routes: a payout held for a person (released to the bank when approved,
// failed with its money back when refused), one blocked (nothing made, the decision recorded), the
// scheduled run under a block; a bank account change held (payouts keep going to the account in place
// until it is approved) or blocked; velocity per tenant; the sandbox's test names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aStore } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments, type TestMerchant } from '../harness/payments-builders.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(() => h.close());

const DE = 'DE89370400440532013000';
const FR = 'FR1420041010050500013M02606';

type Payout = { id: string; status: string; amount: string; failureCode: string | null };
type Review = { id: string; objectId: string; decisionPoint: string; ruleName: string; status: string };
type Decision = { objectId: string; action: string; acted: boolean; attributes: Record<string, unknown> };

const siteOf = (shop: TestMerchant) => shop.sites[0]?.id as number;

/** A merchant whose site has captured `amount`, available at once, with a bank account held by `holder` */
async function aPaidSite(amount: string, holder = 'Careful Shop'): Promise<TestMerchant> {
  const shop = await aMerchant(h);
  await h.admin('PUT', `/merchants/${shop.id}/sites/${siteOf(shop)}/payout-schedule`, {
    json: { interval: 'manual', delayDays: 0, minimum: '1.00' },
  });
  expect(
    (
      await h.admin('PUT', `/merchants/${shop.id}/sites/${siteOf(shop)}/bank-account`, {
        json: { iban: DE, holderName: holder },
      })
    ).status,
  ).toBe(200);
  await capture(shop, amount);
  return shop;
}

async function capture(shop: TestMerchant, amount: string) {
  const customer = await aCustomer(h, shop);
  expect((await payments(h, shop, 'POST', '/order', anOrder(customer, { amount }))).status).toBe(201);
}

const rule = async (fields: Record<string, unknown>) => {
  const saved = await h.admin<{ id: string }>('POST', '/risk/rules', {
    json: { name: `rule ${Math.random().toString(36).slice(2, 8)}`, ...fields },
  });
  expect(saved.status, saved.text).toBe(201);
  return saved.body.id;
};

const payNow = (shop: TestMerchant) =>
  payments(h, shop, 'POST', '/payout', { siteId: String(siteOf(shop)), currency: 'EUR' });

const payoutsOf = async (shop: TestMerchant) =>
  (await payments(h, shop, 'GET', `/payout?siteId=${siteOf(shop)}`)).body.data as Payout[];

const reviewsOf = async (tenant: string) =>
  (await h.admin<{ data: Review[] }>('GET', `/risk/reviews?tenant=${encodeURIComponent(tenant)}`)).body.data;

const decisionsOf = async (query: string) =>
  (await h.admin<{ data: Decision[] }>('GET', `/risk/decisions?${query}`)).body.data;

const putBankAccount = (shop: TestMerchant, iban: string, holderName: string) =>
  h.request<{ data: { iban: string; country: string; status: string } }>(
    'PUT',
    `/payments/site/${siteOf(shop)}/bank-account`,
    { headers: shop.auth, json: { iban, holderName } },
  );

const bankAccountOf = async (shop: TestMerchant) =>
  (
    await h.request<{ data: { country: string; holderName: string; status: string } }>(
      'GET',
      `/payments/site/${siteOf(shop)}/bank-account`,
      { headers: shop.auth },
    )
  ).body.data;

describe('rules at payout', () => {
  it('holds a payout for a person: not sent until approved, then released to the bank', async () => {
    const shop = await aPaidSite('250.00');
    await rule({
      decisionPoint: 'payout',
      action: 'hold',
      scope: { kind: 'merchant', id: String(shop.id) },
      expression: 'amount >= 20000 && bank_account.age_days < 2 && tenant.kind == "site"',
    });
    const made = await payNow(shop);
    expect(made.status, made.text).toBe(201);
    expect(made.body.data).toMatchObject({ status: 'held', amount: '250.00' });
    // The bank's day passes: a held payout is not sent.
    await h.advanceClock(86_400);
    expect(await payoutsOf(shop)).toMatchObject([{ id: made.body.data.id, status: 'held' }]);
    const [review] = await reviewsOf(`merchant:${shop.id}`);
    expect(review).toMatchObject({ decisionPoint: 'payout', objectId: made.body.data.id, status: 'pending' });
    const [decision] = await decisionsOf(`objectId=${made.body.data.id}`);
    expect(decision).toMatchObject({
      action: 'hold',
      acted: true,
      attributes: {
        amount: 25000,
        payout: { itemized: true, scheduled: false },
        bank_account: { country: 'DE', age_days: 0, holder_name: 'Careful Shop' },
        tenant: { kind: 'site', id: String(siteOf(shop)), age_days: 0 },
      },
    });

    const approved = await h.admin('POST', `/risk/reviews/${review?.id}/approve`);
    expect(approved.status, approved.text).toBe(200);
    await h.advanceClock(1);
    expect((await payoutsOf(shop))[0]?.status).toBe('in_transit');
    const events = await h.admin<{ data: { type: string }[] }>(
      'GET',
      `/events?objectId=${made.body.data.id}&limit=10`,
    );
    expect(events.body.data.map((e) => e.type)).toContain('payout.released');
  });

  it('a refused hold fails the payout with its money back in the balance, paid by the next payout', async () => {
    const shop = await aPaidSite('80.00', 'Risk Payout Hold');
    // No rule: the sandbox's test name holds it.
    const made = await payNow(shop);
    expect(made.body.data).toMatchObject({ status: 'held', amount: '80.00' });
    const [review] = await reviewsOf(`merchant:${shop.id}`);
    expect(review?.ruleName).toBe('sandbox test value Risk Payout Hold');
    const refused = await h.admin('POST', `/risk/reviews/${review?.id}/refuse`);
    expect(refused.status, refused.text).toBe(200);
    expect((await payoutsOf(shop))[0]).toMatchObject({ status: 'failed', failureCode: 'risk_refused' });
    // Decided once: a second decision is a 409.
    expect((await h.admin('POST', `/risk/reviews/${review?.id}/approve`)).status).toBe(409);
    await h.admin('PUT', `/merchants/${shop.id}/sites/${siteOf(shop)}/bank-account`, {
      json: { iban: DE, holderName: 'Careful Shop' },
    });
    const again = await payNow(shop);
    expect(again.body.data).toMatchObject({ status: 'pending', amount: '80.00' });
  });

  it('blocks a payout: nothing made, the balance unchanged, the decision recorded', async () => {
    const shop = await aPaidSite('40.00');
    const ruleId = await rule({
      decisionPoint: 'payout',
      action: 'block',
      scope: { kind: 'merchant', id: String(shop.id) },
      expression: 'bank_account.country == "DE" && amount > 1000',
    });
    const refused = await payNow(shop);
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.error?.[0]?.message).toBe('this payout cannot be made; contact the platform');
    expect(refused.text).not.toContain(ruleId);
    expect(await payoutsOf(shop)).toEqual([]);
    const decisions = await decisionsOf(`ruleId=${ruleId}`);
    expect(decisions).toMatchObject([{ action: 'block', acted: true, attributes: { amount: 4000 } }]);

    // The scheduled run meets the same rule: no payout, recorded again; the money stays available.
    await h.admin('PUT', `/merchants/${shop.id}/sites/${siteOf(shop)}/payout-schedule`, {
      json: { interval: 'daily', delayDays: 0, minimum: '1.00' },
    });
    const run = await h.admin<{ payouts: { siteId: number }[] }>('POST', '/payout-runs');
    expect(run.status, run.text).toBe(200);
    expect(run.body.payouts.some((p) => p.siteId === siteOf(shop))).toBe(false);
    expect(await decisionsOf(`ruleId=${ruleId}`)).toHaveLength(2);
    const balance = await payments(h, shop, 'GET', `/balance?siteId=${siteOf(shop)}`);
    expect(balance.body.data).toMatchObject([{ currency: 'EUR', available: '40.00' }]);
  });

  it('reads the tenant’s payout velocity: a second payout within a day is held', async () => {
    const shop = await aPaidSite('30.00');
    await rule({
      decisionPoint: 'payout',
      action: 'hold',
      scope: { kind: 'merchant', id: String(shop.id) },
      expression: 'velocity.tenant.count_24h >= 1',
    });
    const first = await payNow(shop);
    expect(first.body.data?.status, JSON.stringify(first.body)).toBe('pending');
    await capture(shop, '12.00');
    // A tenant's windows are whole minutes that ended a minute ago (docs/risk.md): two minutes later
    await h.advanceClock(120);
    const second = await payNow(shop);
    expect(second.body.data).toMatchObject({ status: 'held', amount: '12.00' });
  });

  it('refuses a rule of another decision point’s action or tenant kind', async () => {
    const shop = await aMerchant(h);
    const wrongAction = await h.admin<{ error: { field: string } }>('POST', '/risk/rules', {
      json: {
        name: 'review a payout',
        decisionPoint: 'payout',
        action: 'review',
        scope: { kind: 'merchant', id: String(shop.id) },
        expression: 'true',
      },
    });
    expect(wrongAction.status).toBe(400);
    expect(wrongAction.body.error.field).toBe('action');
    const partner = await h.admin<{ id: string }>('POST', '/partners', { json: { name: 'Cards' } });
    const wrongTenant = await h.admin<{ error: { field: string } }>('POST', '/risk/rules', {
      json: {
        name: 'a partner’s payout rule',
        decisionPoint: 'bank_account.change',
        action: 'hold',
        scope: { kind: 'partner', id: partner.body.id },
        expression: 'true',
      },
    });
    expect(wrongTenant.status).toBe(400);
    expect(wrongTenant.body.error.field).toBe('scope.kind');
  });
});

describe('rules at bank_account.change', () => {
  it('holds a change of country: payouts go to the account in place until a person approves it', async () => {
    const shop = await aPaidSite('25.00');
    await rule({
      decisionPoint: 'bank_account.change',
      action: 'hold',
      scope: { kind: 'merchant', id: String(shop.id) },
      expression: '!bank_account.first && country != bank_account.previous_country',
    });
    const held = await putBankAccount(shop, FR, 'Careful Shop SAS');
    expect(held.status, held.text).toBe(202);
    expect(held.body.data).toMatchObject({ country: 'FR', status: 'held' });
    expect(held.text).not.toContain(FR);
    expect(await bankAccountOf(shop)).toMatchObject({ country: 'DE', status: 'active' });
    const made = await payNow(shop);
    expect(made.body.data.bankAccount.iban).toMatch(/^DE89/);

    const [review] = await reviewsOf(`merchant:${shop.id}`);
    expect(review).toMatchObject({ decisionPoint: 'bank_account.change', status: 'pending' });
    const [decision] = await decisionsOf(`objectId=${review?.objectId}`);
    expect(decision?.attributes).toMatchObject({
      country: 'FR',
      bank_account: { first: false, previous_country: 'DE', previous_age_days: 0 },
    });
    expect((await h.admin('POST', `/risk/reviews/${review?.id}/approve`)).status).toBe(200);
    expect(await bankAccountOf(shop)).toMatchObject({
      country: 'FR',
      holderName: 'Careful Shop SAS',
      status: 'active',
    });
  });

  it('a refused change is dropped; a blocked one is a 403 and changes nothing', async () => {
    const shop = await aPaidSite('10.00');
    const held = await putBankAccount(shop, FR, 'Risk Change Hold');
    expect(held.status).toBe(202);
    const [review] = await reviewsOf(`merchant:${shop.id}`);
    expect((await h.admin('POST', `/risk/reviews/${review?.id}/refuse`)).status).toBe(200);
    expect(await bankAccountOf(shop)).toMatchObject({ country: 'DE', holderName: 'Careful Shop' });

    const blocked = await putBankAccount(shop, FR, 'Risk Change Block');
    expect(blocked.status, blocked.text).toBe(403);
    expect(await bankAccountOf(shop)).toMatchObject({ country: 'DE' });
  });

  it('a store’s rule blocks its change through the crypto API, in JSON:API errors', async () => {
    const store = await aStore(h);
    await rule({
      decisionPoint: 'bank_account.change',
      action: 'block',
      scope: { kind: 'store', id: store.id },
      expression: 'country == "FR"',
    });
    const put = (iban: string) =>
      h.request<{ data?: { attributes: { status: string } }; errors?: { status: string }[] }>(
        'PUT',
        '/crypto/api/stores/bank_account',
        { headers: store.auth, json: { data: { attributes: { iban, holder_name: 'Coins Ltd' } } } },
      );
    const blocked = await put(FR);
    expect(blocked.status, blocked.text).toBe(403);
    expect(blocked.body.errors?.[0]?.status).toBe('403');
    const set = await put(DE);
    expect(set.status, set.text).toBe(200);
    expect(set.body.data?.attributes.status).toBe('active');
  });
});
