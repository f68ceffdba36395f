// Risk rules at payments.charge (docs/risk.md), through the real admin and payments routes: rules saved
// type-checked (a bad expression is a 400 with its position), lists read by rules, a block declined before
// the network with the wire's own decline, shadow rules recorded and never acting, decisions explained,
// and a card-testing attack stopped at the rule's threshold with nothing sent to the network after it.
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLuhnValid } from '../../src/platform/cards/card-number.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments, type TestMerchant } from '../harness/payments-builders.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(async () => {
  await h.close();
});

type AdminError = {
  error: { code: string; message: string; field?: string; details?: Record<string, number> };
};
interface RuleView {
  id: string;
  name: string;
  scope: { kind: string; id?: string };
  expression: string;
  mode: string;
  priority: number;
}

const rule = (fields: Record<string, unknown>) =>
  h.admin<RuleView & AdminError>('POST', '/risk/rules', {
    json: {
      name: `rule ${Math.random().toString(36).slice(2, 8)}`,
      decisionPoint: 'payments.charge',
      action: 'block',
      scope: { kind: 'platform' },
      ...fields,
    },
  });

/** A random Visa number the sandbox network approves. */
function randomCard(): string {
  for (;;) {
    const digits = `4${Array.from({ length: 15 }, () => randomInt(10)).join('')}`;
    if (isLuhnValid(digits) && !digits.startsWith('4000')) return digits;
  }
}

const networkAuthorizations = async () =>
  Number(
    (
      await h.services.db
        .selectFrom('card_network_authorizations')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('owner', '=', 'payments')
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('saving rules', () => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await aMerchant(h);
  });

  it('saves a rule for the platform and for a merchant, and reads, changes and deletes it', async () => {
    const platform = await rule({ expression: 'amount > 500000 && card.country != "RO"', priority: 5 });
    expect(platform.status).toBe(201);
    expect(platform.body).toMatchObject({ scope: { kind: 'platform' }, mode: 'active', priority: 5 });
    expect(platform.body.id).toMatch(/^rr_/);
    const mine = await rule({
      expression: 'velocity.email.count_1h > 3',
      scope: { kind: 'merchant', id: String(m.id) },
    });
    expect(mine.status).toBe(201);
    expect(mine.body.scope).toEqual({ kind: 'merchant', id: String(m.id) });

    const listed = await h.admin<{ data: RuleView[] }>('GET', `/risk/rules?scope=merchant:${m.id}`);
    expect(listed.body.data.map((r) => r.id)).toEqual([mine.body.id]);
    const patched = await h.admin<RuleView>('PATCH', `/risk/rules/${mine.body.id}`, {
      json: { mode: 'shadow' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ mode: 'shadow', expression: 'velocity.email.count_1h > 3' });
    expect((await h.admin('DELETE', `/risk/rules/${mine.body.id}`)).status).toBe(204);
    expect((await h.admin('GET', `/risk/rules/${mine.body.id}`)).status).toBe(404);
    expect((await h.admin('DELETE', `/risk/rules/${platform.body.id}`)).status).toBe(204);
  });

  it('refuses an expression that does not type-check, naming the field and the position', async () => {
    const cases: [string, RegExp, number][] = [
      ['amount > "100"', /no such overload/, 0],
      ['card.bni == "411111"', /No such key: bni/, 5],
      ['amount > 1 &&\n  colour == "red"', /Unknown variable: colour/, 16],
      ['amount >', /Unexpected token/, 8],
      ['amount', /must be a bool, not int/, 0],
      ['velocity.ip.count_1d > 3', /No such key: count_1d/, 12],
    ];
    for (const [expression, message, position] of cases) {
      const refused = await rule({ expression });
      expect(refused.status, expression).toBe(400);
      expect(refused.body.error.field).toBe('expression');
      expect(refused.body.error.message).toMatch(message);
      expect(refused.body.error.details?.position, expression).toBe(position);
    }
    const multiline = await rule({ expression: 'amount > 1 &&\n  colour == "red"' });
    expect(multiline.body.error.details).toMatchObject({ line: 2, column: 3 });
  });

  it('refuses what a rule cannot be: an action the point does not take, an unknown list, a scope that is not there', async () => {
    expect((await rule({ expression: 'true', action: 'decline' })).body.error.field).toBe('action');
    const noList = await rule({ expression: 'ip in list("nowhere")' });
    expect(noList.status).toBe(400);
    expect(noList.body.error.message).toMatch(/no list named nowhere/);
    const noMerchant = await rule({ expression: 'true', scope: { kind: 'merchant', id: '999999' } });
    expect(noMerchant.status).toBe(404);
    expect(noMerchant.body.error.field).toBe('scope.id');
    const wrongKind = await rule({ expression: 'true', scope: { kind: 'store', id: 'str_x' } });
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.error.field).toBe('scope.kind');
    const noId = await rule({ expression: 'true', scope: { kind: 'merchant' } });
    expect(noId.body.error.field).toBe('scope.id');
    const dup = await rule({ name: 'same', expression: 'false' });
    expect(dup.status).toBe(201);
    expect((await rule({ name: 'same', expression: 'false' })).status).toBe(409);
    await h.admin('DELETE', `/risk/rules/${dup.body.id}`);
    expect((await rule({ expression: 'true', decisionPoint: 'nowhere.charge' })).body.error.field).toBe(
      'decisionPoint',
    );
  });
});

describe('the reads', () => {
  it('refuse a filter they cannot read, naming it', async () => {
    const refused = async (path: string) => (await h.admin<AdminError>('GET', path)).body.error;
    expect((await refused('/risk/rules?decisionPoint=nowhere'))?.field).toBe('decisionPoint');
    expect((await refused('/risk/rules?limit=0'))?.field).toBe('limit');
    expect((await refused('/risk/decisions?before=abc'))?.field).toBe('before');
    // One past int8's largest: a 400 naming the cursor, never the database's out-of-range error.
    expect((await refused('/risk/decisions?before=9223372036854775808'))?.field).toBe('before');
    expect((await refused('/risk/reviews?status=waiting'))?.field).toBe('status');
    expect((await refused('/risk/lists?limit=501'))?.field).toBe('limit');
  });
});

describe('lists', () => {
  it('keeps items normalised by kind, refuses one not of its kind by index, and matches CIDR ranges in a rule', async () => {
    const m = await aMerchant(h);
    const list = await h.admin<{ id: string } & AdminError>('POST', '/risk/lists', {
      json: { name: `ips_${m.id}`, kind: 'ip', scope: { kind: 'merchant', id: String(m.id) } },
    });
    expect(list.status).toBe(201);
    const bad = await h.admin<AdminError>('POST', `/risk/lists/${list.body.id}/items`, {
      json: { items: ['203.0.113.7', 'not-an-ip'] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('items[1]');
    const added = await h.admin<{ added: number }>('POST', `/risk/lists/${list.body.id}/items`, {
      json: { items: ['203.0.113.7', '198.51.100.0/24', '203.0.113.7'] },
    });
    expect(added.body.added).toBe(2);
    const items = await h.admin<{ data: { value: string }[] }>('GET', `/risk/lists/${list.body.id}/items`);
    expect(items.body.data.map((i) => i.value)).toEqual(['198.51.100.0/24', '203.0.113.7']);

    const blocking = await rule({
      expression: `ip in list("ips_${m.id}")`,
      scope: { kind: 'merchant', id: String(m.id) },
    });
    expect(blocking.status).toBe(201);
    const customerId = await aCustomer(h, m);
    const inRange = await payments(h, m, 'POST', '/order', anOrder(customerId, { ip: '198.51.100.42' }));
    expect(inRange.status).toBe(402);
    const outside = await payments(h, m, 'POST', '/order', anOrder(customerId, { ip: '198.51.101.1' }));
    expect(outside.status).toBe(201);

    // An item removed stops matching at once (every process hears of the change before the answer).
    expect(
      (
        await h.admin(
          'DELETE',
          `/risk/lists/${list.body.id}/items?value=${encodeURIComponent('198.51.100.0/24')}`,
        )
      ).status,
    ).toBe(204);
    expect(
      (await payments(h, m, 'POST', '/order', anOrder(customerId, { ip: '198.51.100.42' }))).status,
    ).toBe(201);
  });
});

describe('deciding a charge', () => {
  it('compares amounts across currencies in the reporting currency (amount_reporting, EUR by default), and reads the site’s category', async () => {
    const m = await aMerchant(h);
    const customerId = await aCustomer(h, m);
    await h.admin('PATCH', `/merchants/${m.id}/sites/${m.sites[0]?.id}`, {
      json: { mcc: '5734', country: 'RO' },
    });
    const saved = await rule({
      name: 'over 90 EUR in any currency',
      expression: 'amount_reporting > 9000',
      scope: { kind: 'merchant', id: String(m.id) },
    });
    expect(saved.status, saved.text).toBe(201);
    // The FX rail's simulated rate: 1 EUR = 1.087 USD, so 100.00 USD is 91.99 EUR (rounded down).
    const dollars = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, { amount: '100.00', currency: 'USD' }),
    );
    expect(dollars.status, dollars.text).toBe(402);
    expect(
      (await payments(h, m, 'POST', '/order', anOrder(customerId, { amount: '95.00', currency: 'USD' })))
        .status,
    ).toBe(201);
    expect((await payments(h, m, 'POST', '/order', anOrder(customerId, { amount: '90.00' }))).status).toBe(
      201,
    );
    const decisions = await h.admin<{ data: { attributes: Record<string, unknown> }[] }>(
      'GET',
      `/risk/decisions?ruleId=${saved.body.id}`,
    );
    expect(decisions.body.data.map((d) => d.attributes)).toMatchObject([
      { amount: 10000, currency: 'USD', amount_reporting: 9199, merchant: { mcc: '5734', country: 'RO' } },
    ]);
  });

  it('blocks before the network with the wire’s decline, tells the payer no rule, and records why', async () => {
    const m = await aMerchant(h);
    const customerId = await aCustomer(h, m, { email: 'Big.Spender@Example.com' });
    const blocking = await rule({
      name: 'big foreign spend',
      expression: 'amount >= 100000 && email_domain == "example.com" && card.funding == "credit"',
      scope: { kind: 'merchant', id: String(m.id) },
    });
    expect(blocking.status).toBe(201);
    const before = await networkAuthorizations();

    const refused = await payments(h, m, 'POST', '/order', anOrder(customerId, { amount: '1000.00' }));
    expect(refused.status).toBe(402);
    expect(refused.body.error?.[0]).toMatchObject({ code: 822, message: 'The payment was declined' });
    expect(refused.text).not.toMatch(/big foreign spend|rr_/);
    expect(await networkAuthorizations()).toBe(before);
    const transactionId = refused.body.data.transactionId as number;
    const transaction = await payments(h, m, 'GET', `/transaction/${transactionId}`);
    expect(transaction.body.data.transactionStatus).toBe('complete-failed');

    const decisions = await h.admin<{ data: Record<string, unknown>[] }>(
      'GET',
      `/risk/decisions?objectId=${transactionId}`,
    );
    expect(decisions.body.data).toHaveLength(1);
    expect(decisions.body.data[0]).toMatchObject({
      ruleId: blocking.body.id,
      ruleName: 'big foreign spend',
      action: 'block',
      mode: 'active',
      acted: true,
      tenant: `merchant:${m.id}`,
      attributes: expect.objectContaining({
        amount: 100000,
        email: 'big.spender@example.com',
        currency: 'EUR',
      }),
    });

    // Under the threshold the charge goes to the network and is approved.
    const allowed = await payments(h, m, 'POST', '/order', anOrder(customerId, { amount: '999.99' }));
    expect(allowed.status).toBe(201);
    expect(await networkAuthorizations()).toBe(before + 1);
  });

  it('records a shadow rule’s match and never acts on it; an allow rule ahead of a block lets the charge through', async () => {
    const m = await aMerchant(h);
    const scope = { kind: 'merchant', id: String(m.id) };
    const customerId = await aCustomer(h, m);
    const shadow = await rule({ expression: 'amount > 0', mode: 'shadow', scope, priority: 1 });
    const paid = await payments(h, m, 'POST', '/order', anOrder(customerId));
    expect(paid.status).toBe(201);
    const recorded = await h.admin<{ data: Record<string, unknown>[] }>(
      'GET',
      `/risk/decisions?ruleId=${shadow.body.id}`,
    );
    expect(recorded.body.data).toEqual([
      expect.objectContaining({
        objectId: String(paid.body.data.transactionId),
        mode: 'shadow',
        acted: false,
      }),
    ]);

    await rule({ expression: 'amount > 0', scope, priority: 50 });
    expect((await payments(h, m, 'POST', '/order', anOrder(customerId))).status).toBe(402);
    await rule({ expression: 'billing_country == "RO"', action: 'allow', scope, priority: 10 });
    expect((await payments(h, m, 'POST', '/order', anOrder(customerId))).status).toBe(201);
  });

  it('challenges a charge the request did not send through 3-D Secure; approved on the ACS it completes', async () => {
    const m = await aMerchant(h);
    const customerId = await aCustomer(h, m);
    await rule({
      expression: 'card.country != billing_country',
      action: 'challenge',
      scope: { kind: 'merchant', id: String(m.id) },
    });
    // The sandbox's BIN table puts every card in the US; the holder says RO.
    const challenged = await payments(h, m, 'POST', '/order', anOrder(customerId));
    expect(challenged.status).toBe(201);
    expect(challenged.body.data).toMatchObject({ is3d: 1, isRedirect: true });
    const { params } = challenged.body.data.redirect;
    const decided = await fetch(`${h.baseUrl}/acs/challenge/decide`, {
      method: 'POST',
      body: new URLSearchParams({ creq: params.creq, outcome: 'approve' }),
      redirect: 'manual',
    });
    expect(decided.status).toBe(303);
    await fetch(decided.headers.get('location') ?? '', { redirect: 'manual' });
    const read = await payments(h, m, 'GET', `/transaction/${challenged.body.data.transactionId}`);
    expect(read.body.data).toMatchObject({ transactionStatus: 'complete-ok', is3d: 1 });
    const why = await h.admin<{ data: Record<string, unknown>[] }>(
      'GET',
      `/risk/decisions?objectId=${challenged.body.data.transactionId}`,
    );
    expect(why.body.data[0]).toMatchObject({ action: 'challenge', acted: true });
  });

  it('keeps every charge’s signal, with or without rules, in the charge’s own write', async () => {
    const m = await aMerchant(h);
    const customerId = await aCustomer(h, m);
    const paid = await payments(h, m, 'POST', '/order', anOrder(customerId, { ip: '192.0.2.10' }));
    expect(paid.status).toBe(201);
    const signal = await h.services.db
      .selectFrom('risk_signals')
      .selectAll()
      .where('object_id', '=', String(paid.body.data.transactionId))
      .executeTakeFirstOrThrow();
    expect(signal).toMatchObject({
      decision_point: 'payments.charge',
      tenant: `merchant:${m.id}`,
      amount: '1090',
      currency: 'EUR',
      ip: '192.0.2.10',
      email: 'buyer@example.com',
      customer_id: String(customerId),
      declined: false,
    });
    expect(signal.card_fingerprint).toMatch(/^[\w-]{43}$/);
    expect(JSON.stringify(signal)).not.toContain('4111111111111111');
    expect(signal.attributes).toMatchObject({
      card: { bin: '411111', brand: 'visa', funding: 'credit' },
      source: 'new',
    });
  });
});

describe('a card-testing attack', () => {
  it('300 orders with random cards from one IP: blocked from the rule’s threshold on, nothing sent to the network after it', async () => {
    const m = await aMerchant(h);
    const customerId = await aCustomer(h, m);
    const threshold = 20;
    const created = await rule({
      name: 'card testing',
      expression: `velocity.ip.count_10m >= ${threshold} || velocity.ip.declines_1h >= 5`,
      scope: { kind: 'merchant', id: String(m.id) },
    });
    expect(created.status).toBe(201);
    const before = await networkAuthorizations();
    const statuses: number[] = [];
    // Five minutes on the sandbox clock: a second every ten orders.
    for (let i = 0; i < 300; i++) {
      if (i > 0 && i % 10 === 0) await h.advanceClock(10);
      const order = await payments(
        h,
        m,
        'POST',
        '/order',
        anOrder(customerId, { amount: '1.00', ip: '203.0.113.99', cardNumber: randomCard() }),
      );
      statuses.push(order.status);
    }
    expect(statuses.slice(0, threshold).every((s) => s === 201)).toBe(true);
    expect(statuses.slice(threshold).every((s) => s === 402)).toBe(true);
    expect(await networkAuthorizations()).toBe(before + threshold);
    const blocked = await h.admin<{ data: unknown[] }>(
      'GET',
      `/risk/decisions?ruleId=${created.body.id}&limit=500`,
    );
    expect(blocked.body.data).toHaveLength(300 - threshold);
    // Another IP of the same buyer is not held by this one's history.
    const other = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, { amount: '1.00', ip: '203.0.113.100' }),
    );
    expect(other.status).toBe(201);
  });
});

describe('reviews', () => {
  interface ReviewView {
    id: string;
    objectId: string;
    status: string;
    ruleName: string;
  }
  const reviewRule = async (m: TestMerchant) =>
    rule({
      name: 'hold big',
      expression: 'amount >= 50000',
      action: 'review',
      scope: { kind: 'merchant', id: String(m.id) },
    });
  const transactionStatus = async (m: TestMerchant, id: string) =>
    (await payments(h, m, 'GET', `/transaction/${id}`)).body.data.transactionStatus as string;

  it('holds a charge authorized, not captured; approved it is captured and the site credited; decided twice is a 409', async () => {
    const m = await aMerchant(h);
    const site = m.sites[0]?.id as number;
    const customerId = await aCustomer(h, m);
    expect((await reviewRule(m)).status).toBe(201);
    const held = await payments(h, m, 'POST', '/order', anOrder(customerId, { amount: '500.00' }));
    expect(held.status).toBe(201);
    const transactionId = String(held.body.data.transactionId);
    expect(await transactionStatus(m, transactionId)).toBe('in-progress');
    const queue = await h.admin<{ data: ReviewView[] }>(
      'GET',
      `/risk/reviews?tenant=merchant:${m.id}&status=pending`,
    );
    expect(queue.body.data).toEqual([
      expect.objectContaining({ objectId: transactionId, ruleName: 'hold big' }),
    ]);
    const review = queue.body.data[0] as ReviewView;

    const before = await h.services.payments.transactions.siteBalance(site, 'EUR');
    const approved = await h.admin<ReviewView>('POST', `/risk/reviews/${review.id}/approve`);
    expect(approved.body).toMatchObject({ status: 'approved', decidedBy: 'admin token' });
    expect(await transactionStatus(m, transactionId)).toBe('complete-ok');
    expect(await h.services.payments.transactions.siteBalance(site, 'EUR')).toBe(before + 50_000n);
    expect((await h.admin('POST', `/risk/reviews/${review.id}/refuse`)).status).toBe(409);
    // The queue is what waits: a decided review leaves it.
    const after = await h.admin<{ data: ReviewView[] }>('GET', `/risk/reviews?tenant=merchant:${m.id}`);
    expect(after.body.data).toEqual([]);
    // Under the rule's amount nothing is held.
    const small = await payments(h, m, 'POST', '/order', anOrder(customerId, { amount: '10.00' }));
    expect(await transactionStatus(m, String(small.body.data.transactionId))).toBe('complete-ok');
  });

  it('refused, the authorization is voided; undecided, it expires refused', async () => {
    const m = await aMerchant(h);
    const customerId = await aCustomer(h, m);
    await reviewRule(m);
    const first = await payments(h, m, 'POST', '/order', anOrder(customerId, { amount: '600.00' }));
    const second = await payments(h, m, 'POST', '/order', anOrder(customerId, { amount: '700.00' }));
    const queue = await h.admin<{ data: ReviewView[] }>('GET', `/risk/reviews?tenant=merchant:${m.id}`);
    const reviewOf = (t: { body: { data: { transactionId: number } } }) =>
      queue.body.data.find((r) => r.objectId === String(t.body.data.transactionId)) as ReviewView;
    const refused = await h.admin<ReviewView>('POST', `/risk/reviews/${reviewOf(first).id}/refuse`);
    expect(refused.body.status).toBe('refused');
    expect(await transactionStatus(m, String(first.body.data.transactionId))).toBe('void-ok');

    await h.advanceClock(73 * 3_600);
    const expired = await h.admin<{ data: ReviewView[] }>(
      'GET',
      `/risk/reviews?tenant=merchant:${m.id}&status=expired`,
    );
    expect(expired.body.data.map((r) => r.id)).toEqual([reviewOf(second).id]);
    expect(await transactionStatus(m, String(second.body.data.transactionId))).toBe('void-ok');
    expect((await h.admin('POST', `/risk/reviews/${reviewOf(second).id}/approve`)).status).toBe(409);
    expect((await h.admin('POST', '/risk/reviews/rv_nothing/approve')).status).toBe(404);
  });
});

describe('the sandbox’s test values', () => {
  it('refuse or hold a charge with no rule written: an email that always blocks, an IP that always reviews', async () => {
    const m = await aMerchant(h);
    const before = await networkAuthorizations();
    const blocker = await aCustomer(h, m, { email: 'risk-block@example.com' });
    const refused = await payments(h, m, 'POST', '/order', anOrder(blocker));
    expect(refused.status).toBe(402);
    expect(refused.body.error?.[0]?.code).toBe(822);
    expect(await networkAuthorizations()).toBe(before);
    const why = await h.admin<{ data: Record<string, unknown>[] }>(
      'GET',
      `/risk/decisions?objectId=${refused.body.data.transactionId}`,
    );
    expect(why.body.data[0]).toMatchObject({ ruleId: 'sandbox', action: 'block', acted: true });

    const customerId = await aCustomer(h, m);
    const held = await payments(h, m, 'POST', '/order', anOrder(customerId, { ip: '192.0.2.77' }));
    expect(held.status).toBe(201);
    const queue = await h.admin<{ data: { objectId: string }[] }>(
      'GET',
      `/risk/reviews?tenant=merchant:${m.id}`,
    );
    expect(queue.body.data.map((r) => r.objectId)).toEqual([String(held.body.data.transactionId)]);

    const challenger = await aCustomer(h, m, { email: 'risk-challenge@example.com' });
    const challenged = await payments(h, m, 'POST', '/order', anOrder(challenger));
    expect(challenged.status).toBe(201);
    expect(challenged.body.data).toMatchObject({ is3d: 1, isRedirect: true });
  });
});
