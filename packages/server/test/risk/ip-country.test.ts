// `ip_country` (docs/risk.md, IP country): the country of the payer's IP from the operator's MaxMind DB
// file, read by mmdb-lib. A database written here (harness/mmdb-writer.ts) is read as an operator's would
// be; a rule on the attribute blocks a charge through the payments API; no database, no address, an
// address not in it or an IPv6 one in an IPv4 database is ""; a file that is no database stops the start.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipCountryLookup } from '../../src/platform/risk/ip-country.ts';
import { Harness, OWN_HARNESS_TIMEOUT_MS } from '../harness/harness.ts';
import { countryMmdb } from '../harness/mmdb-writer.ts';
import { aCustomer, aMerchant, anOrder, payments } from '../harness/payments-builders.ts';

let directory: string;
let database: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'tessera-mmdb-'));
  database = join(directory, 'countries.mmdb');
  await writeFile(
    database,
    countryMmdb({
      '203.0.113.0/24': 'KP',
      '198.51.100.0/25': 'RO',
      '198.51.100.128/25': 'DE',
      '8.8.8.8/32': 'US',
    }),
  );
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('the country of an IP address', () => {
  it('reads each network of the database, and "" for what it cannot place', () => {
    const countryOf = ipCountryLookup(database);
    expect(countryOf('203.0.113.77')).toBe('KP');
    expect(countryOf('198.51.100.5')).toBe('RO');
    expect(countryOf('198.51.100.200')).toBe('DE');
    expect(countryOf('8.8.8.8')).toBe('US');
    expect(countryOf('8.8.8.9')).toBe('');
    expect(countryOf('2001:db8::1')).toBe('');
    expect(countryOf('not an ip')).toBe('');
    expect(countryOf(null)).toBe('');
    expect(ipCountryLookup(undefined)('203.0.113.77')).toBe('');
  });

  it('a file that is no database stops the start, naming the setting', async () => {
    const bad = join(directory, 'bad.mmdb');
    await writeFile(bad, 'not a database');
    expect(() => ipCountryLookup(bad)).toThrow(/TESSERA_IP_COUNTRY_DB: .*bad\.mmdb is not a MaxMind DB file/);
  });

  it(
    'a rule on ip_country blocks a charge from that country, and the decision records the country',
    async () => {
      const h = await Harness.start({ env: { TESSERA_IP_COUNTRY_DB: database } });
      try {
        const m = await aMerchant(h);
        const saved = await h.admin<{ id: string }>('POST', '/risk/rules', {
          json: {
            name: 'embargoed',
            scope: { kind: 'merchant', id: String(m.id) },
            decisionPoint: 'payments.charge',
            expression: 'ip_country in ["KP", "IR"]',
            action: 'block',
          },
        });
        expect(saved.status, saved.text).toBe(201);
        const customerId = await aCustomer(h, m);
        expect(
          (await payments(h, m, 'POST', '/order', anOrder(customerId, { ip: '203.0.113.9' }))).status,
        ).toBe(402);
        expect(
          (await payments(h, m, 'POST', '/order', anOrder(customerId, { ip: '198.51.100.9' }))).status,
        ).toBe(201);
        const decisions = await h.admin<{ data: { attributes: { ip: string; ip_country: string } }[] }>(
          'GET',
          `/risk/decisions?ruleId=${saved.body.id}`,
        );
        expect(decisions.body.data.map((d) => d.attributes)).toMatchObject([
          { ip: '203.0.113.9', ip_country: 'KP' },
        ]);
      } finally {
        await h.close();
      }
    },
    OWN_HARNESS_TIMEOUT_MS,
  );
});
