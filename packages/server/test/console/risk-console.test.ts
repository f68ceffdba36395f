// Console › Risk (docs/risk.md, Console), over plain HTTP: the operator writes a list (items pasted as CSV,
// a bad one refused by its line) and a rule (a bad expression refused on the form with its line and column,
// what was typed kept), and the rule then acts on the payments API; a merchant's member sees and writes only
// their own scope, decides their reviews (a held charge approved is captured) and reads why; a backtest
// answers from the console; dispute monitoring shows a merchant's month against the schemes' levels.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleRole } from '../../src/platform/db/schema.ts';
import { ConsoleClient } from '../harness/console-client.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments, type TestMerchant } from '../harness/payments-builders.ts';

let h: Harness;
let m: TestMerchant;
let op: ConsoleClient;
beforeAll(async () => {
  h = await Harness.start();
  m = await aMerchant(h);
  op = await ConsoleClient.operator(h);
});
afterAll(() => h.close());

async function member(merchantId: number, role: ConsoleRole = 'finance'): Promise<ConsoleClient> {
  const email = `${role}-${randomBytes(4).toString('hex')}@risk.example`;
  const password = 'correct horse battery staple';
  const created = await h.admin('POST', '/console-users', {
    json: { email, password, role, tenant: { kind: 'merchant', id: String(merchantId) } },
  });
  expect(created.status, created.text).toBe(201);
  const client = new ConsoleClient(h.baseUrl);
  expect((await client.signIn({ email, password })).location).toBe('/console');
  return client;
}

/** Fills a confirmation form: its CSRF token and idempotency key, and the fields given. */
async function submit(client: ConsoleClient, path: string, fields: Record<string, string>) {
  const page = await client.get(path);
  expect(page.status, page.text).toBe(200);
  return client.post(path, {
    csrf: /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '',
    idempotencyKey: /name="idempotencyKey" value="([^"]+)"/.exec(page.text)?.[1] ?? '',
    ...fields,
  });
}

const fromHtml = (html: string) =>
  html
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

describe('risk in the console', () => {
  it('the operator imports a list and writes a rule that then blocks on the payments API', async () => {
    const listName = `ips_console_${m.id}`;
    const made = await submit(op, '/console/risk/lists/new', {
      name: listName,
      kind: 'ip',
      scope: `merchant:${m.id}`,
    });
    expect(made.status, made.text).toBe(303);
    const listPath = (made.location ?? '').split('?')[0] ?? '';
    expect(listPath).toMatch(/^\/console\/risk\/lists\/rl_/);

    // A pasted CSV file: its first column, a `value` header left out; one bad line refuses all, by its line.
    const bad = await submit(op, `${listPath}/items`, {
      items: 'value,note\n203.0.113.7,seen\nnot-an-ip,oops\n',
    });
    expect(bad.status).toBe(400);
    expect(fromHtml(bad.text)).toContain('item 2 (not-an-ip) is not an IP address or CIDR range');
    expect(bad.text).toContain('aria-invalid="true"');
    const added = await submit(op, `${listPath}/items`, {
      items: 'value,note\n203.0.113.7,seen\n"198.51.100.0/24","a, range"\n',
    });
    expect(added.status, added.text).toBe(303);
    const list = await op.get(listPath);
    expect(list.text).toContain('<code>198.51.100.0/24</code>');
    expect(list.text).toContain('<code>203.0.113.7</code>');

    // A bad expression: refused on the form with its position, what was typed kept.
    const typo = `ip in list('${listName}') && amount > "100"`;
    const refused = await submit(op, '/console/risk/rules/new', {
      name: 'console list block',
      scope: `merchant:${m.id}`,
      decisionPoint: 'payments.charge',
      expression: typo,
      action: 'block',
      mode: 'active',
      priority: '10',
    });
    expect(refused.status).toBe(400);
    expect(fromHtml(refused.text)).toMatch(/expression: .*\(line 1, column \d+\)/);
    expect(fromHtml(refused.text)).toContain(`>${typo}</textarea>`);
    // An action the decision point does not take names it.
    const wrongAction = await submit(op, '/console/risk/rules/new', {
      name: 'console list block',
      scope: `merchant:${m.id}`,
      decisionPoint: 'payments.charge',
      expression: `ip in list('${listName}')`,
      action: 'hold',
      mode: 'active',
      priority: '10',
    });
    expect(wrongAction.status).toBe(400);
    expect(fromHtml(wrongAction.text)).toContain('action must be one of allow, block, review, challenge');

    const saved = await submit(op, '/console/risk/rules/new', {
      name: 'console list block',
      scope: `merchant:${m.id}`,
      decisionPoint: 'payments.charge',
      expression: `ip in list('${listName}')`,
      action: 'block',
      mode: 'active',
      priority: '10',
    });
    expect(saved.status, saved.text).toBe(303);
    const rulePath = (saved.location ?? '').split('?')[0] ?? '';
    const customerId = await aCustomer(h, m);
    expect(
      (await payments(h, m, 'POST', '/order', anOrder(customerId, { ip: '198.51.100.42' }))).status,
    ).toBe(402);
    expect((await payments(h, m, 'POST', '/order', anOrder(customerId, { ip: '198.51.101.1' }))).status).toBe(
      201,
    );

    // Its page shows the decision it made and the values it read; edited to shadow, it stops acting.
    const page = await op.get(rulePath);
    expect(page.text).toContain('198.51.100.42');
    const edited = await submit(op, `${rulePath}/edit`, {
      name: 'console list block',
      expression: `ip in list('${listName}')`,
      action: 'block',
      mode: 'shadow',
      priority: '10',
    });
    expect(edited.status, edited.text).toBe(303);
    expect(
      (await payments(h, m, 'POST', '/order', anOrder(customerId, { ip: '198.51.100.42' }))).status,
    ).toBe(201);

    // Removing an item and deleting the rule and the list, each behind its confirmation.
    expect((await submit(op, `${listPath}/remove?value=203.0.113.7`, { value: '203.0.113.7' })).status).toBe(
      303,
    );
    expect((await op.get(listPath)).text).not.toContain('<code>203.0.113.7</code>');
    expect((await submit(op, `${rulePath}/delete`, {})).status).toBe(303);
    expect((await op.get(rulePath)).status).toBe(404);
    expect((await submit(op, `${listPath}/delete`, {})).status).toBe(303);

    // Each write is in the audit trail under the admin API's names.
    const audit = await op.get('/console/audit');
    for (const action of [
      'risk_list.created',
      'risk_list.items_added',
      'risk_rule.created',
      'risk_rule.updated',
      'risk_rule.deleted',
    ])
      expect(audit.text).toContain(action);
  });

  it('a member sees and writes only their own scope, decides their reviews, and reads why', async () => {
    const mine = await aMerchant(h);
    const other = await aMerchant(h);
    const platformRule = await h.admin<{ id: string }>('POST', '/risk/rules', {
      json: {
        name: 'platform secret',
        scope: { kind: 'platform' },
        decisionPoint: 'payments.charge',
        expression: 'amount > 99999999',
        action: 'block',
        mode: 'shadow',
      },
    });
    const foreignRule = await h.admin<{ id: string }>('POST', '/risk/rules', {
      json: {
        name: 'foreign',
        scope: { kind: 'merchant', id: String(other.id) },
        decisionPoint: 'payments.charge',
        expression: 'amount > 99999999',
        action: 'block',
      },
    });
    const finance = await member(mine.id);

    // Written in their own scope whatever the form says; the platform's and another's rules are not theirs.
    const saved = await submit(finance, '/console/risk/rules/new', {
      name: 'hold big',
      scope: `merchant:${other.id}`,
      decisionPoint: 'payments.charge',
      expression: 'amount >= 50000',
      action: 'review',
      mode: 'active',
      priority: '1',
    });
    expect(saved.status, saved.text).toBe(303);
    const rules = await finance.get('/console/risk/rules');
    expect(rules.text).toContain('hold big');
    expect(rules.text).toContain(`merchant:${mine.id}`);
    expect(rules.text).not.toContain('platform secret');
    expect(rules.text).not.toContain('foreign');
    expect((await finance.get(`/console/risk/rules/${platformRule.body.id}`)).status).toBe(404);
    expect((await finance.get(`/console/risk/rules/${foreignRule.body.id}/edit`)).status).toBe(404);
    // A decision point of another kind of tenant is not theirs to choose.
    const issuing = await submit(finance, '/console/risk/rules/new', {
      name: 'cards',
      decisionPoint: 'issuing.authorization',
      expression: 'amount > 1',
      action: 'decline',
      mode: 'active',
      priority: '1',
    });
    expect(issuing.status).toBe(400);

    // The held charge waits in their queue; approved, it is captured.
    const customerId = await aCustomer(h, mine);
    const held = await payments(h, mine, 'POST', '/order', anOrder(customerId, { amount: '500.00' }));
    const transactionId = String(held.body.data.transactionId);
    const queue = await finance.get('/console/risk/reviews');
    const reviewId = /href="\/console\/risk\/reviews\/(rv_[^"]+)"/.exec(queue.text)?.[1] as string;
    expect(reviewId).toBeDefined();
    expect(queue.text).toContain(transactionId);
    const review = await finance.get(`/console/risk/reviews/${reviewId}`);
    expect(review.text).toContain('The authorized charge is captured.');
    expect(review.text).toContain('&quot;amount&quot;: 50000');
    // Another merchant's member finds nothing of it.
    const stranger = await member(other.id);
    expect((await stranger.get(`/console/risk/reviews/${reviewId}`)).status).toBe(404);
    expect((await stranger.get('/console/risk/reviews')).text).not.toContain(reviewId);
    // A viewer reads the queue, without the values read (personal data), and may not decide.
    const viewer = await member(mine.id, 'viewer');
    expect((await viewer.get(`/console/risk/decisions?objectId=${transactionId}`)).text).toContain(
      'hidden (personal data)',
    );
    expect((await viewer.get(`/console/risk/reviews/${reviewId}/approve`)).status).toBe(403);
    // A cursor typed by hand that is no id, or past int8, reads the first page: never a 500.
    for (const before of ['abc', '9223372036854775808']) {
      expect((await viewer.get(`/console/risk/decisions?before=${before}`)).status).toBe(200);
    }

    const approved = await submit(finance, `/console/risk/reviews/${reviewId}/approve`, {});
    expect(approved.status, approved.text).toBe(303);
    const status = await payments(h, mine, 'GET', `/transaction/${transactionId}`);
    expect(status.body.data.transactionStatus).toBe('complete-ok');
    expect((await finance.get(`/console/risk/reviews/${reviewId}`)).text).toMatch(
      /data-status="approved"[\s\S]*by finance-/,
    );
    // Decided once: a second decision is refused on the form, nothing runs twice.
    expect((await submit(finance, `/console/risk/reviews/${reviewId}/refuse`, {})).status).toBe(409);
  });

  it('approving a held payout above the payout threshold waits for a second person, who releases it', async () => {
    const shop = await aMerchant(h);
    const site = shop.sites[0]?.id as number;
    await h.admin('PUT', `/merchants/${shop.id}/sites/${site}/payout-schedule`, {
      json: { interval: 'manual', delayDays: 0, minimum: '1.00' },
    });
    // The sandbox's test holder name holds every payout of the account for review.
    await h.admin('PUT', `/merchants/${shop.id}/sites/${site}/bank-account`, {
      json: { iban: 'DE89370400440532013000', holderName: 'Risk Payout Hold' },
    });
    await h.admin('PUT', `/merchants/${shop.id}/approval-thresholds`, { json: { payout: { EUR: '10.00' } } });
    expect(
      (await payments(h, shop, 'POST', '/order', anOrder(await aCustomer(h, shop), { amount: '60.00' })))
        .status,
    ).toBe(201);
    const held = await payments(h, shop, 'POST', '/payout', { siteId: String(site), currency: 'EUR' });
    expect(held.body.data).toMatchObject({ status: 'held' });
    const reviews = await h.admin<{ data: { id: string }[] }>(
      'GET',
      `/risk/reviews?tenant=merchant:${shop.id}`,
    );
    const reviewId = reviews.body.data[0]?.id as string;

    const first = await member(shop.id);
    const asked = await submit(first, `/console/risk/reviews/${reviewId}/approve`, {});
    expect(asked.status, asked.text).toBe(303);
    expect(asked.location).toMatch(/^\/console\/approvals\/apr_[^?]+\?done=requested$/);
    const payoutStatus = async () =>
      ((await payments(h, shop, 'GET', `/payout?siteId=${site}`)).body.data as { status: string }[])[0]
        ?.status;
    expect(await payoutStatus()).toBe('held');
    const approval = (asked.location ?? '').split('?')[0] ?? '';
    expect(fromHtml((await first.get(approval)).text)).toContain(
      `release the held payout ${held.body.data.id} of ${held.body.data.amount} EUR`,
    );

    const second = await member(shop.id);
    const done = await submit(second, `${approval}/approve`, {});
    expect(done.status, done.text).toBe(303);
    expect(await payoutStatus()).toBe('pending');
    const review = await second.get(`/console/risk/reviews/${reviewId}`);
    expect(review.text).toContain('data-status="approved"');
    // Refusing lets no money out: it never waits for a second person.
    const another = await payments(
      h,
      shop,
      'POST',
      '/order',
      anOrder(await aCustomer(h, shop), { amount: '30.00' }),
    );
    expect(another.status).toBe(201);
    await payments(h, shop, 'POST', '/payout', { siteId: String(site), currency: 'EUR' });
    const next = await h.admin<{ data: { id: string }[] }>('GET', `/risk/reviews?tenant=merchant:${shop.id}`);
    const refused = await submit(first, `/console/risk/reviews/${next.body.data[0]?.id}/refuse`, {});
    expect(refused.location).toMatch(/done=refused$/);
  });

  it('backtests a draft over a tenant’s history and offers to save it', async () => {
    const b = await aMerchant(h);
    const customerId = await aCustomer(h, b);
    for (const amount of ['10.00', '20.00', '700.00'])
      expect((await payments(h, b, 'POST', '/order', anOrder(customerId, { amount }))).status).toBe(201);
    const day = h.services.clock.now().toISOString().slice(0, 10);
    const answer = await submit(op, '/console/risk/backtest', {
      scope: `merchant:${b.id}`,
      decisionPoint: 'payments.charge',
      expression: 'amount >= 50000',
      from: day,
      to: day,
    });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).toMatch(/<dt>Evaluated<\/dt><dd>3<\/dd>/);
    expect(answer.text).toContain('1 of 3 (33.3 %)');
    expect(answer.text).toContain('700.00 EUR');
    expect(fromHtml(answer.text)).toContain('Save it as a rule');
    // The platform is no tenant: a backtest reads one tenant's history.
    const platform = await submit(op, '/console/risk/backtest', {
      scope: 'platform',
      decisionPoint: 'payments.charge',
      expression: 'true',
      from: day,
      to: day,
    });
    expect(platform.status).toBe(400);
  });

  it('shows a merchant’s month of disputes against the schemes’ levels', async () => {
    const d = await aMerchant(h);
    const customerId = await aCustomer(h, d);
    const paid = await payments(h, d, 'POST', '/order', anOrder(customerId));
    const chargeback = await h.request(
      'POST',
      `/sandbox/payments/transactions/${paid.body.data.transactionId}/chargeback`,
      {
        headers: { authorization: `Bearer ${h.adminToken}` },
        json: { reasonCode: '10.4' },
      },
    );
    expect(chargeback.status, chargeback.text).toBe(201);
    const page = await op.get('/console/payments/monitoring');
    expect(page.status).toBe(200);
    const row = new RegExp(
      `<td data-label="Merchant">${d.id}</td><td data-label="Disputes">1 \\(1 fraud\\)</td><td data-label="Payments settled">1</td>`,
    );
    expect(page.text).toMatch(row);
    expect(page.text).toContain('Mastercard EFM (fraud by amount)');
    // A member sees their own merchant only.
    expect((await (await member(m.id, 'viewer')).get('/console/payments/monitoring')).text).not.toMatch(row);
  });
});
