// The bank account payouts go to, in each API that has one (Tessera's own routes, docs/payouts.md): the
// payments API per site, the crypto API per store, and the operator's admin API for both. IBAN and BIC are
// checked (ibantools), the IBAN is kept encrypted and answered masked, and a tenant sees only its own.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aStore, type TestStore } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aMerchant, type TestMerchant } from '../harness/payments-builders.ts';

const IBAN = 'DE89370400440532013000';
const PRINTED = 'de89 3704 0044 0532 0130 00';
const MASKED = 'DE89**************3000';

let h: Harness;
let m: TestMerchant;
let other: TestMerchant;
let store: TestStore;
let otherStore: TestStore;

beforeAll(async () => {
  h = await Harness.start();
  m = await aMerchant(h, { sites: 2 });
  other = await aMerchant(h);
  store = await aStore(h);
  otherStore = await aStore(h);
});
afterAll(() => h.close());

const siteAccount = (merchant: TestMerchant, siteId: number, json?: unknown) =>
  h.request<{ code: number; data: Record<string, unknown>; error?: { field: string }[] }>(
    json === undefined ? 'GET' : 'PUT',
    `/payments/site/${siteId}/bank-account`,
    { headers: merchant.auth, ...(json === undefined ? {} : { json }) },
  );

const storeAccount = (s: TestStore, attributes?: Record<string, unknown>) =>
  h.request<{
    data: { type: string; attributes: Record<string, unknown> };
    errors?: { source?: { pointer?: string }; detail: string }[];
  }>(attributes === undefined ? 'GET' : 'PUT', '/crypto/api/stores/bank_account', {
    headers: { ...s.auth, 'content-type': 'application/vnd.api+json' },
    ...(attributes === undefined
      ? {}
      : { body: JSON.stringify({ data: { type: 'bank_accounts', attributes } }) }),
  });

describe('payments: /site/{siteId}/bank-account', () => {
  it('sets an IBAN as people write it, answers it masked, reads it back', async () => {
    const siteId = m.sites[0]?.id ?? 0;
    expect((await siteAccount(m, siteId)).status).toBe(404);
    const set = await siteAccount(m, siteId, {
      iban: PRINTED,
      bic: 'cobadeffxxx',
      holderName: ' Shop GmbH ',
    });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({
      siteId,
      iban: MASKED,
      country: 'DE',
      bic: 'COBADEFFXXX',
      holderName: 'Shop GmbH',
    });
    expect(set.text).not.toContain('370400440532013000');
    expect((await siteAccount(m, siteId)).body.data).toMatchObject({ iban: MASKED, bic: 'COBADEFFXXX' });
    // Replaced; BIC left out (SEPA routes by IBAN).
    const replaced = await siteAccount(m, siteId, {
      iban: 'FR1420041010050500013M02606',
      holderName: 'Shop SAS',
    });
    expect(replaced.body.data).toMatchObject({
      iban: 'FR14*******************2606',
      country: 'FR',
      bic: null,
    });
  });

  it('refuses a bad IBAN, BIC or holder name, naming the field, and changes nothing', async () => {
    const siteId = m.sites[1]?.id ?? 0;
    for (const [body, field] of [
      [{ iban: 'DE89370400440532013001', holderName: 'x' }, 'iban'],
      [{ iban: 'XX00123', holderName: 'x' }, 'iban'],
      [{ iban: IBAN, bic: 'NOTABIC!', holderName: 'x' }, 'bic'],
      [{ iban: IBAN, holderName: '' }, 'holderName'],
      [{ iban: IBAN, holderName: 'n'.repeat(71) }, 'holderName'],
      [{ holderName: 'x' }, 'iban'],
    ] as const) {
      const res = await siteAccount(m, siteId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error?.[0]?.field, JSON.stringify(body)).toBe(field);
    }
    expect((await siteAccount(m, siteId)).status).toBe(404);
  });

  it('another merchant’s site is not found, to read or to set; no key is a 401', async () => {
    const siteId = m.sites[0]?.id ?? 0;
    expect((await siteAccount(other, siteId)).status).toBe(404);
    expect((await siteAccount(other, siteId, { iban: IBAN, holderName: 'Thief' })).status).toBe(404);
    expect((await siteAccount(m, siteId)).body.data).toMatchObject({ holderName: 'Shop SAS' });
    expect((await h.request('GET', `/payments/site/${siteId}/bank-account`)).status).toBe(401);
  });
});

describe('crypto: /stores/bank_account', () => {
  it('sets and reads the store’s own account as a JSON:API document; another store has none', async () => {
    const set = await storeAccount(store, { iban: IBAN, holder_name: 'Crypto shop Ltd' });
    expect(set.status).toBe(200);
    expect(set.headers.get('content-type')).toMatch(/application\/vnd\.api\+json/);
    expect(set.body.data).toEqual({
      type: 'bank_accounts',
      attributes: {
        iban: MASKED,
        country: 'DE',
        bic: null,
        holder_name: 'Crypto shop Ltd',
        updated_at: expect.any(String),
        status: 'active',
      },
    });
    expect((await storeAccount(store)).body.data.attributes.iban).toBe(MASKED);
    expect((await storeAccount(otherStore)).status).toBe(404);
    const bad = await storeAccount(store, { iban: 'DE00370400440532013000', holder_name: 'x' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.errors)).toContain('iban');
  });
});

describe('admin', () => {
  it('sets and reads a site’s and a store’s account; a site of another merchant or an unknown store is 404', async () => {
    const siteId = other.sites[0]?.id ?? 0;
    const put = await h.admin<Record<string, unknown>>(
      'PUT',
      `/merchants/${other.id}/sites/${siteId}/bank-account`,
      {
        json: { iban: IBAN, bic: 'COBADEFF', holderName: 'Other' },
      },
    );
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ iban: MASKED, bic: 'COBADEFF', holderName: 'Other' });
    expect((await siteAccount(other, siteId)).body.data).toMatchObject({ holderName: 'Other' });
    expect((await h.admin('GET', `/merchants/${m.id}/sites/${siteId}/bank-account`)).status).toBe(404);
    expect((await h.admin('GET', `/stores/${store.id}/bank-account`)).body).toMatchObject({
      holderName: 'Crypto shop Ltd',
    });
    expect((await h.admin('GET', '/stores/str_unknown/bank-account')).status).toBe(404);
    const bad = await h.admin<{ error: { field: string } }>('PUT', `/stores/${store.id}/bank-account`, {
      json: { iban: IBAN, bic: 'X', holderName: 'x' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('bic');
  });

  it('keeps the IBAN encrypted at rest, bound to its owner', async () => {
    const db = new pg.Client({ connectionString: h.databaseUrl });
    await db.connect();
    try {
      const rows = await db.query<Record<string, string>>('SELECT * FROM bank_accounts');
      expect(rows.rows.length).toBeGreaterThanOrEqual(3);
      for (const row of rows.rows) {
        expect(JSON.stringify(row)).not.toContain('0532013000');
        expect(JSON.stringify(row)).not.toContain('0500013M02606');
      }
    } finally {
      await db.end();
    }
  });
});
