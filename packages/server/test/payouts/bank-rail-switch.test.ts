// Switching the bank rail with payouts in flight (docs/payouts.md, Switching the bank rail): a payout the
// simulator sent finishes on the simulator's terms after a switch to files, one sent in a bank file is
// still booked by the bank's camt.054 after a switch back, each switch says so at start, the sandbox's
// `pay` lever books a file payout through the real reading path, and reconcile names a payout left in
// transit past its arrival date.
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient } from '../harness/console-client.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments, type TestMerchant } from '../harness/payments-builders.ts';

const DAY = 86_400;
let h: Harness;
let m: TestMerchant;
let inbox: string;
const files = () => ({ TESSERA_BANK_RAIL: 'iso20022' });
const simulator = () => ({ TESSERA_BANK_RAIL: 'simulator' });

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-rail-switch-'));
  inbox = join(dir, 'inbox');
  h = await Harness.start({
    captureLogs: true,
    env: { TESSERA_BANK_OUTBOX_DIR: join(dir, 'outbox'), TESSERA_BANK_INBOX_DIR: inbox },
  });
  m = await aMerchant(h);
  const site = m.sites[0]?.id as number;
  await h.admin('PUT', `/merchants/${m.id}/sites/${site}/payout-schedule`, {
    json: { interval: 'daily', delayDays: 0 },
  });
  await h.admin('PUT', `/merchants/${m.id}/sites/${site}/bank-account`, {
    json: { iban: 'DE89370400440532013000', holderName: 'Switch Shop' },
  });
});
afterAll(() => h.close());

/** A capture paid out by an explicit run on a new day (one scheduled payout a day). */
async function paidOut(amount: string) {
  await h.advanceClock(DAY);
  const customer = await aCustomer(h, m);
  expect((await payments(h, m, 'POST', '/order', anOrder(customer, { amount }))).status).toBe(201);
  const run = await h.admin<{ payouts: { id: string; amount: string }[] }>('POST', '/payout-runs');
  expect(run.body.payouts).toHaveLength(1);
  return run.body.payouts[0]?.id as string;
}

const payout = async (id: string) =>
  (await h.admin<{ status: string; arrivalDate: string | null }>('GET', `/payouts/${id}`)).body;

async function reconcile() {
  const today = h.services.clock.now().toISOString().slice(0, 10);
  return (
    await h.admin<{ findings: { check: string; subject: string }[]; checked: Record<string, number> }>(
      'GET',
      `/reconcile?date=${today}`,
    )
  ).body;
}

describe('switching the bank rail with payouts in flight', () => {
  it('pays a payout the simulator sent on its arrival day after a switch to files, and says so at start', async () => {
    const id = await paidOut('20.00');
    expect(await payout(id)).toMatchObject({ status: 'in_transit' });
    await h.restart(files());
    expect(h.logs.join('')).toContain('1 payouts the bank simulator sent are still in transit');
    await h.advanceClock(2 * DAY);
    expect(await payout(id)).toMatchObject({ status: 'paid' });
    expect((await reconcile()).findings).toEqual([]);
  });

  it('books a payout sent in a bank file with the sandbox’s pay lever: a camt.054 read from the inbox', async () => {
    const id = await paidOut('30.00');
    expect(await payout(id)).toMatchObject({ status: 'in_transit' });
    const paid = await h.request<{ status: string }>('POST', `/sandbox/bank/payouts/${id}/pay`, {
      headers: { authorization: `Bearer ${h.adminToken}` },
    });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ id, status: 'paid' });
    expect(await readdir(join(inbox, 'processed'))).toContain(`sandbox-camt054-${id}.xml`);
    const read = await h.services.db
      .selectFrom('bank_inbox_files')
      .select(['kind', 'status', 'detail'])
      .where('file_name', '=', `sandbox-camt054-${id}.xml`)
      .executeTakeFirstOrThrow();
    expect(read).toMatchObject({ kind: 'camt.054', status: 'applied' });
    expect((await reconcile()).findings).toEqual([]);
  });

  it('still reads the bank’s booking of a file payout after a switch back to the simulator', async () => {
    const id = await paidOut('40.00');
    await h.restart(simulator());
    expect(h.logs.join('')).toContain('1 payouts sent as bank files are still in transit');
    const paid = await h.request<{ status: string }>('POST', `/sandbox/bank/payouts/${id}/pay`, {
      headers: { authorization: `Bearer ${h.adminToken}` },
    });
    expect(paid.body).toMatchObject({ id, status: 'paid' });
  });

  it('names in reconcile a payout left in transit more than two days past its arrival date', async () => {
    await h.restart(files());
    const id = await paidOut('50.00');
    expect((await reconcile()).findings).toEqual([]);
    await h.advanceClock(4 * DAY);
    const report = await reconcile();
    expect(report.checked.late_payouts).toBe(1);
    expect(report.findings).toMatchObject([{ check: 'late_payouts', subject: id }]);
    // Booked at last: nothing is late any more.
    await h.request('POST', `/sandbox/bank/payouts/${id}/pay`, {
      headers: { authorization: `Bearer ${h.adminToken}` },
    });
    expect((await reconcile()).findings).toEqual([]);
  });

  it('lets the operator book a payout as paid from its console page, through the same camt.054', async () => {
    await h.restart(files());
    const id = await paidOut('60.00');
    const operator = await ConsoleClient.operator(h);
    const page = await operator.get(`/console/money/payouts/${id}`);
    expect(page.text).toContain('The bank books it (paid)');
    const booked = await operator.post(`/console/sandbox/payouts/${id}/bank`, {
      csrf: await operator.csrf(`/console/money/payouts/${id}`),
      outcome: 'paid',
    });
    expect(booked.status).toBe(303);
    expect(await payout(id)).toMatchObject({ status: 'paid' });
    expect(await readdir(join(inbox, 'processed'))).toContain(`sandbox-camt054-${id}.xml`);
    expect((await operator.get(`/console/money/payouts/${id}?done=paid`)).text).toContain(
      'The bank booked it',
    );
  });
});
