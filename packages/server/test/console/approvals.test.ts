// Four eyes on money (docs/console.md, Approvals): the operator sets a merchant's or a store's thresholds
// over the admin API; a console refund or payout above them, or a change of the payout bank account,
// waits as a request until a second person approves it (then it runs, once) or rejects it, or it expires
// on the sandbox clock. The requester never approves their own, a viewer never decides, another tenant
// never sees it, and every step is in the audit trail.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleRole } from '../../src/platform/db/schema.ts';
import { ConsoleClient } from '../harness/console-client.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments, type TestMerchant } from '../harness/payments-builders.ts';

let h: Harness;
let m: TestMerchant;
let siteId: number;

async function member(role: ConsoleRole, merchantId = m.id): Promise<ConsoleClient> {
  const email = `${role}-${randomBytes(4).toString('hex')}@approvals.example`;
  const password = 'correct horse battery staple';
  const created = await h.admin('POST', '/console-users', {
    json: { email, password, role, tenant: { kind: 'merchant', id: String(merchantId) } },
  });
  expect(created.status, created.text).toBe(201);
  const client = new ConsoleClient(h.baseUrl);
  expect((await client.signIn({ email, password })).location).toBe('/console');
  return client;
}

/** Opens the action's confirmation and sends its form (with its CSRF token and idempotency key). */
async function submit(client: ConsoleClient, path: string, fields: Record<string, string> = {}) {
  const page = await client.get(path);
  expect(page.status, page.text).toBe(200);
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
  const idempotencyKey = /name="idempotencyKey" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
  return client.post(path, { csrf, idempotencyKey, ...fields });
}

async function paidTransaction(amount: string): Promise<number> {
  const paid = await payments(h, m, 'POST', '/order', anOrder(await aCustomer(h, m), { amount }));
  expect(paid.status).toBe(201);
  return paid.body.data.transactionId as number;
}

const refunded = async (transactionId: number) =>
  (await payments(h, m, 'GET', `/transaction/${transactionId}`)).body.data.refundedAmount;

interface AuditRow {
  action: string;
  actor: string;
  objectId: string | null;
  detail: Record<string, unknown>;
}
/** The approval's own records (the console's requests about it are recorded beside them). */
const trailOf = async (objectId: string) =>
  (await h.admin<{ data: AuditRow[] }>('GET', `/audit-events?objectId=${objectId}`)).body.data.filter((r) =>
    ['approval.requested', 'approval.approved', 'approval.rejected', 'approval.expired'].includes(r.action),
  );

beforeAll(async () => {
  h = await Harness.start({ env: { TESSERA_RATE_LIMIT_PER_MINUTE: '100000' } });
  m = await aMerchant(h);
  siteId = m.sites[0]?.id as number;
  await h.admin('PUT', `/merchants/${m.id}/sites/${siteId}/payout-schedule`, {
    json: { interval: 'manual', delayDays: 0 },
  });
  await h.admin('PUT', `/merchants/${m.id}/sites/${siteId}/bank-account`, {
    json: { iban: 'DE89370400440532013000', holderName: 'Four Eyes Shop' },
  });
});
afterAll(() => h.close());

describe('approval thresholds (admin API)', () => {
  it('are set as a whole, read back exactly, and refused naming the field when wrong', async () => {
    const none = await h.admin<{ updatedAt: string | null; refund: object }>(
      'GET',
      `/merchants/${m.id}/approval-thresholds`,
    );
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ refund: {}, payout: {}, bankAccountChange: false, updatedAt: null });
    const set = await h.admin('PUT', `/merchants/${m.id}/approval-thresholds`, {
      json: {
        refund: { EUR: '50' },
        payout: { EUR: '100.00' },
        bankAccountChange: true,
        expiresAfterHours: 2,
      },
    });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toMatchObject({
      refund: { EUR: '50.00' },
      payout: { EUR: '100.00' },
      bankAccountChange: true,
      expiresAfterHours: 2,
    });
    for (const [body, field] of [
      [{ refund: { EUR: '1.001' } }, 'refund.EUR'],
      [{ refund: { XXX: '1' } }, 'refund.XXX'],
      [{ payout: { EUR: '-1' } }, 'payout.EUR'],
      [{ expiresAfterHours: 0 }, 'expiresAfterHours'],
      [{ bankAccountChange: 'yes' }, 'bankAccountChange'],
    ] as const) {
      const refused = await h.admin<{ error: { field: string } }>(
        'PUT',
        `/merchants/${m.id}/approval-thresholds`,
        {
          json: body,
        },
      );
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error.field).toBe(field);
    }
    // The refusals changed nothing.
    expect((await h.admin('GET', `/merchants/${m.id}/approval-thresholds`)).body).toMatchObject({
      refund: { EUR: '50.00' },
    });
    expect((await h.admin('PUT', '/merchants/999999/approval-thresholds', { json: {} })).status).toBe(404);
    // A store refunds over its API only: its policy has no refund thresholds.
    const store = await h.admin<{ id: string }>('POST', '/stores', { json: { name: 'Thresholds' } });
    const storeRefund = await h.admin<{ error: { field?: string } }>(
      'PUT',
      `/stores/${store.body.id}/approval-thresholds`,
      { json: { refund: { USDC: '1' } } },
    );
    expect(storeRefund.status).toBe(400);
    expect(
      (
        await h.admin('PUT', `/stores/${store.body.id}/approval-thresholds`, {
          json: { payout: { USDC: '10' } },
        })
      ).body,
    ).toMatchObject({ payout: { USDC: '10' } });
  });
});

describe('four eyes in the console', () => {
  it('a refund up to the threshold runs at once; above it waits for another member, who runs it once', async () => {
    const requester = await member('finance');
    const small = await paidTransaction('40.00');
    const now = await submit(requester, `/console/payments/transactions/${small}/refund`, {
      amount: '50.00',
    });
    expect(now.status).toBe(400); // more than was paid: the service's own refusal, not a request
    const atOnce = await submit(requester, `/console/payments/transactions/${small}/refund`, {
      amount: '40.00',
    });
    expect(atOnce.location).toMatch(/done=refunded$/);
    expect(await refunded(small)).toBe(40);

    const big = await paidTransaction('80.00');
    const asked = await submit(requester, `/console/payments/transactions/${big}/refund`, {
      amount: '60.00',
      reason: 'damaged',
    });
    expect(asked.status).toBe(303);
    const approvalPath = asked.location?.replace(/\?.*$/, '') as string;
    expect(approvalPath).toMatch(/^\/console\/approvals\/apr_[0-9A-Z]+$/);
    const approvalId = approvalPath.split('/').pop() as string;
    expect(await refunded(big)).toBe(0);
    const page = await requester.get(asked.location as string);
    expect(page.text).toContain('Waiting for a second person');
    expect(page.text).toContain('refund 60.00 EUR of transaction');
    expect(page.text).not.toContain('Approve…');
    expect(page.text).toContain('another member must approve it');

    // The requester cannot approve their own request, even by posting the form.
    const own = await requester.post(`${approvalPath}/approve`, {
      csrf: await requester.csrf(`${approvalPath}/reject`),
    });
    expect(own.status).toBe(403);
    expect(own.text).toContain('four eyes');
    // A viewer sees it but may not decide; another merchant's member does not see it at all.
    const viewer = await member('viewer');
    expect((await viewer.get('/console/approvals')).text).toContain(approvalId);
    expect((await viewer.get(`${approvalPath}/approve`)).status).toBe(403);
    const stranger = await member('finance', (await aMerchant(h)).id);
    expect((await stranger.get(approvalPath)).status).toBe(404);
    expect((await stranger.get('/console/approvals')).text).not.toContain(approvalId);
    expect(await refunded(big)).toBe(0);

    // A second finance member approves: the refund runs, once, however often the form is sent.
    const second = await member('finance');
    const confirm = await second.get(`${approvalPath}/approve`);
    expect(confirm.text).toContain('refund 60.00 EUR');
    const form = {
      csrf: /name="csrf" value="([^"]+)"/.exec(confirm.text)?.[1] ?? '',
      idempotencyKey: /name="idempotencyKey" value="([^"]+)"/.exec(confirm.text)?.[1] ?? '',
    };
    const approved = await second.post(`${approvalPath}/approve`, form);
    expect(approved.status).toBe(303);
    expect(approved.location).toBe(`${approvalPath}?done=approved`);
    expect((await second.post(`${approvalPath}/approve`, form)).status).toBe(303); // the same answer, replayed
    expect(await refunded(big)).toBe(60);
    const again = await submit(second, `${approvalPath}/approve`);
    expect(again.status).toBe(409);
    expect(await refunded(big)).toBe(60);
    const decided = await second.get(approvalPath);
    expect(decided.text).toContain('approved');
    expect(decided.text).toMatch(/href="\/console\/payments\/transactions\/\d+"/);

    const trail = await trailOf(approvalId);
    expect(trail.map((r) => r.action).sort()).toEqual(['approval.approved', 'approval.requested']);
    expect(trail.find((r) => r.action === 'approval.requested')?.detail).toMatchObject({
      action: 'refund',
      amount: '6000',
      currency: 'EUR',
    });
    expect(trail.find((r) => r.action === 'approval.approved')?.actor).not.toBe(
      trail.find((r) => r.action === 'approval.requested')?.actor,
    );
  });

  it('a rejected request does nothing, and a pending one expires on the clock', async () => {
    const requester = await member('finance');
    const t = await paidTransaction('90.00');
    const first = await submit(requester, `/console/payments/transactions/${t}/refund`, { amount: '70.00' });
    const second = await submit(requester, `/console/payments/transactions/${t}/refund`, { amount: '80.00' });
    const [rejectPath, expirePath] = [first, second].map(
      (a) => a.location?.replace(/\?.*$/, '') as string,
    ) as [string, string];
    const admin = await member('admin');
    const rejected = await submit(admin, `${rejectPath}/reject`);
    expect(rejected.location).toBe(`${rejectPath}?done=rejected`);
    expect(await refunded(t)).toBe(0);

    // Policy: 2 hours. The sweep marks it expired and records that; approving it now is refused.
    await h.advanceClock(2 * 3600 + 1);
    const expiredPage = await admin.get(expirePath);
    expect(expiredPage.text).toContain('data-status="expired"');
    expect(expiredPage.text).not.toContain('Approve…');
    const late = await admin.post(`${expirePath}/approve`, { csrf: await admin.csrf(`${rejectPath}`) });
    expect(late.status).toBe(409);
    expect(await refunded(t)).toBe(0);
    const id = expirePath.split('/').pop() as string;
    expect((await trailOf(id)).map((r) => r.action).sort()).toEqual([
      'approval.expired',
      'approval.requested',
    ]);
    const pending = await admin.get('/console/approvals?status=pending');
    expect(pending.text).not.toContain(id);
  });

  it('a payout above the threshold and a bank account change wait for approval', async () => {
    const requester = await member('finance');
    await paidTransaction('150.00');
    const owner = `site:${siteId}`;
    const asked = await submit(requester, `/console/money/payouts/new?tenant=${owner}&currency=EUR`, {
      tenant: owner,
      currency: 'EUR',
      amount: '',
    });
    expect(asked.location).toMatch(/^\/console\/approvals\/apr_/);
    const payoutsBefore = (await requester.get('/console/money/payouts')).text.match(/po_[0-9A-Z]+/g) ?? [];
    const approver = await member('admin');
    const approvalPath = asked.location?.replace(/\?.*$/, '') as string;
    const approved = await submit(approver, `${approvalPath}/approve`);
    expect(approved.status, approved.text).toBe(303);
    const result = await approver.get(approvalPath);
    const payoutHref = /href="(\/console\/money\/payouts\/po_[0-9A-Z]+)"/.exec(result.text)?.[1] as string;
    expect(payoutHref).toBeDefined();
    expect(payoutsBefore).not.toContain(payoutHref.split('/').pop());
    // Everything available at the time of asking was fixed in the request, and paid.
    const fixed = /pay out (\d+\.\d{2} EUR)/.exec(result.text)?.[1] as string;
    expect(Number.parseFloat(fixed)).toBeGreaterThan(100);
    expect((await approver.get(payoutHref)).text).toContain(fixed);

    // A small payout (under 100.00 EUR) runs at once.
    await paidTransaction('20.00');
    const small = await submit(requester, `/console/money/payouts/new?tenant=${owner}&currency=EUR`, {
      tenant: owner,
      currency: 'EUR',
      amount: '10.00',
    });
    expect(small.location).toMatch(/^\/console\/money\/payouts\/po_/);

    // The bank account: a bad IBAN is refused on the form; a good one waits, then takes the next payout.
    const accountPath = `/console/money/bank-accounts/${encodeURIComponent(owner)}`;
    const bad = await submit(requester, accountPath, { iban: 'DE00 1234', holderName: 'New Holder' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('aria-invalid="true"');
    const change = await submit(requester, accountPath, {
      iban: 'FR14 2004 1010 0505 0001 3M02 606',
      holderName: 'New Holder',
    });
    expect(change.location).toMatch(/^\/console\/approvals\/apr_/);
    const changePath = change.location?.replace(/\?.*$/, '') as string;
    const waiting = await approver.get(changePath);
    expect(waiting.text).toContain('FR14*******************2606');
    expect(waiting.text).not.toContain('20041010050500013M02606');
    expect(
      (await h.admin<{ iban: string }>('GET', `/merchants/${m.id}/sites/${siteId}/bank-account`)).body.iban,
    ).toMatch(/^DE89/);
    expect((await submit(approver, `${changePath}/approve`)).status).toBe(303);
    const account = await h.admin<{ iban: string; holderName: string }>(
      'GET',
      `/merchants/${m.id}/sites/${siteId}/bank-account`,
    );
    expect(account.body).toMatchObject({ holderName: 'New Holder' });
    expect(account.body.iban).toBe('FR14*******************2606');
    // No IBAN in the trail beyond its last four.
    const id = changePath.split('/').pop() as string;
    expect(JSON.stringify(await trailOf(id))).not.toContain('20041010050500013M02606');
  });
});
