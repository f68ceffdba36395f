// /customer: create, list with every filter and the pagination object, retrieve, update, delete; the
// identifier rules, the service's codes (1627 exists, 1651 bad email), sites, and merchant isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, payments, type TestMerchant } from '../harness/payments-builders.ts';

let h: Harness;
let m: TestMerchant;
beforeAll(async () => {
  h = await Harness.start();
  m = await aMerchant(h);
});
afterAll(() => h.close());

describe('customers', () => {
  it('creates, retrieves, updates and deletes a customer', async () => {
    const created = await payments(h, m, 'POST', '/customer', {
      identifier: 'user 42@shop.example',
      email: 'ada@example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
      country: 'GB',
      city: 'London',
      zipCode: 'W1',
      address: '12 St James Sq',
      phone: '+44 20 7946 0000',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ code: 201, message: 'Created', data: { id: expect.any(Number) } });
    const id = created.body.data.id;
    const read = await payments(h, m, 'GET', `/customer/${id}`);
    expect(read.body.data).toMatchObject({
      id,
      siteId: m.sites[0]?.id,
      identifier: 'user 42@shop.example',
      email: 'ada@example.com',
      country: 'GB',
      creationTimestamp: expect.any(Number),
    });
    expect(read.body.data.creationDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);

    const updated = await payments(h, m, 'PUT', `/customer/${id}`, {
      city: 'Paris',
      country: 'FR',
      phone: '',
    });
    expect(updated.body).toMatchObject({ code: 200, data: { id } });
    const after = (await payments(h, m, 'GET', `/customer/${id}`)).body.data;
    expect(after).toMatchObject({ city: 'Paris', country: 'FR', phone: null, firstName: 'Ada' });

    expect((await payments(h, m, 'DELETE', `/customer/${id}`)).status).toBe(200);
    expect((await payments(h, m, 'GET', `/customer/${id}`)).status).toBe(404);
    expect((await payments(h, m, 'DELETE', `/customer/${id}`)).status).toBe(404);
    // The identifier is free again once its customer is deleted.
    expect((await payments(h, m, 'POST', '/customer', { identifier: 'user 42@shop.example' })).status).toBe(
      201,
    );
  });

  it('refuses a second customer with the same identifier on the site (409, 1627)', async () => {
    await aCustomer(h, m, { identifier: 'dup-1' });
    const dup = await payments(h, m, 'POST', '/customer', { identifier: 'dup-1' });
    expect(dup.status).toBe(409);
    expect(dup.body.error?.[0]).toMatchObject({ code: 1627, field: 'identifier', type: 'Exception' });
    const other = await aCustomer(h, m, { identifier: 'dup-2' });
    const renamed = await payments(h, m, 'PUT', `/customer/${other}`, { identifier: 'dup-1' });
    expect(renamed.status).toBe(409);
  });

  it.each([
    [{ identifier: 'x'.repeat(93) }, 'identifier'],
    [{ identifier: 'bad/char' }, 'identifier'],
    [{ identifier: '' }, 'identifier'],
    [{ identifier: 'ok', email: 'not-an-email' }, 'email'],
    [{ identifier: 'ok', country: 'Romania' }, 'country'],
    [{ identifier: 'ok', phone: 'call me' }, 'phone'],
    [{ identifier: 'ok', siteId: '1' }, 'siteId'],
  ])('%j is a 400 naming %s', async (body, field) => {
    const res = await payments(h, m, 'POST', '/customer', body as Record<string, string>);
    expect(res.status).toBe(400);
    expect(res.body.error?.[0]).toMatchObject({ type: 'Validation', field });
    if (field === 'email') expect(res.body.error?.[0]?.code).toBe(1651);
  });

  it('names bad update fields (1651 for the email) and changes nothing', async () => {
    const id = await aCustomer(h, m, { city: 'Cluj' });
    for (const [body, field] of [
      [{ email: 'nope' }, 'email'],
      [{ identifier: 'a/b' }, 'identifier'],
      [{ country: 'ROU' }, 'country'],
    ] as const) {
      const res = await payments(h, m, 'PUT', `/customer/${id}`, body as Record<string, string>);
      expect(res.status).toBe(400);
      expect(res.body.error?.[0]?.field).toBe(field);
      if (field === 'email') expect(res.body.error?.[0]?.code).toBe(1651);
    }
    expect((await payments(h, m, 'GET', `/customer/${id}`)).body.data).toMatchObject({
      city: 'Cluj',
      country: 'RO',
    });
  });

  it('answers an update with nothing to change with the customer as it is', async () => {
    const id = await aCustomer(h, m, { city: 'Iasi' });
    const before = (await payments(h, m, 'GET', `/customer/${id}`)).body.data;
    for (const body of [{}, { unknownField: 'x' }] as Record<string, string>[]) {
      const res = await payments(h, m, 'PUT', `/customer/${id}`, body);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ id });
      expect((await payments(h, m, 'GET', `/customer/${id}`)).body.data).toEqual(before);
    }
  });

  it('accepts an identifier of exactly 92 characters with every allowed character', async () => {
    const identifier = `Ab9-_.@ ${'x'.repeat(84)}`;
    expect(identifier).toHaveLength(92);
    expect((await payments(h, m, 'POST', '/customer', { identifier })).status).toBe(201);
  });

  it('needs siteId when the merchant has several sites', async () => {
    const multi = await aMerchant(h, { sites: 2 });
    const missing = await payments(h, multi, 'POST', '/customer', { identifier: 'a' });
    expect(missing.body.error?.[0]?.field).toBe('siteId');
    const second = String(multi.sites[1]?.id);
    const ok = await payments(h, multi, 'POST', '/customer', { identifier: 'a', siteId: second });
    expect(ok.status).toBe(201);
    expect((await payments(h, multi, 'GET', `/customer/${ok.body.data.id}`)).body.data.siteId).toBe(
      Number(second),
    );
  });

  it('lists with filters and the pagination object', async () => {
    const list = await aMerchant(h);
    for (const [i, country] of ['RO', 'RO', 'DE', 'RO', 'FR'].entries()) {
      await aCustomer(h, list, { identifier: `list-${i}`, country, email: `p${i}@example.com` });
    }
    const page = await payments(h, list, 'GET', '/customer?country=RO&perPage=2&page=1');
    expect(page.body.pagination).toEqual({
      currentPageNumber: 1,
      totalItemCount: 3,
      itemCountPerPage: 2,
      currentItemCount: 2,
      pageCount: 2,
    });
    // Newest first by default; reverseSorting=0 gives oldest first.
    expect(page.body.data.map((c: { identifier: string }) => c.identifier)).toEqual(['list-3', 'list-1']);
    const oldest = await payments(h, list, 'GET', '/customer?reverseSorting=0&perPage=1');
    expect(oldest.body.data[0].identifier).toBe('list-0');
    const byEmail = await payments(h, list, 'GET', '/customer?email=p2@example.com');
    expect(byEmail.body.data.map((c: { country: string }) => c.country)).toEqual(['DE']);
    const byIdentifier = await payments(h, list, 'GET', '/customer?identifier=list-4');
    expect(byIdentifier.body.data).toHaveLength(1);
    const now = (
      await h.request<{ now: string }>('GET', '/sandbox/clock', {
        headers: { authorization: `Bearer ${h.adminToken}` },
      })
    ).body.now;
    const future = await payments(
      h,
      list,
      'GET',
      `/customer?createdAtFrom=${encodeURIComponent('2099-01-01T00:00:00+00:00')}`,
    );
    expect(future.body.data).toEqual([]);
    const upToNow = await payments(h, list, 'GET', `/customer?createdAtTo=${encodeURIComponent(now)}`);
    expect(upToNow.body.pagination?.totalItemCount).toBe(5);
    const defaults = await payments(h, list, 'GET', '/customer');
    expect(defaults.body.pagination).toMatchObject({ currentPageNumber: 1, itemCountPerPage: 100 });
    const bad = await payments(h, list, 'GET', '/customer?createdAtFrom=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.error?.[0]?.field).toBe('createdAtFrom');
  });

  it('keeps merchants apart: another merchant’s customer is 404 and never listed', async () => {
    const mine = await aCustomer(h, m);
    const other = await aMerchant(h);
    expect((await payments(h, other, 'GET', `/customer/${mine}`)).status).toBe(404);
    expect((await payments(h, other, 'PUT', `/customer/${mine}`, { city: 'X' })).status).toBe(404);
    expect((await payments(h, other, 'DELETE', `/customer/${mine}`)).status).toBe(404);
    expect((await payments(h, other, 'GET', '/customer')).body.data).toEqual([]);
    expect((await payments(h, m, 'GET', `/customer/${mine}`)).status).toBe(200);
    expect((await h.request('GET', '/payments/customer')).status).toBe(401);
  });
});
