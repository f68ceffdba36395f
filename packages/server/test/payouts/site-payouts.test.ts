// Money out for payments sites and crypto stores, end to end (docs/payouts.md): a site priced 1.4 % +
// 0.25 EUR captures 100 orders and refunds 3; a store is paid in USDC and settles in EUR; two sandbox days
// later their balances are available; the daily run writes one pain.001 for the day's payouts (two sites
// and the store) that validates against the EPC's XSD; a camt.054 booking the file marks them paid; a
// camt.053 returning one credits that site's balance back; each payout's report sums to the payout to the
// cent, and `reconcile` is clean, or names exactly what is not.
import { copyFile, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { camt053Return, camt054Booking, pain002Rejection, xsdProblems } from '../harness/bank-files.ts';
import { anOrder as aCryptoOrder, aStore, pay, type TestStore } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments, type TestMerchant } from '../harness/payments-builders.ts';

const DAY = 86_400;
let h: Harness;
let m: TestMerchant;
let outbox: string;
let inbox: string;
let priced: number;
/** A crypto store paid in USDC that settles in EUR, paid out in the same run and file as the sites */
let store: TestStore;
let plain: number;
/** What each capture on the priced site leaves it: amount − (round-half-up(1.4 %) + 0.25), in cents */
const expectedNet: bigint[] = [];
const refunded: bigint[] = [];

const cents = (text: string) => BigInt(text.replace('.', ''));
const euros = (minor: bigint) => {
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(3, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
};
const sum = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);

async function balance(siteId: number) {
  const answer = await payments(h, m, 'GET', `/balance?siteId=${siteId}`);
  expect(answer.status).toBe(200);
  return answer.body.data.find((b: { currency: string }) => b.currency === 'EUR');
}

async function storePayout() {
  const listed = await h.request<{ data: { id: string; attributes: { status: string; amount: string } }[] }>(
    'GET',
    '/crypto/api/stores/payouts',
    { headers: store.auth },
  );
  const [payout] = listed.body.data;
  return { id: payout?.id as string, ...payout?.attributes };
}

async function payoutsOf(siteId: number) {
  const answer = await payments(h, m, 'GET', `/payout?siteId=${siteId}`);
  expect(answer.status).toBe(200);
  return answer.body.data as {
    id: string;
    status: string;
    amount: string;
    failureCode: string | null;
    arrivalDate: string | null;
  }[];
}

async function reconcile() {
  const date = (
    await h.request<{ now: string }>('GET', '/sandbox/clock', {
      headers: { authorization: `Bearer ${h.adminToken}` },
    })
  ).body.now.slice(0, 10);
  return (
    await h.admin<{
      clean: boolean;
      findings: { check: string; subject: string; actual: string }[];
      checked: Record<string, number>;
    }>('GET', `/reconcile?date=${date}`)
  ).body;
}

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-bank-'));
  outbox = join(dir, 'outbox');
  inbox = join(dir, 'inbox');
  h = await Harness.start({
    env: {
      TESSERA_BANK_RAIL: 'iso20022',
      TESSERA_BANK_OUTBOX_DIR: outbox,
      TESSERA_BANK_INBOX_DIR: inbox,
      TESSERA_BANK_DEBTOR_BIC: 'COBADEFFXXX',
    },
  });
  m = await aMerchant(h, { sites: 2 });
  priced = m.sites[0]?.id ?? 0;
  plain = m.sites[1]?.id ?? 0;
  store = await aStore(h);
});
afterAll(() => h.close());

describe('a site priced 1.4 % + 0.25 EUR', () => {
  it('is priced and given bank accounts by the operator', async () => {
    const pricing = await h.admin('PUT', `/merchants/${m.id}/sites/${priced}/pricing`, {
      json: { percentBps: 140, fixed: { EUR: '0.25' } },
    });
    expect(pricing.status).toBe(200);
    expect(pricing.body).toMatchObject({ percentBps: 140, fixed: { EUR: '0.25' }, refundFees: false });
    for (const [siteId, iban, name] of [
      [priced, 'FR1420041010050500013M02606', 'Boutique SAS'],
      [plain, 'NL91ABNA0417164300', 'Winkel BV'],
    ] as const) {
      const account = await h.admin('PUT', `/merchants/${m.id}/sites/${siteId}/bank-account`, {
        json: { iban, holderName: name },
      });
      expect(account.status).toBe(200);
    }
    expect(
      (
        await h.admin('PUT', `/stores/${store.id}/pricing`, {
          json: { percentBps: 100, fixed: { EUR: '0.10' } },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await h.admin('PUT', `/stores/${store.id}/bank-account`, {
          json: { iban: 'BE68539007547034', holderName: 'Crypto Winkel' },
        })
      ).status,
    ).toBe(200);
  });

  it('captures 100 orders, each credited net of its fee, and refunds 3 (the fee is kept)', async () => {
    const customer = await aCustomer(h, m, { siteId: String(priced) });
    const transactions: number[] = [];
    for (let i = 0; i < 100; i++) {
      const amount = 10_00n + BigInt(i * 37); // 10.00, 10.37, … (varied cents, so rounding is exercised)
      const order = await payments(
        h,
        m,
        'POST',
        '/order',
        anOrder(customer, { siteId: String(priced), amount: euros(amount) }),
      );
      expect(order.status, order.text).toBe(201);
      transactions.push(order.body.data.transactionId);
      const fee = (amount * 140n + 5_000n) / 10_000n + 25n;
      expectedNet.push(amount - fee);
    }
    for (const i of [3, 50, 99]) {
      const amount = 10_00n + BigInt(i * 37);
      const refund = await payments(
        h,
        m,
        'DELETE',
        `/transaction/${transactions[i]}`,
        i === 50 ? { amount: '5.00' } : {},
      );
      expect(refund.status, refund.text).toBe(200);
      refunded.push(i === 50 ? 5_00n : amount);
    }
    // The other site: three plain captures (no fee by default).
    const other = await aCustomer(h, m, { siteId: String(plain) });
    for (const amount of ['20.00', '30.00', '50.00']) {
      expect(
        (await payments(h, m, 'POST', '/order', anOrder(other, { siteId: String(plain), amount }))).status,
      ).toBe(201);
    }
    // The store: an order of 40.00 EUR paid in USDC, settled at its quote less 1 % + 0.10.
    const crypto = await aCryptoOrder(h, store, { total: '40.00' });
    expect((await pay(h, crypto.id)).status).toBe(201);
    await h.advanceClock(150);
    const storeBalance = await h.request<{ data: { attributes: Record<string, string> }[] }>(
      'GET',
      '/crypto/api/stores/balance',
      { headers: store.auth },
    );
    expect(storeBalance.body.data[0]?.attributes).toMatchObject({ currency: 'EUR', pending: '39.50' });
    const b = await balance(priced);
    // Captures wait out the 2-day delay; refunds take from what is available at once (negative now).
    expect(b).toMatchObject({
      pending: euros(sum(expectedNet)),
      available: euros(-sum(refunded)),
      reserved: '0.00',
    });
    const fees = await payments(h, m, 'GET', `/balance-transaction?siteId=${priced}&type=capture&perPage=5`);
    expect(fees.body.data).toHaveLength(5);
    expect((fees.body as { hasMore?: boolean }).hasMore).toBe(true);
    const last = fees.body.data[0];
    expect(cents(last.gross) - cents(last.fee)).toBe(cents(last.net));
    expect(cents(last.net)).toBe(expectedNet[99]);
    expect((await reconcile()).clean).toBe(true);
  });

  it('becomes available two sandbox days later, when the daily run pays it out in one pain.001 that validates against the XSD', async () => {
    await h.advanceClock(DAY);
    expect(await payoutsOf(priced)).toEqual([]);
    expect((await balance(priced)).available).toBe(euros(-sum(refunded)));
    await h.advanceClock(DAY + 60);
    const [payout] = await payoutsOf(priced);
    expect(payout).toMatchObject({ status: 'in_transit', amount: euros(sum(expectedNet) - sum(refunded)) });
    expect(await balance(priced)).toMatchObject({ available: '0.00', pending: '0.00' });
    const [other] = await payoutsOf(plain);
    expect(other).toMatchObject({ status: 'in_transit', amount: '100.00' });
    const fromStore = await storePayout();
    expect(fromStore).toMatchObject({ status: 'in_transit', amount: '39.50' });

    const files = (await readdir(outbox)).filter((f) => f.endsWith('.xml'));
    expect(files).toHaveLength(1);
    const file = join(outbox, files[0] as string);
    expect(xsdProblems(file, 'pain.001.001.09.xsd')).toBe('');
    const xml = await readFile(file, 'utf8');
    expect(xml).toContain(`<EndToEndId>${payout?.id}</EndToEndId>`);
    expect(xml).toContain(`<EndToEndId>${other?.id}</EndToEndId>`);
    expect(xml).toContain('<IBAN>FR1420041010050500013M02606</IBAN>');
    expect(xml).toContain(`<EndToEndId>${fromStore.id}</EndToEndId>`);
    expect(xml).toContain(`<CtrlSum>${euros(cents(payout?.amount ?? '0') + 100_00n + 39_50n)}</CtrlSum>`);
    // Running the schedule again the same day pays nothing twice.
    const again = await h.admin<{ payouts: unknown[]; sent: number }>('POST', '/payout-runs');
    expect(again.body).toEqual({ payouts: [], sent: 0, failures: [] });
    expect((await readdir(outbox)).filter((f) => f.endsWith('.xml'))).toHaveLength(1);
  });

  it('has a settlement report per payout that sums to the payout to the cent', async () => {
    const [payout] = await payoutsOf(priced);
    const report = await h.request('GET', `/payments/payout/${payout?.id}/report`, { headers: m.auth });
    expect(report.status).toBe(200);
    expect(report.headers.get('content-type')).toContain('text/csv');
    const [header, ...lines] = report.text.trimEnd().split('\r\n');
    expect(header).toBe(
      'balance_transaction_id,created_at,available_at,type,source_type,source_id,currency,gross,fee,net',
    );
    expect(lines).toHaveLength(103);
    const nets = lines.map((line) => cents(line.split(',')[9] as string));
    expect(euros(sum(nets))).toBe(payout?.amount);
    expect(lines.filter((l) => l.includes(',refund,'))).toHaveLength(3);
    const fromStore = await storePayout();
    const storeReport = await h.request('GET', `/crypto/api/stores/payouts/${fromStore.id}/report`, {
      headers: store.auth,
    });
    const storeLines = storeReport.text.trimEnd().split('\r\n').slice(1);
    expect(storeLines.map((l) => l.split(',').slice(3, 6).join(','))).toEqual([
      `capture,crypto_transfer,${storeLines[0]?.split(',')[5]}`,
    ]);
    expect(storeLines[0]?.split(',').slice(7)).toEqual(['40.00', '0.50', '39.50']);
    expect((await reconcile()).clean).toBe(true);
  });

  it('is marked paid by a camt.054 booking the file, and credited back by a camt.053 returning one payout', async () => {
    const [payout] = await payoutsOf(priced);
    const [other] = await payoutsOf(plain);
    const fileId = (await readdir(outbox))
      .find((f) => f.endsWith('.xml'))
      ?.match(/(bkf_[0-9A-Z]+)/)?.[1] as string;
    const bookingDate = (
      await h.request<{ now: string }>('GET', '/sandbox/clock', {
        headers: { authorization: `Bearer ${h.adminToken}` },
      })
    ).body.now.slice(0, 10);
    await writeFile(
      join(inbox, 'camt054-1.xml'),
      camt054Booking({
        messageId: 'NTF-0001',
        paymentFileId: fileId,
        bookingDate,
        currency: 'EUR',
        transfers: [
          {
            endToEndId: payout?.id as string,
            amount: payout?.amount as string,
            creditorName: 'Boutique SAS',
            creditorIban: 'FR1420041010050500013M02606',
          },
          {
            endToEndId: other?.id as string,
            amount: '100.00',
            creditorName: 'Winkel BV',
            creditorIban: 'NL91ABNA0417164300',
          },
          {
            endToEndId: (await storePayout()).id,
            amount: '39.50',
            creditorName: 'Crypto Winkel',
            creditorIban: 'BE68539007547034',
          },
        ],
      }),
    );
    await h.advanceClock(1);
    expect((await payoutsOf(priced))[0]).toMatchObject({ status: 'paid', arrivalDate: bookingDate });
    expect((await payoutsOf(plain))[0]).toMatchObject({ status: 'paid' });
    expect(await storePayout()).toMatchObject({ status: 'paid' });
    expect(await readdir(join(inbox, 'processed'))).toContain('camt054-1.xml');

    const statement = camt053Return({
      messageId: 'STMT-0001',
      bookingDate,
      currency: 'EUR',
      returned: {
        endToEndId: other?.id as string,
        amount: '100.00',
        creditorName: 'Winkel BV',
        creditorIban: 'NL91ABNA0417164300',
        reasonCode: 'AC04',
      },
    });
    await writeFile(join(inbox, 'camt053-1.xml'), statement);
    expect(xsdProblems(join(inbox, 'camt053-1.xml'), 'camt.053.001.08.xsd')).toBe('');
    await h.advanceClock(1);
    expect((await payoutsOf(plain))[0]).toMatchObject({ status: 'returned', failureCode: 'AC04' });
    expect(await balance(plain)).toMatchObject({ available: '100.00' });
    const back = await payments(h, m, 'GET', `/balance-transaction?siteId=${plain}&type=payout_return`);
    expect(back.body.data).toMatchObject([{ net: '100.00', source: { type: 'payout', id: other?.id } }]);

    // The same statement again, under another name, changes nothing.
    await writeFile(join(inbox, 'camt053-again.xml'), statement);
    await h.advanceClock(1);
    expect(await balance(plain)).toMatchObject({ available: '100.00' });
    expect((await reconcile()).clean).toBe(true);
  });

  it('moves aside a file it cannot read and reports lines that match no payout, and reconcile names them', async () => {
    await writeFile(
      join(inbox, 'garbage.xml'),
      '<Document xmlns="urn:example:not-iso"><Nothing/></Document>',
    );
    await writeFile(
      join(inbox, 'pain002-unknown.xml'),
      pain002Rejection({
        messageId: 'ST-1',
        paymentFileId: 'bkf_UNKNOWN',
        rejected: [{ endToEndId: 'po_NOSUCHPAYOUT', reasonCode: 'AC01' }],
      }),
    );
    await h.advanceClock(1);
    expect(await readdir(join(inbox, 'rejected'))).toContain('garbage.xml');
    const files = await h.admin<{ read: { fileName: string; status: string; unmatched: unknown[] }[] }>(
      'GET',
      '/bank-files',
    );
    expect(files.body.read.find((f) => f.fileName === 'garbage.xml')).toMatchObject({ status: 'rejected' });
    expect(files.body.read.find((f) => f.fileName === 'pain002-unknown.xml')?.unmatched).toHaveLength(1);
    const metrics = await h.request('GET', '/metrics');
    expect(metrics.text).toMatch(/tessera_bank_inbox_files_total\{outcome="rejected"\} 1/);
    const report = await reconcile();
    expect(report.clean).toBe(false);
    expect(report.findings.map((f) => [f.check, f.subject])).toEqual([
      ['bank_statements', 'garbage.xml'],
      ['bank_statements', 'pain002-unknown.xml'],
    ]);
    expect(report.findings[1]?.actual).toContain('po_NOSUCHPAYOUT');
  });

  it('reports the operator’s revenue per day: the fees of the 100 captures', async () => {
    const captured = (
      await h.request<{ now: string }>('GET', '/sandbox/clock', {
        headers: { authorization: `Bearer ${h.adminToken}` },
      })
    ).body.now;
    const from = new Date(Date.parse(captured) - 5 * DAY * 1000).toISOString().slice(0, 10);
    const to = captured.slice(0, 10);
    const csv = await h.admin('GET', `/reports/revenue?from=${from}&to=${to}`);
    expect(csv.status).toBe(200);
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('date,tenant,currency,fees,transactions');
    const fees = lines.slice(1).filter((l) => l.includes(`site:${priced},`));
    const amounts = Array.from({ length: 100 }, (_, i) => 10_00n + BigInt(i * 37));
    expect(euros(sum(fees.map((l) => cents(l.split(',')[3] as string))))).toBe(
      euros(sum(amounts) - sum(expectedNet)),
    );
  });
});

describe('a schedule with a card brand’s own rate that gives fees back on refunds', () => {
  it('charges an Amex capture its brand’s rate, and a half refund gives back half the fee', async () => {
    const shop = await aMerchant(h);
    const site = shop.sites[0]?.id as number;
    const pricing = await h.admin('PUT', `/merchants/${shop.id}/sites/${site}/pricing`, {
      json: {
        percentBps: 100,
        fixed: { EUR: '0.10' },
        brands: { amex: { percentBps: 290, fixed: { EUR: '0.30' } } },
        refundFees: true,
      },
    });
    expect(pricing.body).toMatchObject({
      brands: { amex: { percentBps: 290, fixed: { EUR: '0.30' } } },
      refundFees: true,
    });
    const customer = await aCustomer(h, shop);
    const visa = await payments(h, shop, 'POST', '/order', anOrder(customer, { amount: '100.00' }));
    const amex = await payments(
      h,
      shop,
      'POST',
      '/order',
      anOrder(customer, { amount: '100.00', cardNumber: '378282246310005', cardCvv: '1234' }),
    );
    expect(amex.status, amex.text).toBe(201);
    const captures = (await payments(h, shop, 'GET', '/balance-transaction?type=capture')).body.data as {
      source: { id: string };
      fee: string;
    }[];
    const feeOf = (transactionId: number) => captures.find((c) => c.source.id === String(transactionId))?.fee;
    expect(feeOf(visa.body.data.transactionId)).toBe('1.10');
    expect(feeOf(amex.body.data.transactionId)).toBe('3.20');
    expect(
      (await payments(h, shop, 'DELETE', `/transaction/${amex.body.data.transactionId}`, { amount: '50.00' }))
        .status,
    ).toBe(200);
    const [refund] = (await payments(h, shop, 'GET', '/balance-transaction?type=refund')).body.data;
    expect(refund).toMatchObject({ gross: '-50.00', fee: '-1.60', net: '-48.40' });
    expect(
      (
        await h.admin('PUT', `/merchants/${shop.id}/sites/${site}/pricing`, {
          json: { percentBps: 1, brands: { diners: { percentBps: 1 } } },
        })
      ).status,
    ).toBe(400);
  });
});

describe('bad input', () => {
  it('refuses a payout above the available balance, naming the available amount', async () => {
    await payments(h, m, 'GET', `/balance?siteId=${plain}`);
    const tooMuch = await payments(h, m, 'POST', '/payout', {
      siteId: String(plain),
      currency: 'EUR',
      amount: '100.01',
    });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.error?.[0]).toMatchObject({ field: 'amount' });
    expect(tooMuch.body.error?.[0]?.message).toContain('100.00 EUR');
    const exact = await payments(h, m, 'POST', '/payout', {
      siteId: String(plain),
      currency: 'EUR',
      amount: '100.00',
    });
    expect(exact.status, exact.text).toBe(201);
    expect(exact.body.data).toMatchObject({
      amount: '100.00',
      status: 'pending',
      itemized: false,
      siteId: plain,
    });
    expect((await balance(plain)).available).toBe('0.00');
  });

  it('refuses pricing and schedules out of range, naming the field', async () => {
    for (const [path, json, field] of [
      ['pricing', { percentBps: 20_000 }, 'percentBps'],
      ['pricing', { percentBps: 100, fixed: { XXZ: '0.25' } }, 'fixed.XXZ'],
      ['pricing', { percentBps: 100, fixed: { EUR: '0.255' } }, 'fixed.EUR'],
      ['payout-schedule', { interval: 'hourly' }, 'interval'],
      ['payout-schedule', { interval: 'daily', reservePercent: '101' }, 'reservePercent'],
    ] as const) {
      const answer = await h.admin<{ error: { field?: string } }>(
        'PUT',
        `/merchants/${m.id}/sites/${plain}/${path}`,
        { json },
      );
      expect(answer.status, `${path} ${JSON.stringify(json)}`).toBe(400);
      expect(answer.body.error.field).toBe(field);
    }
  });

  it('refuses a report day or a reconcile date that is no day Postgres knows (year 0), naming it', async () => {
    const report = await payments(
      h,
      m,
      'GET',
      `/balance/report?siteId=${plain}&from=0000-02-29&to=2026-01-01`,
    );
    expect(report.status).toBe(400);
    expect(report.body.error?.[0]?.field).toBe('from');
    const backwards = await payments(
      h,
      m,
      'GET',
      `/balance/report?siteId=${plain}&from=2026-02-01&to=2026-01-01`,
    );
    expect(backwards.status).toBe(400);
    expect((await h.admin('GET', '/reconcile?date=0000-02-29')).status).toBe(400);
    expect((await h.admin('GET', '/reports/revenue?from=2026-01-01&to=2027-06-01')).status).toBe(400);
  });

  it('shows a site’s payouts only to its own merchant', async () => {
    const stranger = await aMerchant(h);
    const [payout] = await payoutsOf(priced);
    expect((await payments(h, stranger, 'GET', `/payout/${payout?.id}`)).status).toBe(404);
    expect((await payments(h, stranger, 'GET', `/payout/${payout?.id}/report`)).status).toBe(404);
    expect((await payments(h, stranger, 'GET', `/balance?siteId=${priced}`)).status).toBe(404);
  });
});

describe('a crash while writing a bank file', () => {
  it('writes the same file again after a restart, never a second file for the same payouts', async () => {
    // The state a kill -9 leaves between recording the file and recording it written: the file row
    // 'writing', its payouts pending with its id, and (had the rename happened) the file in the outbox.
    const [manual] = await payoutsOf(plain);
    const dispatched = await h.admin<{ sent: number }>('POST', '/payout-runs');
    expect(dispatched.body.sent).toBe(1);
    const fileName = (await readdir(outbox))
      .filter((f) => f.endsWith('.xml'))
      .sort()
      .at(-1) as string;
    const bytes = await readFile(join(outbox, fileName), 'utf8');
    expect(bytes).toContain(manual?.id);
    const pg = await import('pg');
    const client = new pg.default.Client({ connectionString: h.databaseUrl });
    await client.connect();
    try {
      await client.query(`UPDATE bank_files SET status = 'writing' WHERE file_name = $1`, [fileName]);
      await client.query(`UPDATE payouts SET status = 'pending' WHERE id = $1`, [manual?.id]);
      // Case 1: the rename happened: the file stays as it is, recorded written, nothing new.
      await copyFile(join(outbox, fileName), join(tmpdir(), `${fileName}.kept`));
      expect((await h.admin<{ sent: number }>('POST', '/payout-runs')).body.sent).toBe(1);
      expect((await readdir(outbox)).filter((f) => f.endsWith('.xml'))).toHaveLength(2);
      // Case 2: it did not: the same bytes are written again under the same name.
      await client.query(`UPDATE bank_files SET status = 'writing' WHERE file_name = $1`, [fileName]);
      await client.query(`UPDATE payouts SET status = 'pending' WHERE id = $1`, [manual?.id]);
      const { rm } = await import('node:fs/promises');
      await rm(join(outbox, fileName));
      expect((await h.admin<{ sent: number }>('POST', '/payout-runs')).body.sent).toBe(1);
      expect(await readFile(join(outbox, fileName), 'utf8')).toBe(bytes);
      expect((await readdir(outbox)).filter((f) => f.endsWith('.xml'))).toHaveLength(2);
      const { rows } = await client.query(`SELECT status FROM bank_files WHERE file_name = $1`, [fileName]);
      expect(rows).toEqual([{ status: 'written' }]);
    } finally {
      await client.end();
    }
    expect((await payoutsOf(plain))[0]).toMatchObject({ status: 'in_transit' });
    expect((await reconcile()).findings.filter((f) => f.check !== 'bank_statements')).toEqual([]);
  });
});

describe('the daily run', () => {
  it('looks again the same day once the balance reaches the minimum; what comes after the day’s payout waits', async () => {
    const shop = await aMerchant(h);
    const site = shop.sites[0]?.id as number;
    await h.admin('PUT', `/merchants/${shop.id}/sites/${site}/payout-schedule`, {
      json: { interval: 'daily', delayDays: 0, minimum: '50.00' },
    });
    await h.admin('PUT', `/merchants/${shop.id}/sites/${site}/bank-account`, {
      json: { iban: 'DE89370400440532013000', holderName: 'Minimum Shop' },
    });
    const customer = await aCustomer(h, shop);
    const capture = async () =>
      expect((await payments(h, shop, 'POST', '/order', anOrder(customer, { amount: '30.00' }))).status).toBe(
        201,
      );
    const payouts = async () => (await payments(h, shop, 'GET', '/payout')).body.data as { amount: string }[];
    await capture();
    await h.advanceClock(1);
    expect(await payouts()).toEqual([]);
    await capture();
    await h.advanceClock(1);
    expect(await payouts()).toMatchObject([{ amount: '60.00' }]);
    await capture();
    await capture();
    await h.advanceClock(1);
    expect(await payouts()).toHaveLength(1);
    await h.advanceClock(DAY);
    expect(await payouts()).toMatchObject([{ amount: '60.00' }, { amount: '60.00' }]);
  });

  it('pays at once when a manual schedule becomes daily, without waiting for the next day', async () => {
    const shop = await aMerchant(h);
    const site = shop.sites[0]?.id as number;
    const schedule = (interval: string) =>
      h.admin('PUT', `/merchants/${shop.id}/sites/${site}/payout-schedule`, {
        json: { interval, delayDays: 0, minimum: '1.00' },
      });
    await schedule('manual');
    await h.admin('PUT', `/merchants/${shop.id}/sites/${site}/bank-account`, {
      json: { iban: 'DE89370400440532013000', holderName: 'Manual Shop' },
    });
    const customer = await aCustomer(h, shop);
    expect((await payments(h, shop, 'POST', '/order', anOrder(customer, { amount: '12.00' }))).status).toBe(
      201,
    );
    const payouts = async () => (await payments(h, shop, 'GET', '/payout')).body.data as { amount: string }[];
    // The sweep looks at the manual site and pays nothing.
    await h.advanceClock(1);
    expect(await payouts()).toEqual([]);
    await schedule('daily');
    await h.advanceClock(1);
    expect(await payouts()).toMatchObject([{ amount: '12.00' }]);
  });

  it('pays at once on an explicit run when the bank account is set after the sweep’s look', async () => {
    const shop = await aMerchant(h);
    const site = shop.sites[0]?.id as number;
    await h.admin('PUT', `/merchants/${shop.id}/sites/${site}/payout-schedule`, {
      json: { interval: 'daily', delayDays: 0, minimum: '1.00' },
    });
    const customer = await aCustomer(h, shop);
    expect((await payments(h, shop, 'POST', '/order', anOrder(customer, { amount: '7.00' }))).status).toBe(
      201,
    );
    await h.advanceClock(1);
    expect((await payments(h, shop, 'GET', '/payout')).body.data).toEqual([]);
    await h.admin('PUT', `/merchants/${shop.id}/sites/${site}/bank-account`, {
      json: { iban: 'DE89370400440532013000', holderName: 'Late Shop' },
    });
    const run = await h.admin<{ payouts: { amount: string; status: string }[] }>('POST', '/payout-runs');
    expect(run.status).toBe(200);
    expect(run.body.payouts).toMatchObject([{ amount: '7.00' }]);
    // The day is paid: another explicit run makes no second scheduled payout.
    expect((await h.admin<{ payouts: unknown[] }>('POST', '/payout-runs')).body.payouts).toEqual([]);
  });
});
