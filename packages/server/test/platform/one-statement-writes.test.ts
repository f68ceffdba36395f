// The common payments orders and card authorizations are written in one statement (createAtOnce,
// authorizeAtOnce). Those fast writes must leave exactly what the general path leaves: the same
// answers, rows, events and ledger postings. Two apps on two databases cloned from one template get the
// same requests, one with the one-statement writes and one without, and everything they wrote is compared
// (ids as their order of appearance, times and random references left out).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';
import { aCustomer, aMerchant, anOrder, newCard, payments } from '../harness/payments-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let fast: Harness;
let general: Harness;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  [fast, general] = await Promise.all([Harness.start(), Harness.start({ oneStatementWrites: false })]);
});
afterAll(async () => {
  await Promise.all([fast?.close(), general?.close()]);
  await receiver?.close();
});

/** Ids, references and times as placeholders numbered in order of appearance. */
function normalize(value: unknown, seen = new Map<string, string>()): unknown {
  const placeholder = (text: string) => {
    if (!seen.has(text)) seen.set(text, `#${seen.size + 1}`);
    return seen.get(text);
  };
  if (value instanceof Date) return '<time>';
  if (Array.isArray(value)) return value.map((v) => normalize(v, seen));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, v]) => {
        if (/(^|_)(at|date)$|At$|^timestamp$/.test(key)) return [key, v === null ? null : '<time>'];
        if (
          /(^id|Id|_id|reference)$/.test(key) &&
          v !== null &&
          (typeof v === 'string' || typeof v === 'number')
        ) {
          return [key, placeholder(String(v))];
        }
        if (key === 'payload' && typeof v === 'string') return [key, normalize(JSON.parse(v), seen)];
        // Capabilities are random; each app has its own port.
        if (key === 'creq') return [key, '<capability>'];
        if (typeof v === 'string') return [key, v.replace(/^http:\/\/127\.0\.0\.1:\d+/, '<base>')];
        if (key === 'operation_id' && typeof v === 'string')
          return [key, v.replace(/[\w-]+$/, (id) => placeholder(id) ?? '')];
        return [key, normalize(v, seen)];
      }),
    );
  }
  return value;
}

/** Everything the payments and issuing writes touch, in creation order. */
async function written(h: Harness): Promise<unknown> {
  const { db } = h.services;
  const q = async (text: string) => (await sql.raw(text).execute(db)).rows;
  const everything = normalize({
    orders: await q('SELECT * FROM payments_orders ORDER BY id'),
    transactions: await q('SELECT * FROM payments_transactions ORDER BY id'),
    network: await q(
      'SELECT a.* FROM card_network_authorizations a LEFT JOIN payments_transactions t ON t.network_reference = a.reference ORDER BY t.id, a.created_at',
    ),
    issuing: await q('SELECT * FROM issuing_transactions ORDER BY seq'),
    events: await q(
      "SELECT e.type, e.tenant_id, e.payload, e.target_url, d.url, d.max_attempts FROM events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.api IN ('payments', 'issuing') ORDER BY e.created_at, e.id",
    ),
    ledger: await q(`
      SELECT t.operation_id, t.kind, t.status, t.asset, t.metadata, a.owner_type,
        regexp_replace(a.purpose, '^settlement:\\d+$', 'settlement') AS purpose, e.amount
      FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id JOIN ledger_accounts a ON a.id = e.account_id
      WHERE a.owner_type LIKE 'payments%' OR t.operation_id LIKE 'issuing-auth%'
      ORDER BY t.created_at, t.id, a.owner_type, a.purpose`),
    // Shards are picked by transaction id, and issuing transaction ids are random: compared summed.
    balances: await q(`
      SELECT owner_type, owner_id, regexp_replace(purpose, ':\\d+$', '') AS purpose, sum(posted)::text AS posted,
        sum(pending_debits)::text AS pending_debits, sum(pending_credits)::text AS pending_credits
      FROM ledger_balances WHERE owner_type LIKE 'payments%' OR owner_type LIKE 'issuing%' OR owner_type = 'platform'
      GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`),
    // Fees and what each capture leaves the sites (docs/payouts.md), in creation order.
    balanceTransactions: await q(
      'SELECT owner, currency, type, source_type, source_id, gross, fee, net, created_at, available_at, payout_id FROM balance_transactions ORDER BY id',
    ),
  }) as { balances: unknown[] };
  // Two owners' balances (cardholders made the same way) differ only by their random ids, which sort
  // them: compared in the order of their normalized rows (each owner's placeholder was given earlier).
  const text = (row: unknown) => JSON.stringify(row);
  everything.balances.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
  return everything;
}

describe('one-statement writes', () => {
  it('leave what the general path leaves, for every kind of common order and authorization', async () => {
    const answers: unknown[][] = [[], []];
    for (const [i, h] of [fast, general].entries()) {
      const merchant = await aMerchant(h, { ipnUrl: receiver.url(), sites: 2 });
      const [site, other] = merchant.sites as unknown as [{ id: number }, { id: number }];
      // A fee schedule with a brand's own rate, so both paths post fees to the platform's revenue.
      await h.admin('PUT', `/merchants/${merchant.id}/sites/${site.id}/pricing`, {
        json: { percentBps: 140, fixed: { EUR: '0.25' }, brands: { amex: { percentBps: 290 } } },
      });
      const customer = await aCustomer(h, merchant, { siteId: String(site.id), identifier: 'differential' });
      const order = (fields: Record<string, string>) =>
        payments(h, merchant, 'POST', '/order', anOrder(customer, { siteId: String(site.id), ...fields }));
      const cases: Record<string, string>[] = [
        { cardTransactionMode: 'authAndCapture' },
        { cardTransactionMode: 'auth' },
        { ...newCard('5555555555554444'), externalOrderId: 'ext-1', externalCustomData: '{"cart":7}' },
        newCard('378282246310005'),
        newCard('4000000000000002'),
        newCard('4000000000009995'),
        newCard('4000000000000069'),
        newCard('4000000000003238'),
        newCard('4000000000003063'),
        // General path in both apps, so a fallback is compared too: a challenge, a lost answer, bad input.
        newCard('4000000000003220'),
        newCard('4000000000000119'),
        { cardCvv: '12' },
        { customerId: '999999' },
        {
          amount: '30.00',
          'transactionOption[splitPayment][splitSchema][0][toSite]': String(other.id),
          'transactionOption[splitPayment][splitSchema][0][amount]': '12.50',
        },
      ];
      for (const fields of cases) {
        const res = await order(fields);
        answers[i]?.push({ status: res.status, body: normalize(res.body) });
      }

      const partner = await h.admin<{ apiKey: string }>('POST', '/partners', {
        json: { name: 'Differential partner', webhookUrl: receiver.url() },
      });
      // The same authorizations unkeyed, and keyed (optimistic in the fast app: refused at the commit or
      // when queuing the webhook sends them, they run again), with and without a webhook URL.
      const quiet = await h.admin<{ apiKey: string }>('POST', '/partners', {
        json: { name: 'Quiet partner' },
      });
      for (const [apiKey, keyed] of [
        [partner.body.apiKey, false],
        [partner.body.apiKey, true],
        [quiet.body.apiKey, true],
      ] as const) {
        const cardholder = await aCardholder(h, apiKey, 5_00n);
        let sent = 0;
        const authorize = (amount: string, extra: Record<string, unknown> = {}) =>
          h.request('POST', '/sandbox/issuing/authorizations', {
            headers: {
              authorization: `Bearer ${h.adminToken}`,
              ...(keyed ? { 'idempotency-key': `auth-${cardholder.cardId}-${sent++}` } : {}),
            },
            json: { cardId: cardholder.cardId, amount, currency: 'EUR', merchant: 'Shop', ...extra },
          });
        const cardAction = async (action: 'freeze' | 'unfreeze') =>
          h.request('POST', `/issuing/v1/cards/${cardholder.cardId}/${action}`, {
            headers: await cardholder.relogin(),
          });
        for (const [amount, extra] of [
          ['2.00', {}],
          ['2.50', {}],
          ['1.00', {}], // the account is short now: declined, insufficient_funds
          ['0.50', { currency: 'USD' }],
          ['0.40', { threeDS: true }],
          ['0.10', {}],
          ['frozen', {}], // a card frozen since its last authorization: declined, card_not_active
          ['0.10', {}],
          ['unfrozen', {}],
          ['0.10', {}],
        ] as const) {
          if (amount === 'frozen' || amount === 'unfrozen') {
            expect((await cardAction(amount === 'frozen' ? 'freeze' : 'unfreeze')).status).toBe(200);
            continue;
          }
          const res = await authorize(amount, extra);
          answers[i]?.push({ status: res.status, body: normalize(res.body) });
        }
      }
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(await written(fast)).toEqual(await written(general));
    await expectLedgerInvariants(fast);
  });
});
