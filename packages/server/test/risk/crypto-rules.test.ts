// Risk rules at crypto.order and crypto.refund (docs/risk.md), through the real admin, crypto API and hosted
// pages: a store's rule blocks an order (403 in JSON:API errors, nothing written, no rule named) or holds
// it for review (the pay page shows no address and the sandbox cannot pay it until approved; refused, the
// order is canceled and the store told as of a buyer's cancel); velocity per buyer email; every order's
// signal kept whether or not a rule exists; a refund proposal blocked, or held so the buyer cannot decide
// until approved (refused, it is rejected and the order back where it was).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  anOrder,
  orderOf as anOrderOf,
  aStore,
  orderDocument,
  pay,
  type TestStore,
} from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';

let h: Harness;
let store: TestStore;
beforeAll(async () => {
  h = await Harness.start();
  store = await aStore(h);
});
afterAll(() => h.close());

type Review = { id: string; objectId: string; status: string };
type OrderAnswer = {
  data?: { id: string; attributes: { status: string; redirect_url: string } };
  errors?: { status: string; detail?: string }[];
};

const rule = async (fields: Record<string, unknown>) => {
  const saved = await h.admin<{ id: string }>('POST', '/risk/rules', {
    json: {
      name: `rule ${Math.random().toString(36).slice(2, 8)}`,
      decisionPoint: 'crypto.order',
      scope: { kind: 'store', id: store.id },
      ...fields,
    },
  });
  expect(saved.status, saved.text).toBe(201);
  return saved.body.id;
};

const order = (total: string, email = 'ada@example.com', s: TestStore = store) => {
  const document = orderDocument({ total });
  document.data.attributes.customer.email = email;
  return h.request<OrderAnswer>('POST', '/crypto/api/stores/orders', { headers: s.auth, json: document });
};

const orderOf = async (id: string) =>
  (
    await h.request<{ data: { attributes: { status: string } } }>('GET', `/crypto/api/stores/orders/${id}`, {
      headers: store.auth,
    })
  ).body.data.attributes.status;

describe('rules at crypto.order', () => {
  it('blocks an order: a 403 in JSON:API errors naming no rule, nothing written, the decision recorded', async () => {
    const ruleId = await rule({ action: 'block', expression: 'amount >= 100000 && billing_country == "RO"' });
    const refused = await order('1500.00');
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.errors?.[0]?.status).toBe('403');
    expect(refused.text).not.toContain(ruleId);
    const decisions = await h.admin<{ data: { objectId: string; attributes: Record<string, unknown> }[] }>(
      'GET',
      `/risk/decisions?ruleId=${ruleId}`,
    );
    const [decision] = decisions.body.data;
    expect(decision?.attributes).toMatchObject({
      amount: 150000,
      currency: 'EUR',
      email: 'ada@example.com',
      email_domain: 'example.com',
      billing_country: 'RO',
      order: { line_items: 1 },
      store: { id: store.id },
    });
    const found = await h.request('GET', `/crypto/api/stores/orders/${decision?.objectId}`, {
      headers: store.auth,
    });
    expect(found.status).toBe(404);
    // Below the rule's amount, an order is written as ever.
    expect((await order('15.00')).status).toBe(201);
  });

  it('holds an order for review: no address until approved, then payable', async () => {
    await rule({ action: 'review', expression: 'email_domain == "held.example"' });
    const held = await order('20.00', 'eve@held.example');
    expect(held.status, held.text).toBe(201);
    const id = held.body.data?.id as string;
    expect(await orderOf(id)).toBe('pending');
    const page = await h.request('GET', `/crypto/pay/${id}`);
    expect(page.text).toContain('data-status="in_review"');
    expect(page.text).toContain('Your order is being checked');
    expect(page.text).not.toContain('name="option"');
    expect((await pay(h, id)).status).toBe(409);

    const reviews = await h.admin<{ data: Review[] }>(
      'GET',
      `/risk/reviews?tenant=${encodeURIComponent(`store:${store.id}`)}`,
    );
    const review = reviews.body.data.find((r) => r.objectId === id);
    expect(review?.status).toBe('pending');
    expect((await h.admin('POST', `/risk/reviews/${review?.id}/approve`)).status).toBe(200);
    expect((await h.request('GET', `/crypto/pay/${id}`)).text).toContain('name="option"');
    expect((await pay(h, id)).status).toBe(201);
    await h.advanceClock(600);
    expect(await orderOf(id)).toBe('paid');
  });

  it('a refused review cancels the order, the store told as of a buyer’s cancel', async () => {
    const held = await order('30.00', 'risk-review@example.com');
    const id = held.body.data?.id as string;
    const reviews = await h.admin<{ data: Review[] }>(
      'GET',
      `/risk/reviews?tenant=${encodeURIComponent(`store:${store.id}`)}`,
    );
    const review = reviews.body.data.find((r) => r.objectId === id);
    expect((await h.admin('POST', `/risk/reviews/${review?.id}/refuse`)).status).toBe(200);
    expect(await orderOf(id)).toBe('canceled');
    const events = await h.request<{ data: { attributes: { event_type: string } }[] }>(
      'GET',
      `/crypto/api/stores/events?objectId=${id}`,
      { headers: store.auth },
    );
    expect(JSON.stringify(events.body)).toContain('ORDER.PAYMENT.CANCELLED');
  });

  it('reads velocity per buyer email: the third order of an email within 10 minutes is blocked', async () => {
    const other = await aStore(h);
    const saved = await h.admin('POST', '/risk/rules', {
      json: {
        name: 'three a buyer',
        decisionPoint: 'crypto.order',
        scope: { kind: 'store', id: other.id },
        action: 'block',
        expression: 'velocity.email.count_10m >= 2',
      },
    });
    expect(saved.status, saved.text).toBe(201);
    expect((await order('5.00', 'Fast@Buyer.example', other)).status).toBe(201);
    expect((await order('5.00', 'fast@buyer.example', other)).status).toBe(201);
    expect((await order('5.00', 'fast@buyer.example', other)).status).toBe(403);
    expect((await order('5.00', 'slow@buyer.example', other)).status).toBe(201);
    await h.advanceClock(601);
    expect((await order('5.00', 'fast@buyer.example', other)).status).toBe(201);
  });

  it('keeps every order’s signal, with no rule at all', async () => {
    const quiet = await aStore(h);
    const created = await order('7.00', 'q@example.com', quiet);
    expect(created.status).toBe(201);
    const now = (
      await h.request<{ now: string }>('GET', '/sandbox/clock', {
        headers: { authorization: `Bearer ${h.adminToken}` },
      })
    ).body.now;
    const backtest = await h.admin<{ evaluated: number; matched: number }>('POST', '/risk/rules/backtest', {
      json: {
        scope: { kind: 'store', id: quiet.id },
        decisionPoint: 'crypto.order',
        expression: 'amount == 700',
        from: new Date(Date.parse(now) - 86_400_000).toISOString(),
        to: new Date(Date.parse(now) + 1000).toISOString(),
      },
    });
    expect(backtest.status, backtest.text).toBe(200);
    expect(backtest.body).toMatchObject({ evaluated: 1, matched: 1 });
  });
});

describe('rules at crypto.refund', () => {
  const refunder = async () => aStore(h, { refundsEnabled: true });

  async function aPaidOrder(s: TestStore, total: string) {
    const created = await anOrder(h, s, { total });
    expect((await pay(h, created.id)).status).toBe(201);
    await h.advanceClock(150);
    const paid = await anOrderOf(h, s, created.id);
    return { orderId: created.id, paymentId: paid.payment_uuid as string };
  }

  const propose = (s: TestStore, paymentId: string, amount: string) =>
    h.request<{
      data?: { id: string; attributes: { status: string; decision_url: string } };
      errors?: { status: string }[];
    }>('POST', `/crypto/api/stores/refunds/${paymentId}`, {
      headers: s.auth,
      json: { data: { type: 'refunds', attributes: { amount, reason: 'customer demand' } } },
    });

  it('blocks a refund of most of a payment: a 403, nothing proposed, the order as it was', async () => {
    const s = await refunder();
    const saved = await h.admin<{ id: string }>('POST', '/risk/rules', {
      json: {
        name: 'large refunds',
        decisionPoint: 'crypto.refund',
        scope: { kind: 'store', id: s.id },
        action: 'block',
        expression: 'refund.share_bps > 5000 && payment.age_days < 1 && payment.asset == "USDC"',
      },
    });
    expect(saved.status, saved.text).toBe(201);
    const { orderId, paymentId } = await aPaidOrder(s, '20.00');
    const refused = await propose(s, paymentId, '15.00');
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.errors?.[0]?.status).toBe('403');
    expect((await anOrderOf(h, s, orderId)).status).toBe('paid');
    const decisions = await h.admin<{ data: { attributes: Record<string, unknown> }[] }>(
      'GET',
      `/risk/decisions?ruleId=${saved.body.id}`,
    );
    expect(decisions.body.data[0]?.attributes).toMatchObject({
      amount: 1500,
      refund: { share_bps: 7500, reason: 'customer demand' },
      payment: { total: 2000, asset: 'USDC', network: 'ETH', age_days: 0 },
    });
    expect((await propose(s, paymentId, '5.00')).status).toBe(201);
  });

  it('holds a proposal: the buyer cannot decide until approved; refused, it is rejected', async () => {
    const s = await refunder();
    const held = await aPaidOrder(s, '12.00');
    // The sandbox's test email holds every refund to that buyer: the order's customer is ada@example.com,
    // so a rule does it here.
    await h.admin('POST', '/risk/rules', {
      json: {
        name: 'hold refunds',
        decisionPoint: 'crypto.refund',
        scope: { kind: 'store', id: s.id },
        action: 'review',
        expression: 'email == "ada@example.com"',
      },
    });
    const proposed = await propose(s, held.paymentId, '4.00');
    expect(proposed.status, proposed.text).toBe(201);
    expect(proposed.body.data?.attributes.status).toBe('proposed');
    const link = new URL(proposed.body.data?.attributes.decision_url as string).pathname;
    const page = await h.request('GET', link);
    expect(page.text).toContain('data-status="in_review"');
    expect(page.text).not.toContain('name="address"');
    const accept = await h.request('POST', `/sandbox/crypto/refunds/${held.paymentId}/accept`, {
      headers: { authorization: `Bearer ${h.adminToken}` },
      json: { address: '0x000000000000000000000000000000000000dEaD' },
    });
    expect(accept.status).toBe(409);

    const reviews = await h.admin<{ data: Review[] }>(
      'GET',
      `/risk/reviews?tenant=${encodeURIComponent(`store:${s.id}`)}`,
    );
    const review = reviews.body.data.find((r) => r.objectId === proposed.body.data?.id);
    expect((await h.admin('POST', `/risk/reviews/${review?.id}/approve`)).status).toBe(200);
    expect((await h.request('GET', link)).text).toContain('name="address"');

    const second = await aPaidOrder(s, '9.00');
    const again = await propose(s, second.paymentId, '9.00');
    const secondReview = (
      await h.admin<{ data: Review[] }>('GET', `/risk/reviews?tenant=${encodeURIComponent(`store:${s.id}`)}`)
    ).body.data.find((r) => r.objectId === again.body.data?.id);
    expect((await h.admin('POST', `/risk/reviews/${secondReview?.id}/refuse`)).status).toBe(200);
    expect((await anOrderOf(h, s, second.orderId)).status).toBe('paid');
    const refund = await h.request<{ data: { attributes: { status: string } } }>(
      'GET',
      `/crypto/api/stores/refunds/${second.paymentId}`,
      { headers: s.auth },
    );
    expect(refund.body.data.attributes.status).toBe('rejected');
  });
});
