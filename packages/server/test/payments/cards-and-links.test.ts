// /card and /payment-link: stored cards show only token, brand, masked number and expiry (the number
// encrypted at rest, the CVV never kept); a saved card pays again by cardId for its customer only;
// payment links through their whole life; merchant isolation for both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import {
  aCustomer,
  aMerchant,
  anOrder,
  newCard,
  payments,
  type TestMerchant,
} from '../harness/payments-builders.ts';

let h: Harness;
let m: TestMerchant;
beforeAll(async () => {
  h = await Harness.start();
  m = await aMerchant(h);
});
afterAll(() => h.close());

describe('stored cards', () => {
  it('saves a card on request, shows it masked, charges it by cardId, deletes it', async () => {
    const customerId = await aCustomer(h, m);
    const first = await payments(h, m, 'POST', '/order', anOrder(customerId, { saveCard: '1' }));
    const cardId = first.body.data.cardId;
    expect(cardId).toEqual(expect.any(Number));

    const list = await payments(h, m, 'GET', `/card?customerId=${customerId}`);
    expect(list.body.data).toHaveLength(1);
    const card = list.body.data[0];
    expect(card).toMatchObject({
      id: cardId,
      cardType: 'visa',
      cardNumber: '411111******1111',
      lastFour: '1111',
      expiryMonth: '12',
      nameOnCard: 'Ada Lovelace',
      // The real service's names: kept for reuse, a card number, its scheme and the BIN table's facts.
      hasToken: true,
      type: 'card',
      cardProvider: 'visa',
      binInfo: { bin: '411111', brand: 'VISA', type: 'CREDIT', level: 'CLASSIC', countryCode: 'US' },
      cardStatus: 'active',
    });
    const kept = await payments(h, m, 'GET', `/card?customerId=${customerId}&hasToken=yes`);
    expect(kept.body.data.map((c: { id: number }) => c.id)).toEqual([cardId]);
    expect(JSON.stringify(list.body)).not.toContain('4111111111111111');
    expect(JSON.stringify(card)).not.toMatch(/cvv/i);

    // At rest: the number is ciphertext and no column holds the CVV.
    const row = await h.services.db
      .selectFrom('payments_cards')
      .selectAll()
      .where('id', '=', cardId)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain('4111111111111111');
    expect(Object.keys(row).some((k) => k.includes('cvv'))).toBe(false);

    const again = await payments(h, m, 'POST', '/order', {
      amount: '3.00',
      currency: 'EUR',
      orderType: 'purchase',
      customerId: String(customerId),
      cardId: String(cardId),
    });
    expect(again.status).toBe(201);
    expect(again.body.data.cardId).toBe(cardId);

    // Another customer of the same merchant cannot use it.
    const stranger = await aCustomer(h, m);
    const stolen = await payments(h, m, 'POST', '/order', {
      amount: '3.00',
      currency: 'EUR',
      orderType: 'purchase',
      customerId: String(stranger),
      cardId: String(cardId),
    });
    expect(stolen.status).toBe(404);
    expect(stolen.body.error?.[0]?.field).toBe('cardId');

    expect((await payments(h, m, 'GET', `/card/${cardId}?customerId=${stranger}`)).status).toBe(404);
    expect((await payments(h, m, 'GET', `/card/${cardId}?customerId=${customerId}`)).body.data.id).toBe(
      cardId,
    );
    expect((await payments(h, m, 'DELETE', `/card/${cardId}`)).status).toBe(200);
    expect((await payments(h, m, 'GET', `/card/${cardId}`)).status).toBe(404);
    const deleted = await payments(h, m, 'GET', `/card?customerId=${customerId}&cardStatus=deleted`);
    expect(deleted.body.data.map((c: { id: number }) => c.id)).toEqual([cardId]);
    const reuse = await payments(h, m, 'POST', '/order', {
      amount: '3.00',
      currency: 'EUR',
      orderType: 'purchase',
      customerId: String(customerId),
      cardId: String(cardId),
    });
    expect(reuse.status).toBe(404);
  });

  it('does not save a card unless asked (purchase), and needs customerId to list', async () => {
    const customerId = await aCustomer(h, m);
    const order = await payments(h, m, 'POST', '/order', anOrder(customerId));
    expect(order.body.data.cardId).toBeUndefined();
    expect((await payments(h, m, 'GET', `/card?customerId=${customerId}`)).body.data).toEqual([]);
    const missing = await payments(h, m, 'GET', '/card');
    expect(missing.status).toBe(400);
    expect(missing.body.error?.[0]?.field).toBe('customerId');
  });

  it('is 404 for another merchant', async () => {
    const customerId = await aCustomer(h, m);
    const order = await payments(h, m, 'POST', '/order', anOrder(customerId, { saveCard: 'true' }));
    const other = await aMerchant(h);
    expect((await payments(h, other, 'GET', `/card/${order.body.data.cardId}`)).status).toBe(404);
    expect((await payments(h, other, 'DELETE', `/card/${order.body.data.cardId}`)).status).toBe(404);
    expect((await payments(h, other, 'GET', `/card?customerId=${customerId}`)).body.data).toEqual([]);
  });
});

describe('payment links', () => {
  it('creates, lists, reads, updates and deletes a link', async () => {
    const created = await payments(h, m, 'POST', '/payment-link', {
      amount: '25.00',
      currency: 'EUR',
      orderType: 'purchase',
      active: '1',
      contentType: 'Items',
      items: JSON.stringify([{ name: 'Poster', quantity: 1, price: '25.00' }]),
      description: 'A poster',
      usageLimit: '3',
    });
    expect(created.status).toBe(201);
    const link = created.body.data;
    expect(link).toMatchObject({
      url: `${h.baseUrl}/pay/${link.hash}`,
      amount: 25,
      currency: 'EUR',
      active: 1,
      usageLimit: 3,
      usageCount: 0,
      siteId: m.sites[0]?.id,
    });
    expect(link.hash).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect((await h.request('GET', `/pay/${link.hash}`)).text).toContain('25.00 EUR');

    const updated = await payments(h, m, 'PUT', `/payment-link/${link.hash}`, {
      amount: '30.00',
      active: '0',
    });
    expect(updated.body.data).toMatchObject({ amount: 30, active: 0 });
    const inactive = await h.request('GET', `/pay/${link.hash}`);
    expect(inactive.status).toBe(404);
    expect(inactive.text).toContain('not active');

    const list = await payments(h, m, 'GET', '/payment-link?active=0');
    expect(list.body.data.map((l: { hash: string }) => l.hash)).toContain(link.hash);
    expect((await payments(h, m, 'DELETE', `/payment-link/${link.hash}`)).status).toBe(200);
    expect((await payments(h, m, 'GET', `/payment-link/${link.hash}`)).status).toBe(200);
    expect((await h.request('GET', `/pay/${link.hash}`)).text).toContain('does not exist');
    expect(
      (await payments(h, m, 'GET', '/payment-link')).body.data.map((l: { hash: string }) => l.hash),
    ).not.toContain(link.hash);
  });

  it('recurring links need an interval; bad fields are named', async () => {
    const res = await payments(h, m, 'POST', '/payment-link', {
      amount: '5',
      currency: 'EUR',
      orderType: 'recurring',
    });
    expect(res.body.error?.[0]?.field).toBe('intervalType');
    for (const [body, field] of [
      [{ currency: 'EUR' }, 'amount'],
      [{ amount: '5' }, 'currency'],
      [{ amount: '5', currency: 'EUR', orderType: 'gift' }, 'orderType'],
      [{ amount: '5', currency: 'EUR', expiresAt: 'soon' }, 'expiresAt'],
      [{ amount: '5.001', currency: 'EUR' }, 'amount'],
    ] as const) {
      const bad = await payments(h, m, 'POST', '/payment-link', body as Record<string, string>);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error?.[0]?.field).toBe(field);
    }
  });

  it('names bad update fields and leaves the link as it was', async () => {
    const created = await payments(h, m, 'POST', '/payment-link', { amount: '9.00', currency: 'EUR' });
    const hash = created.body.data.hash;
    for (const [body, field] of [
      [{ amount: 'nine' }, 'amount'],
      [{ currency: 'EURO' }, 'currency'],
      [{ active: 'perhaps' }, 'active'],
      [{ usageLimit: '-1' }, 'usageLimit'],
      [{ orderType: 'recurring' }, 'intervalType'],
    ] as const) {
      const res = await payments(h, m, 'PUT', `/payment-link/${hash}`, body as Record<string, string>);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error?.[0]?.field).toBe(field);
    }
    const read = await payments(h, m, 'GET', `/payment-link/${hash}`);
    expect(read.body.data).toMatchObject({ amount: 9, currency: 'EUR', active: 1, orderType: 'purchase' });
  });

  it('expires on the clock, and is 404 for another merchant', async () => {
    const now = (
      await h.request<{ now: string }>('GET', '/sandbox/clock', {
        headers: { authorization: `Bearer ${h.adminToken}` },
      })
    ).body.now;
    const created = await payments(h, m, 'POST', '/payment-link', {
      amount: '5.00',
      currency: 'EUR',
      expiresAt: new Date(new Date(now).getTime() + 3600_000).toISOString(),
    });
    const hash = created.body.data.hash;
    expect((await h.request('GET', `/pay/${hash}`)).status).toBe(200);
    await h.advanceClock(3601);
    expect((await h.request('GET', `/pay/${hash}`)).text).toContain('expired');
    const late = await payments(h, m, 'POST', `/payment-link/${hash}/email`, { email: 'late@example.com' });
    expect(late.status).toBe(409);
    expect(late.text).toContain('expired');
    const other = await aMerchant(h);
    expect(
      (await payments(h, other, 'POST', `/payment-link/${hash}/email`, { email: 'x@example.com' })).status,
    ).toBe(404);
    for (const method of ['GET', 'PUT', 'DELETE']) {
      expect(
        (
          await payments(
            h,
            other,
            method,
            `/payment-link/${hash}`,
            method === 'PUT' ? { amount: '1' } : undefined,
          )
        ).status,
      ).toBe(404);
    }
  });

  it('emails a link to a buyer: its price, items and page; once per Idempotency-Key; bad addresses and unavailable links refused', async () => {
    const created = await payments(h, m, 'POST', '/payment-link', {
      amount: '12.50',
      currency: 'EUR',
      orderType: 'recurring',
      intervalType: 'month',
      intervalValue: '1',
      contentType: 'Items',
      items: JSON.stringify([{ name: 'Coffee beans', quantity: 2, price: '6.25' }]),
    });
    const link = created.body.data;
    const inbox = async (recipient: string) =>
      (
        await h.request<{ data: { subject: string; body: string; channel: string }[] }>(
          'GET',
          `/sandbox/messages?recipient=${encodeURIComponent(recipient)}`,
          { headers: { authorization: `Bearer ${h.adminToken}` } },
        )
      ).body.data;
    const key = { 'idempotency-key': `link-mail-${link.hash}` };
    const send = () =>
      h.request<{ code: number; data: { hash: string; url: string; email: string } }>(
        'POST',
        `/payments/payment-link/${link.hash}/email`,
        { headers: { ...m.auth, ...key }, form: { email: 'buyer@example.com' } },
      );
    const sent = await send();
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body.data).toEqual({ hash: link.hash, url: link.url, email: 'buyer@example.com' });
    // Retried with its key (a lost answer): answered again, not mailed again.
    expect((await send()).body).toEqual(sent.body);
    const [mail, ...more] = await inbox('buyer@example.com');
    expect(more).toEqual([]);
    expect(mail?.channel).toBe('email');
    expect(mail?.subject).toBe(`${m.sites[0]?.name} asks you to pay 12.50 EUR`);
    expect(mail?.body).toContain('for 2 × Coffee beans, then every month until you cancel.');
    expect(mail?.body).toContain(`Pay by card on this page: ${link.url}`);

    for (const [form, field] of [
      [{ email: 'not-an-address' }, 'email'],
      [{}, 'email'],
      [{ email: `${'a'.repeat(250)}@example.com` }, 'email'],
    ] as const) {
      const refused = await payments(h, m, 'POST', `/payment-link/${link.hash}/email`, form);
      expect(refused.status).toBe(400);
      expect(refused.text).toContain(field);
    }
    await payments(h, m, 'PUT', `/payment-link/${link.hash}`, { active: '0' });
    const inactive = await payments(h, m, 'POST', `/payment-link/${link.hash}/email`, {
      email: 'second@example.com',
    });
    expect(inactive.status).toBe(409);
    expect(inactive.text).toContain('not active');
    await payments(h, m, 'DELETE', `/payment-link/${link.hash}`);
    const deleted = await payments(h, m, 'POST', `/payment-link/${link.hash}/email`, {
      email: 'second@example.com',
    });
    expect(deleted.status).toBe(409);
    expect(deleted.text).toContain('does not exist');
    expect(await inbox('second@example.com')).toEqual([]);
  });

  it('a buyer who pays through a link gets the receipt at the address they gave on its page', async () => {
    const created = await payments(h, m, 'POST', '/payment-link', {
      amount: '9.00',
      currency: 'EUR',
      description: 'A ticket',
    });
    const hash = created.body.data.hash;
    const paid = await h.request('POST', `/pay/${hash}`, {
      form: { email: 'Payer@Example.com', ...newCard() },
    });
    expect(paid.status).toBe(200); // the result page, after its redirect
    const inbox = await h.request<{ data: { subject: string; body: string }[] }>(
      'GET',
      '/sandbox/messages?recipient=payer@example.com',
      { headers: { authorization: `Bearer ${h.adminToken}` } },
    );
    expect(inbox.body.data).toHaveLength(1);
    expect(inbox.body.data[0]?.subject).toMatch(
      new RegExp(`^Invoice for order \\d+ from ${m.sites[0]?.name}$`),
    );
    expect(inbox.body.data[0]?.body).toContain('received your payment of 9.00 EUR');
  });
});
