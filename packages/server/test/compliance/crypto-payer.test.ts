// Crypto paid from an address OFAC lists (docs/compliance.md, Monitoring): the sandbox chain pays an order
// from a chosen sender. An ordinary sender raises nothing. A listed one is credited to the order as the
// chain moved it, raises one alert in the store's case with the list entry beside the address, and holds
// the store at once: its next payout is made `held`, reconcile stays clean, and clearing the case lets
// exactly that payout go on.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anOrder, aStore, orderOf, pay, type TestStore } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { expectReconciledToday } from '../harness/ledger-invariants.ts';

const DAY = 86_400;
const ofac = readFileSync(fileURLToPath(new URL('./fixtures/ofac-sdn.xml', import.meta.url)), 'utf8');
const listed = /<idNumber>(0x[0-9a-fA-F]{40})<\/idNumber>/.exec(ofac)?.[1] as string;

let h: Harness;
let store: TestStore;

interface AlertView {
  kind: string;
  caseId: string;
  evidence: { address: string; orderId: string; entries: { source: string }[] };
}

const alertsOf = async (tenant: string) =>
  (await h.admin<{ data: AlertView[] }>('GET', `/compliance/alerts?tenant=${tenant}&limit=100`)).body.data;

beforeAll(async () => {
  h = await Harness.start();
  store = await aStore(h);
  await h.admin('PUT', `/stores/${store.id}/payout-schedule`, { json: { interval: 'daily', delayDays: 0 } });
  const account = await h.request('PUT', '/crypto/api/stores/bank_account', {
    headers: { ...store.auth, 'content-type': 'application/vnd.api+json' },
    body: JSON.stringify({
      data: {
        type: 'bank_accounts',
        attributes: { iban: 'DE89370400440532013000', holder_name: 'Shop GmbH' },
      },
    }),
  });
  expect(account.status, account.text).toBe(200);
  const imported = await h.admin('POST', '/compliance/sanctions/imports?source=ofac', {
    body: ofac,
    headers: { 'content-type': 'application/xml' },
  });
  expect(imported.status).toBe(201);
});
afterAll(() => h.close());

describe('a crypto payment’s sender', () => {
  it('is refused when it is not an address of the network (400 naming sender)', async () => {
    const order = await anOrder(h, store, { total: '5.00' });
    const res = await pay(h, order.id, { sender: 'not-an-address' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('sender');
  });

  it('raises nothing when no list names it, and is kept with the deposit', async () => {
    const order = await anOrder(h, store, { total: '5.00' });
    const sender = `0x${'12'.repeat(20)}`;
    expect((await pay(h, order.id, { sender })).status).toBe(201);
    const deposit = await h.services.db
      .selectFrom('crypto_deposits')
      .select('sender')
      .where('order_id', '=', order.id)
      .executeTakeFirstOrThrow();
    expect(deposit.sender).toBe(sender);
    expect(await alertsOf(`store:${store.id}`)).toEqual([]);
  });

  it('listed by OFAC: credited, one alert in the store’s case, the store’s payout held until the case is cleared', async () => {
    const order = await anOrder(h, store, { total: '40.00' });
    expect((await pay(h, order.id, { sender: listed.toLowerCase() })).status).toBe(201);
    await h.advanceClock(150);
    expect((await orderOf(h, store, order.id)).status).toBe('paid');
    const alerts = await alertsOf(`store:${store.id}`);
    expect(alerts).toEqual([
      expect.objectContaining({
        kind: 'scenario:payment_from_listed_address',
        evidence: expect.objectContaining({
          address: listed.toLowerCase(),
          orderId: order.id,
          entries: [expect.objectContaining({ source: 'ofac' })],
        }),
      }),
    ]);
    const caseId = alerts[0]?.caseId as string;
    const detail = await h.admin<{
      case: { subject: string };
      holds: { objectKind: string; objectId: string }[];
    }>('GET', `/compliance/cases/${caseId}`);
    expect(detail.body.case.subject).toBe(`store:${store.id}`);
    expect(detail.body.holds).toContainEqual(expect.objectContaining({ objectKind: 'subject' }));

    // The store's payouts made from then on are held; the money stays accounted for
    await h.advanceClock(DAY);
    const payouts = () =>
      h.services.db
        .selectFrom('payouts')
        .select(['id', 'status'])
        .where('owner', '=', `store:${store.id}`)
        .execute();
    const held = await payouts();
    expect(held.length).toBeGreaterThan(0);
    expect(held.map((p) => p.status)).toEqual(held.map(() => 'held'));
    const holds = (await h.admin<{ holds: { objectId: string }[] }>('GET', `/compliance/cases/${caseId}`))
      .body.holds;
    expect(holds.map((x) => x.objectId)).toEqual(expect.arrayContaining(held.map((p) => p.id)));
    await expectReconciledToday(h);

    const cleared = await h.admin('POST', `/compliance/cases/${caseId}/decision`, {
      json: { decision: 'cleared', reason: 'the address was reassigned; not the listed person' },
    });
    expect(cleared.status, cleared.text).toBe(200);
    expect((await payouts()).filter((p) => p.status === 'held')).toEqual([]);
  });
});
