// Twispay's WHMCS module (its older gateways/twispay.php) against Tessera's hosted checkout, only the
// host changed: it posts the flat form — siteId, identifier, amount, currency, orderId, orderType, the
// customer's fields, `item[i]`, `units[i]`, `unitPrice[i]`, `subTotal[i]`, `orderTags[i]`,
// `custom[original_invoice]`, `custom[i][billingcycle]`… — with `checksum`, base64(HMAC-SHA512(
// http_build_query(the fields sorted by ksort), the secret key)). The checksum is made here by PHP
// itself (the same four library calls the module makes), so PHP's own sorting and encoding are what
// Tessera must agree with; CI installs php-cli and sets TESSERA_REQUIRE_PHP=1.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aMerchant, payOnCardPage, type TestMerchant } from '../harness/payments-builders.ts';
import { keyOf } from '../harness/xmoney-sdk-wire.ts';

const hasPhp =
  process.env.TESSERA_REQUIRE_PHP === '1' ||
  ['/usr/bin/php', '/usr/local/bin/php'].some((p) => existsSync(p));

let h: Harness;
let m: TestMerchant;
let key: string;

beforeAll(async () => {
  h = await Harness.start();
  m = await aMerchant(h);
  key = keyOf(m.sites[0]?.secretKey ?? '');
});
afterAll(() => h.close());

const BACK_URL = 'https://billing.example/modules/gateways/callback/twispay.php';

/** The module's form fields for an invoice of two WHMCS line items, in the order it sets them. */
function whmcsFields(invoiceId: number): Record<string, string> {
  return {
    siteId: String(m.sites[0]?.id),
    identifier: '_17',
    amount: '35.00',
    backUrl: BACK_URL,
    currency: 'EUR',
    description: `Ana Pop - Invoice #${invoiceId}`,
    orderType: 'purchase',
    orderId: `81-82_${1764600000 + invoiceId}`,
    firstName: 'Ana',
    lastName: 'Pop',
    country: 'RO',
    city: 'Cluj-Napoca',
    zipCode: '400001',
    address: 'Str. Memorandumului 28, ap. 4',
    phone: '+40.712345678',
    email: 'ana.pop+whmcs@example.com',
    'custom[original_invoice]': String(invoiceId),
    'item[0]': 'Hosting (Starter) ~ 1 year',
    'units[0]': '1',
    'unitPrice[0]': '25.00',
    'subTotal[0]': '25.00',
    'orderTags[0]': 'hostingaccount',
    'custom[0][billingcycle]': 'Annually',
    'custom[0][siteordernumber]': '4481932',
    'item[1]': 'Domain: ana-pop.ro (1 year) & DNS',
    'units[1]': '1',
    'unitPrice[1]': '10.00',
    'subTotal[1]': '10.00',
    'orderTags[1]': 'domain',
    'custom[1][billingcycle]': '',
    'custom[1][siteordernumber]': '4481932',
    cardTransactionMode: 'authAndCapture',
  };
}

/** PHP computes the checksum: ksort, http_build_query, hash_hmac sha512 (raw), base64_encode. */
function phpChecksum(fields: Record<string, string>, secret: string): string {
  return execFileSync(
    'php',
    [
      '-r',
      '$f = json_decode(file_get_contents("php://stdin"), true); ksort($f); echo base64_encode(hash_hmac("sha512", http_build_query($f), $argv[1], true));',
      secret,
    ],
    { input: JSON.stringify(fields), encoding: 'utf8' },
  );
}

describe.runIf(hasPhp)('Twispay’s WHMCS module (the flat form)', () => {
  it('is shown the card page, paid, and handed back to its callback with the result', async () => {
    const fields = whmcsFields(90001);
    const page = await h.request('POST', '/', { form: { ...fields, checksum: phpChecksum(fields, key) } });
    expect(page.status, page.text.slice(0, 500)).toBe(200);
    expect(page.text).toContain('35.00');
    const paid = await payOnCardPage(h, page.text, { name: 'Ana Pop', country: 'RO' });
    expect(paid.status).toBe(200);
    expect(paid.text).toContain(`action="${BACK_URL}"`);
    const orders = await h.request<{ data: { externalOrderId: string; amount: number; currency: string }[] }>(
      'GET',
      `/payments/order?externalOrderId=${encodeURIComponent(fields.orderId as string)}`,
      { headers: m.auth },
    );
    expect(orders.body.data[0]).toMatchObject({
      externalOrderId: fields.orderId,
      amount: 35,
      currency: 'EUR',
    });
  });

  it('refuses a form whose fields were changed after signing, or signed with another key, naming the checksum', async () => {
    const fields = whmcsFields(90002);
    const checksum = phpChecksum(fields, key);
    const tampered = await h.request('POST', '/', { form: { ...fields, amount: '0.35', checksum } });
    expect(tampered.status).toBe(401);
    expect(tampered.text).toContain('checksum');
    const otherKey = await h.request('POST', '/', {
      form: { ...fields, checksum: phpChecksum(fields, 'not-the-site-key') },
    });
    expect(otherKey.status).toBe(401);
    const noSite = await h.request('POST', '/', { form: { ...fields, siteId: '999999', checksum } });
    expect(noSite.status).toBe(400);
    expect(noSite.text).toContain('siteId');
  });
});
