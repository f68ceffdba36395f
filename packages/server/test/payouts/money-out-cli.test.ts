// Money out from the shell (docs/payouts.md, CLI), each command a real process: `tessera admin
// set-pricing` and `set-payout-schedule` on the database (a running server hears of it), `tessera
// payout-run`, `tessera report` and `tessera reconcile` against the running server (exit 1 when the books
// do not reconcile, naming what does not).
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments, type TestMerchant } from '../harness/payments-builders.ts';
import { runCli } from '../harness/server-process.ts';

let h: Harness;
let m: TestMerchant;
let env: Record<string, string>;
let inbox: string;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-cli-bank-'));
  inbox = join(dir, 'inbox');
  h = await Harness.start({
    env: {
      TESSERA_BANK_RAIL: 'iso20022',
      TESSERA_BANK_OUTBOX_DIR: join(dir, 'outbox'),
      TESSERA_BANK_INBOX_DIR: inbox,
    },
  });
  m = await aMerchant(h);
  env = {
    TESSERA_ADMIN_TOKEN: h.adminToken,
    TESSERA_PUBLIC_URL: h.baseUrl,
    DATABASE_URL: h.databaseUrl,
    TESSERA_DATA_DIR: dir,
  };
});
afterAll(() => h.close());

describe('tessera admin set-pricing / set-payout-schedule', () => {
  it('sets a site’s fee and schedule from the shell; a running server charges it at once', async () => {
    const siteId = m.sites[0]?.id;
    const priced = await runCli(
      ['admin', 'set-pricing', '--tenant', `site:${siteId}`, '--percent-bps', '140', '--fixed', 'EUR:0.25'],
      env,
    );
    expect(priced.code, priced.stderr).toBe(0);
    expect(JSON.parse(priced.stdout)).toMatchObject({
      tenant: `site:${siteId}`,
      pricing: { percentBps: 140, fixed: { EUR: '0.25' } },
    });
    const scheduled = await runCli(
      [
        'admin',
        'set-payout-schedule',
        '--tenant',
        `site:${siteId}`,
        '--interval',
        'weekly',
        '--weekly-anchor',
        'friday',
        '--delay-days',
        '0',
      ],
      env,
    );
    expect(scheduled.code, scheduled.stderr).toBe(0);
    expect(JSON.parse(scheduled.stdout).payoutSchedule).toMatchObject({
      interval: 'weekly',
      weeklyAnchor: 'friday',
      delayDays: 0,
    });
    // The server heard of the change (a trigger NOTIFYs every process): its next capture pays the fee.
    await eventually(async () => {
      const pricing = await h.admin<{ percentBps: number }>(
        'GET',
        `/merchants/${m.id}/sites/${siteId}/pricing`,
      );
      return pricing.body.percentBps === 140 ? true : undefined;
    });
    const customer = await aCustomer(h, m);
    expect((await payments(h, m, 'POST', '/order', anOrder(customer, { amount: '100.00' }))).status).toBe(
      201,
    );
    const [capture] = (await payments(h, m, 'GET', '/balance-transaction?type=capture')).body.data;
    expect(capture).toMatchObject({ gross: '100.00', fee: '1.65', net: '98.35' });
  });

  it('refuses an unknown tenant, a bad amount or interval with exit 2, naming the mistake', async () => {
    const unknown = await runCli(
      ['admin', 'set-pricing', '--tenant', 'site:999999', '--percent-bps', '1'],
      env,
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('site:999999');
    const badFixed = await runCli(
      [
        'admin',
        'set-pricing',
        '--tenant',
        `site:${m.sites[0]?.id}`,
        '--percent-bps',
        '1',
        '--fixed',
        'EUR:0.255',
      ],
      env,
    );
    expect(badFixed.code).toBe(2);
    expect(badFixed.stderr).toContain('fixed.EUR');
    const badInterval = await runCli(
      ['admin', 'set-payout-schedule', '--tenant', `site:${m.sites[0]?.id}`, '--interval', 'hourly'],
      env,
    );
    expect(badInterval.code).toBe(2);
    expect(badInterval.stderr).toContain('hourly');
  });
});

describe('tessera payout-run, report and reconcile', () => {
  it('pays out, downloads the payout’s report and the day’s revenue, and reconciles clean', async () => {
    const siteId = m.sites[0]?.id;
    await h.admin('PUT', `/merchants/${m.id}/sites/${siteId}/bank-account`, {
      json: { iban: 'DE89370400440532013000', holderName: 'Shop' },
    });
    await h.admin('PUT', `/merchants/${m.id}/sites/${siteId}/payout-schedule`, {
      json: { interval: 'daily', delayDays: 0 },
    });
    const run = await runCli(['payout-run', '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    const made = JSON.parse(run.stdout) as { payouts: { id: string; amount: string }[]; sent: number };
    expect(made.payouts).toMatchObject([{ amount: '98.35' }]);
    expect(made.sent).toBe(1);
    const report = await runCli(['report', 'payout', '--payout', made.payouts[0]?.id as string], env);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stdout.split('\r\n')[1]).toMatch(/,capture,transaction,\d+,EUR,100\.00,1\.65,98\.35$/);
    const today = h.services.clock.now().toISOString().slice(0, 10);
    const revenue = await runCli(['report', 'revenue', '--from', today, '--to', today], env);
    expect(revenue.stdout).toBe(
      `date,tenant,currency,fees,transactions\r\n${today},site:${siteId},EUR,1.65,1\r\n`,
    );
    const balance = await runCli(
      ['report', 'balance', '--tenant', `site:${siteId}`, '--from', today, '--to', today],
      env,
    );
    expect(balance.stdout).toBe(
      `date,currency,gross,fee,net,closing_balance\r\n${today},EUR,1.65,1.65,0.00,0.00\r\n`,
    );
    const clean = await runCli(['reconcile'], env);
    expect(clean.code, clean.stdout + clean.stderr).toBe(0);
    expect(clean.stdout.split('\n')[0]).toBe(`${today}: clean`);
    // Each check says what it counted: the one payout in transit is a payout, its currency a currency.
    expect(clean.stdout).toMatch(/late_payouts\s+1 payouts in transit, against their arrival date/);
    expect(clean.stdout).toMatch(
      /payouts_in_transit\s+1 currencies of open payouts, against the in-transit account/,
    );
    // Every day proved again from the first: the same answer.
    const full = await runCli(['reconcile', '--full'], env);
    expect(full.code, full.stdout + full.stderr).toBe(0);
    expect(full.stdout).toBe(clean.stdout);
  });

  it('exits 1 when a statement line matches no payout, and names it', async () => {
    await mkdir(inbox, { recursive: true });
    await writeFile(
      join(inbox, 'stray.xml'),
      `<?xml version="1.0"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10"><CstmrPmtStsRpt><GrpHdr><MsgId>S1</MsgId></GrpHdr><OrgnlGrpInfAndSts><OrgnlMsgId>bkf_STRAYFILE</OrgnlMsgId><GrpSts>PART</GrpSts></OrgnlGrpInfAndSts><OrgnlPmtInfAndSts><TxInfAndSts><OrgnlEndToEndId>po_STRAY</OrgnlEndToEndId><TxSts>RJCT</TxSts></TxInfAndSts></OrgnlPmtInfAndSts></CstmrPmtStsRpt></Document>`,
    );
    await h.advanceClock(1);
    const dirty = await runCli(['reconcile'], env);
    expect(dirty.code).toBe(1);
    expect(dirty.stdout).toContain('1 findings');
    expect(dirty.stdout).toMatch(
      /bank_statements\s+stray\.xml: expected a line that matches a payout, found .*po_STRAY/,
    );
  });
});
