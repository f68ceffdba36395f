// TESSERA_ONBOARDING_REQUIRED=charges (docs/compliance.md, Onboarding): a merchant or a store takes no
// charge until its business profile is approved — a payments order and a crypto order are refused in each
// API's own error envelope, naming the reason, with nothing written — and takes them once it is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anOrder as aCryptoOrder, aStore, orderDocument } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aMerchant, anOrder, aCustomer as aPayer, payments } from '../harness/payments-builders.ts';

const PROFILE = {
  legalName: 'Harbour Lights SRL',
  registrationNumber: 'J13/777/2024',
  country: 'RO',
  address: { line1: 'Str. Portului 2', city: 'Constanța', postalCode: '900002', country: 'RO' },
  mcc: '5812',
  owners: [],
  directors: [{ name: 'Andrei Pavel', dateOfBirth: '1985-09-12', nationality: 'RO' }],
};

let h: Harness;
beforeAll(async () => {
  h = await Harness.start({ env: { TESSERA_ONBOARDING_REQUIRED: 'charges' } });
});
afterAll(() => h.close());

const approve = async (path: string) => {
  expect((await h.admin('PUT', path, { json: PROFILE })).status).toBe(200);
  expect((await h.admin('POST', `${path}/submit`)).status).toBe(200);
  expect(
    (await h.admin('POST', `${path}/decision`, { json: { decision: 'approved', reason: 'checked' } })).status,
  ).toBe(200);
};

describe('charges wait for onboarding', () => {
  it('refuses a merchant’s order until its profile is approved, writing nothing', async () => {
    const m = await aMerchant(h);
    const payer = await aPayer(h, m);
    const refused = await payments(h, m, 'POST', '/order', anOrder(payer));
    expect(refused.status).toBe(403);
    expect(refused.text).toMatch(/business profile is approved/);
    const orders = await h.services.db
      .selectFrom('payments_orders')
      .select('id')
      .where('merchant_id', '=', m.id)
      .execute();
    expect(orders).toEqual([]);
    // Submitted is not approved
    await h.admin('PUT', `/merchants/${m.id}/business-profile`, { json: PROFILE });
    expect((await payments(h, m, 'POST', '/order', anOrder(payer))).status).toBe(403);
    await h.admin('POST', `/merchants/${m.id}/business-profile/submit`);
    await h.admin('POST', `/merchants/${m.id}/business-profile/decision`, {
      json: { decision: 'approved', reason: 'registry extract checked' },
    });
    expect((await payments(h, m, 'POST', '/order', anOrder(payer))).status).toBe(201);
  });

  it('refuses a store’s order until its profile is approved', async () => {
    const store = await aStore(h);
    const refused = await h.request<{ errors?: unknown[] }>('POST', '/crypto/api/stores/orders', {
      headers: store.auth,
      json: orderDocument(),
    });
    expect(refused.status).toBe(403);
    expect(refused.text).toMatch(/business profile is approved/);
    await approve(`/stores/${store.id}/business-profile`);
    expect((await aCryptoOrder(h, store)).id).toBeTruthy();
  });
});
