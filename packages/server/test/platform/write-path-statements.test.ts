// The hot write paths' round trips to Postgres, counted on the pool (docs/benchmarks.md, Round trips): a
// payments order is a read (the customer and the new ids) and one statement with every write; a card
// authorization one statement (its card's statuses checked in it); a crypto order one INSERT. With an
// Idempotency-Key a one-statement write carries the key's row and answer in that statement (no more
// round trips); a write the general way is one transaction: BEGIN, the key's lock and row in one
// statement, the writes, the key's answer, COMMIT.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenantChangeSettled } from '../../src/platform/tenants/tenant-changes.ts';
import { Harness } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import { aCustomer, aMerchant, anOrder, payments } from '../harness/payments-builders.ts';

let h: Harness;
let recording: string[] | undefined;
/** The last request's statements in full */
let fullStatements: string[] = [];

beforeAll(async () => {
  h = await Harness.start({
    // One lease of the rate limit lasts the whole test.
    env: { TESSERA_RATE_LIMIT_PER_MINUTE: '1000000' },
    observeStatement: (statement) => {
      // The process's heartbeat and the reporting currency's rates, read in the background, are not the request's.
      if (!statement.includes('tessera_processes') && !statement.includes('fx_rate_overrides'))
        recording?.push(statement);
    },
  });
});
afterAll(() => h?.close());

/** The statements one call sends, after a first call has warmed caches (credentials, system accounts). */
async function statementsOf(call: (i: number) => Promise<{ status: number }>): Promise<string[]> {
  // A new credential's notice reaches this process after its answer and empties the cache; once every
  // process has heard, the warming call's cache entries stay.
  await tenantChangeSettled(h.services.db);
  expect((await call(0)).status).toBeLessThan(300);
  recording = [];
  const res = await call(1);
  const sent = recording;
  fullStatements = sent;
  recording = undefined;
  expect(res.status).toBeLessThan(300);
  return sent.map((s) => s.replace(/\s+/g, ' ').trim().slice(0, 60));
}

/** Ten rules at a decision point, every other one in shadow */
async function tenRules(
  decisionPoint: string,
  scope: { kind: string; id: string },
  action: string,
  expression: (i: number) => string,
) {
  for (let i = 0; i < 10; i++) {
    const created = await h.admin('POST', '/risk/rules', {
      json: {
        name: `rule ${i}`,
        scope,
        decisionPoint,
        expression: expression(i),
        action,
        mode: i % 2 === 0 ? 'active' : 'shadow',
      },
    });
    expect(created.status).toBe(201);
  }
}

describe('round trips of the hot write paths', () => {
  it('a payments order: one read, one write', async () => {
    const merchant = await aMerchant(h);
    const customer = await aCustomer(h, merchant);
    const sent = await statementsOf(() => payments(h, merchant, 'POST', '/order', anOrder(customer)));
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatch(/^SELECT c\.identifier, c\.email, c\.created_at, nextval/);
    expect(sent[1]).toMatch(/^WITH p0 AS/);
    // The capture credits the site's balance and debits the network's unbounded receivable: rows appended
    // without ledger_post (Ledger.pureCredits).
    expect(fullStatements[1]).toContain('INSERT INTO ledger_account_credits');
    expect(fullStatements[1]).toContain('INSERT INTO ledger_account_deltas');
    expect(fullStatements[1]).not.toContain('ledger_post');
  });

  it('a payments order under ten risk rules reading velocity: the same round trips, velocity counted in the read', async () => {
    const merchant = await aMerchant(h);
    const customer = await aCustomer(h, merchant);
    await tenRules(
      'payments.charge',
      { kind: 'merchant', id: String(merchant.id) },
      'block',
      (i) =>
        `velocity.ip.count_10m > ${100 + i} || velocity.card.sum_24h > 1000000 || amount > ${9_000_000 + i}`,
    );
    const sent = await statementsOf(() =>
      payments(h, merchant, 'POST', '/order', anOrder(customer, { ip: '192.0.2.1' })),
    );
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatch(/^SELECT c\.identifier, c\.email, c\.created_at, nextval/);
    expect(fullStatements[0]).toContain('FROM risk_signals');
    expect(sent[1]).toMatch(/^WITH p0 AS/);
    expect(fullStatements[1]).toContain('INSERT INTO risk_signals');
  });

  it('a card authorization: one statement (the card read at its first authorization only)', async () => {
    const partner = await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Counted' } });
    const cardholder = await aCardholder(h, partner.body.apiKey);
    const sent = await statementsOf(() =>
      h.request('POST', '/sandbox/issuing/authorizations', {
        headers: { authorization: `Bearer ${h.adminToken}` },
        json: { cardId: cardholder.cardId, amount: '1.00', currency: 'EUR', merchant: 'Shop' },
      }),
    );
    expect(sent).toEqual([expect.stringMatching(/^WITH p0 AS \( ?SELECT statement_guard/)]);
  });

  it('a card authorization under ten risk rules reading velocity: one statement, velocity checked in it', async () => {
    const partner = await h.admin<{ id: string; apiKey: string }>('POST', '/partners', {
      json: { name: 'Counted under rules' },
    });
    await tenRules(
      'issuing.authorization',
      { kind: 'partner', id: partner.body.id },
      'decline',
      (i) =>
        `velocity.card.count_10m > ${100 + i} || velocity.customer.sum_24h > 100000000 || amount > ${9_000_000 + i}`,
    );
    const cardholder = await aCardholder(h, partner.body.apiKey);
    const authorize = (amount: string) =>
      h.request<{ status: string; declineReason: string | null }>('POST', '/sandbox/issuing/authorizations', {
        headers: { authorization: `Bearer ${h.adminToken}` },
        json: { cardId: cardholder.cardId, amount, currency: 'EUR', merchant: 'Shop' },
      });
    const sent = await statementsOf(() => authorize('1.00'));
    expect(sent).toEqual([expect.stringMatching(/^WITH p0 AS \( ?SELECT statement_guard/)]);
    expect(fullStatements[0]).toContain('FROM risk_signals');
    expect(fullStatements[0]).toContain('a risk rule may match on velocity');

    // A rule that may match: the statement writes nothing, the rules decide with the velocity read
    const rule = await h.admin<{ id: string }>('POST', '/risk/rules', {
      json: {
        name: 'a card used twice in ten minutes',
        scope: { kind: 'partner', id: partner.body.id },
        decisionPoint: 'issuing.authorization',
        expression: 'velocity.card.count_10m >= 2',
        action: 'decline',
      },
    });
    expect(rule.status).toBe(201);
    await tenantChangeSettled(h.services.db);
    recording = [];
    const declined = await authorize('1.00');
    const sentThen = recording.map((q) => q.replace(/\s+/g, ' ').trim());
    recording = undefined;
    expect(declined.body).toMatchObject({ status: 'declined', declineReason: 'risk_declined' });
    // (the rule set, changed, read again first)
    const guarded = sentThen.findIndex((q) => /^WITH p0 AS \( ?SELECT statement_guard/.test(q));
    expect(guarded).toBeGreaterThanOrEqual(0);
    expect(sentThen[guarded + 1]).toMatch(/^SELECT \(SELECT json_build_array/);
    const written = await h.services.db
      .selectFrom('issuing_transactions')
      .select('status')
      .where('card_id', '=', cardholder.cardId)
      .execute();
    expect(written.map((t) => t.status).sort()).toEqual(['authorized', 'authorized', 'declined']);
  });

  it('a crypto order: one statement (the order and its risk signal), keyed or not', async () => {
    const store = await h.admin<{ id: string; clientId: string; clientSecret: string }>('POST', '/stores', {
      json: { name: 'Counted' },
    });
    const session = await h.request<{ data: { id: string } }>('POST', '/crypto/api/stores/session', {
      json: {
        data: {
          type: 'session',
          attributes: { client_id: store.body.clientId, client_secret: store.body.clientSecret },
        },
      },
    });
    const order = (i: number, key?: string) =>
      h.request('POST', '/crypto/api/stores/orders', {
        headers: {
          authorization: `Bearer ${session.body.data.id}`,
          ...(key ? { 'idempotency-key': `${key}-${i}-${Math.random()}` } : {}),
        },
        json: {
          data: {
            type: 'orders',
            attributes: {
              order: {
                reference: `counted-${i}`,
                amount: { total: '10.00', currency: 'EUR' },
                return_urls: { return_url: 'https://shop.example/return' },
                line_items: [{ sku: 'S-1', name: 'Item', price: '10.00', currency: 'EUR', quantity: 1 }],
              },
              customer: { email: 'buyer@example.com', country: 'RO' },
            },
          },
        },
      });
    expect(await statementsOf((i) => order(i))).toEqual([
      expect.stringMatching(/^WITH p0 AS \( ?INSERT INTO crypto_orders/),
    ]);
    expect(fullStatements[0]).toMatch(/INSERT INTO risk_signals/);
    // With an Idempotency-Key: still one statement, the key's row and answer in it.
    expect(await statementsOf((i) => order(i, 'counted'))).toEqual([
      expect.stringMatching(/^WITH p0 AS \( ?INSERT INTO crypto_orders/),
    ]);
    // Nothing is read back: the key's row is the statement's own INSERT, after the order's CTE (no empty
    // SELECT whose row description the driver would read).
    expect(fullStatements[0]).toMatch(/\)\s*INSERT INTO idempotency_keys/);
    expect(fullStatements[0]).not.toContain('SELECT NULL');

    // Under ten rules reading the buyer's velocity: the same one statement, the velocity checked in it
    await tenRules(
      'crypto.order',
      { kind: 'store', id: store.body.id },
      'block',
      (i) =>
        `velocity.email.count_1h > ${100 + i} || velocity.email.sum_24h > 100000000 || amount > ${9_000_000 + i}`,
    );
    for (const key of [undefined, 'counted-under-rules']) {
      expect(await statementsOf((i) => order(i, key))).toEqual([
        expect.stringMatching(/^WITH p0 AS \( ?SELECT statement_guard/),
      ]);
      expect(fullStatements[0]).toMatch(/INSERT INTO crypto_orders/);
    }
  });

  it('a payments order with an Idempotency-Key: the same round trips, the key in the write', async () => {
    const merchant = await aMerchant(h);
    const customer = await aCustomer(h, merchant);
    const sent = await statementsOf((i) =>
      h.request('POST', '/payments/order', {
        headers: { ...merchant.auth, 'idempotency-key': `counted-${i}-${Math.random()}` },
        form: anOrder(customer),
      }),
    );
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatch(/^SELECT c\.identifier, c\.email, c\.created_at, nextval/);
    expect(sent[1]).toMatch(/^WITH p0 AS/);
    const keyPart = await statementsOf((i) =>
      h.request('POST', '/payments/order', {
        headers: { ...merchant.auth, 'idempotency-key': `counted-full-${i}-${Math.random()}` },
        form: anOrder(customer),
      }),
    ).then(() => fullStatements.at(-1) ?? '');
    expect(keyPart).toContain('INSERT INTO idempotency_keys');
  });

  it('a keyed write the general way: BEGIN with the key’s lock and row, the writes, the answer with COMMIT', async () => {
    const merchant = await aMerchant(h);
    const customer = await aCustomer(h, merchant);
    const sent = await statementsOf((i) =>
      h.request('POST', '/payments/order', {
        headers: { ...merchant.auth, 'idempotency-key': `counted-general-${i}-${Math.random()}` },
        form: anOrder(customer, { saveCard: '1' }),
      }),
    );
    // BEGIN with the key's lock and row, and the key's answer with COMMIT, each one round trip.
    expect(sent[0]).toMatch(/^begin; SELECT pg_try_advisory_xact_lock/);
    expect(fullStatements.at(-1)).toMatch(/^INSERT INTO idempotency_keys[\s\S]+;\ncommit$/);
    const words = sent.map((s) => s.split(' ')[0]?.toLowerCase());
    expect(words).not.toContain('savepoint');
  });
});
