// A case as a goAML report (docs/compliance.md, goAML), validated by xmllint against an FIU's published
// goAML schema (test/compliance/fixtures/goaml): a merchant whose owner, written in Cyrillic, a UN list
// names (the business, its owners and director as parties; the owner's name transliterated with the
// original beside it), and a buyer's refund address OFAC lists (the address as an account). Each FIU
// has its own indicator codes: the officer names them per report, and a report without any is refused.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { xsdProblems } from '../harness/bank-files.ts';
import { ConsoleClient } from '../harness/console-client.ts';
import { anOrder as aCryptoOrder, aStore, orderOf, pay } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';
import { aMerchant } from '../harness/payments-builders.ts';
import { unList } from '../harness/un-list.ts';

const GOAML = fileURLToPath(new URL('./fixtures/goaml/', import.meta.url));
const XSD = join(GOAML, 'goAMLSchema-5.0.2.xsd');

let h: Harness;

beforeAll(async () => {
  h = await Harness.start({
    env: {
      TESSERA_GOAML_RENTITY_ID: '1042',
      TESSERA_GOAML_RENTITY_BRANCH: 'Head office',
      TESSERA_GOAML_REPORTING_USER: 'MLRO01',
    },
  });
  const un = unList([
    { id: '6920001', first: 'DRAGOMIR', second: 'VASILYEVICH', third: 'KOSTENKO', dateOfBirth: '1969-08-30' },
  ]);
  expect(
    (
      await h.admin('POST', '/compliance/sanctions/imports?source=un', {
        body: un,
        headers: { 'content-type': 'application/xml' },
      })
    ).status,
  ).toBe(201);
});
afterAll(() => h.close());

const openCaseOf = async (subject: string) =>
  (
    await h.admin<{ data: { id: string; subject: string }[] }>(
      'GET',
      '/compliance/cases?status=open&limit=100',
    )
  ).body.data.find((c) => c.subject === subject);

/** The case's report with these of the FIU's indicator codes, validated by xmllint against its schema */
async function reportFor(caseId: string, indicators: string): Promise<string> {
  const res = await h.admin(
    'GET',
    `/compliance/cases/${caseId}/export?format=goaml&indicators=${indicators}`,
  );
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/xml/);
  const file = join(tmpdir(), `goaml-case-${caseId}.xml`);
  writeFileSync(file, res.text);
  expect(xsdProblems(file, XSD), res.text).toBe('');
  return res.text;
}

describe('a case as goAML XML', () => {
  it('a merchant whose owner a UN list names: the business, its owner and director as parties, valid for the FIU', async () => {
    const shop = await aMerchant(h);
    const profile = await h.admin('PUT', `/merchants/${shop.id}/business-profile`, {
      json: {
        legalName: 'Lumen Retail & Co SRL',
        tradingName: 'Lumen',
        registrationNumber: 'J40/9876/2021',
        country: 'RO',
        address: { line1: 'Bd. Unirii 10', city: 'București', postalCode: '030167', country: 'RO' },
        mcc: '5732',
        website: 'https://lumen.example',
        owners: [
          {
            name: 'Драгомир Васильевич Костенко',
            dateOfBirth: '1969-08-30',
            nationality: 'UA',
            countryOfResidence: 'CY',
            ownershipPercent: 60,
          },
        ],
        directors: [{ name: 'Ioana Marinescu', dateOfBirth: '1983-05-17', nationality: 'RO' }],
      },
    });
    expect(profile.status, profile.text).toBe(200);
    const found = await openCaseOf(`merchant:${shop.id}`);
    expect(found).toBeDefined();
    const report = await reportFor(found?.id as string, 'TFS01');
    expect(report).toContain('<rentity_id>1042</rentity_id>');
    expect(report).toContain('<rentity_branch>Head office</rentity_branch>');
    expect(report).toContain('<report_code>SAR</report_code>');
    expect(report).toContain(`<entity_reference>tessera-case-${found?.id}</entity_reference>`);
    expect(report).toContain('<currency_code_local>EUR</currency_code_local>');
    expect(report).toContain('<name>Lumen Retail Co SRL</name>');
    expect(report).toContain('<incorporation_number>J40/9876/2021</incorporation_number>');
    expect(report).toMatch(
      /<first_name>Dragomir Vasil'evich<\/first_name>\s*<last_name>Kostenko<\/last_name>\s*<birthdate>1969-08-30T00:00:00<\/birthdate>\s*<full_name_frn>Драгомир Васильевич Костенко<\/full_name_frn>\s*<nationality1>UA<\/nationality1>/,
    );
    expect(report).toContain(
      `<reason>The beneficial owner in case merchant:${shop.id}; matched the UN list's entry 6920001 (score 1).</reason>`,
    );
    expect(report).toMatch(/<first_name>Ioana<\/first_name>\s*<last_name>Marinescu<\/last_name>/);
    expect(report).toMatch(/<reason>Tessera compliance case [^<]* matched [^<]*UN list/);
    expect(report).toContain('<indicator>TFS01</indicator>');

    // The compliance officer downloads the same report from the case's page in the console
    const email = `officer-${randomBytes(4).toString('hex')}@goaml.example`;
    const created = await h.admin('POST', '/console-users', {
      json: { email, password: 'correct horse battery staple', role: 'compliance' },
    });
    expect(created.status, created.text).toBe(201);
    const officer = new ConsoleClient(h.baseUrl);
    await officer.signIn({ email, password: 'correct horse battery staple' });
    const page = await officer.get(`/console/compliance/cases/${found?.id}`);
    expect(page.text).toContain('Download the goAML report');
    const download = await officer.get(
      `/console/compliance/cases/${found?.id}/goaml.xml?reportCode=SAR&indicators=TFS01`,
    );
    expect(download.status).toBe(200);
    expect(download.text.replace(/<submission_date>[^<]*/, '')).toBe(
      report.replace(/<submission_date>[^<]*/, ''),
    );
    expect(
      (await officer.get(`/console/compliance/cases/${found?.id}/goaml.xml?reportCode=SAR`)).status,
    ).toBe(400);
  });

  it('a refund address OFAC lists: the address as an account on its chain', async () => {
    const ofac = readFileSync(fileURLToPath(new URL('./fixtures/ofac-sdn.xml', import.meta.url)), 'utf8');
    const imported = await h.admin('POST', '/compliance/sanctions/imports?source=ofac', {
      body: ofac,
      headers: { 'content-type': 'application/xml' },
    });
    expect(imported.status).toBe(201);
    const listed = String(/<idNumber>(0x[0-9a-fA-F]{40})<\/idNumber>/.exec(ofac)?.[1]).toLowerCase();
    const store = await aStore(h, { refundsEnabled: true });
    const order = await aCryptoOrder(h, store, { total: '20.00' });
    await pay(h, order.id);
    await h.advanceClock(150);
    const paymentId = (await orderOf(h, store, order.id)).payment_uuid;
    const proposed = await h.request<{ data: { attributes: { decision_url: string } } }>(
      'POST',
      `/crypto/api/stores/refund/${paymentId}`,
      {
        headers: store.auth,
        json: { data: { type: 'refunds', attributes: { amount: '5.00', reason: 'returned' } } },
      },
    );
    expect(proposed.status, proposed.text).toBe(201);
    const refused = await h.request(
      'POST',
      `${new URL(proposed.body.data.attributes.decision_url).pathname}/accept`,
      {
        form: { address: listed },
      },
    );
    expect(refused.status).toBe(403);
    const found = await openCaseOf(`crypto_address:${listed}`);
    expect(found).toBeDefined();
    const uae = await reportFor(found?.id as string, 'ALP01,ALP02');
    expect(uae).toMatch(
      new RegExp(
        `<institution_name>ETH blockchain</institution_name>\\s*<institution_code>ETH</institution_code>\\s*<non_bank_institution>true</non_bank_institution>\\s*<account>${listed}</account>`,
      ),
    );
    expect(uae).toContain('<indicator>ALP01</indicator>');
    expect(uae).toContain('<indicator>ALP02</indicator>');
  });

  it('is refused without indicators (400 naming indicators) and with a malformed report code (400 naming reportCode)', async () => {
    const found = (await h.admin<{ data: { id: string }[] }>('GET', '/compliance/cases?limit=1')).body
      .data[0];
    const none = await h.admin<{ error: { field: string } }>(
      'GET',
      `/compliance/cases/${found?.id}/export?format=goaml`,
    );
    expect(none.status).toBe(400);
    expect(none.body.error.field).toBe('indicators');
    const bad = await h.admin<{ error: { field: string } }>(
      'GET',
      `/compliance/cases/${found?.id}/export?format=goaml&indicators=X&reportCode=${encodeURIComponent('<x>')}`,
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('reportCode');
  });
});
