// The SDK as an integrator gets it: built, packed with `npm pack`, installed from the tarball into an
// empty project, and used from plain Node 20 — ESM and CommonJS — to run an order through each API; its
// types checked by TypeScript in that project (a wrong field is a compile error).
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aStore } from '../../server/test/harness/crypto-builders.ts';
import { Harness } from '../../server/test/harness/harness.ts';
import { aMerchant } from '../../server/test/harness/payments-builders.ts';

const run = promisify(execFile);
const SDK = fileURLToPath(new URL('..', import.meta.url));
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const TSC = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));

let h: Harness;
let project: string;
let env: Record<string, string>;

beforeAll(async () => {
  h = await Harness.start();
  project = await mkdtemp(join(tmpdir(), 'tessera-sdk-user-'));
  // As an integrator or a release would: `npm pack` alone, from the workspace root, with no build run
  // before it. prepack builds the code and the types.
  await rm(join(SDK, 'dist'), { recursive: true, force: true });
  await run('npm', ['pack', '-w', 'packages/sdk', '--pack-destination', project], { cwd: ROOT });
  const tarball = (await readdir(project)).find((f) => f.endsWith('.tgz'));
  const { stdout: listing } = await run('tar', ['-tzf', join(project, tarball ?? '')]);
  for (const file of ['dist/index.js', 'dist/index.cjs', 'dist/types/index.d.ts'])
    expect(listing.split('\n')).toContain(`package/${file}`);
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({ name: 'integrator', private: true, type: 'module' }),
  );
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', `./${tarball}`], {
    cwd: project,
  });
  const partner = await h.admin<{ id: string; partnerId: string; apiKey: string }>('POST', '/partners', {
    json: { name: 'SDK partner' },
  });
  const merchant = await aMerchant(h);
  const store = await aStore(h);
  env = {
    ...(process.env as Record<string, string>),
    TESSERA_URL: h.baseUrl,
    ADMIN_TOKEN: h.adminToken,
    PARTNER_KEY: partner.body.apiKey,
    PARTNER_ID: partner.body.partnerId,
    SITE_KEY: merchant.sites[0]?.secretKey ?? '',
    STORE_KEY: store.key,
  };
}, 180_000);
afterAll(async () => {
  await h.close();
  await rm(project, { recursive: true, force: true });
});

const ESM = `
import { cryptoClient, issuingClient, paymentsClient, PaymentsApiError } from '@tessera/sdk';
const baseUrl = process.env.TESSERA_URL;

const payments = paymentsClient({ baseUrl, apiKey: process.env.SITE_KEY });
const customer = await payments.POST('/customer', { body: { identifier: 'esm-buyer', email: 'esm@example.com' } });
const order = await payments.POST('/order', { body: {
  amount: '25.00', currency: 'EUR', orderType: 'purchase', customerId: customer.data.data.id,
  cardNumber: '4111111111111111', cardExpiryDate: '12/30', cardCvv: '123', cardHolderName: 'Esm Buyer', cardHolderCountry: 'RO' } });
const refused = await payments.POST('/customer', { body: { identifier: 'esm-buyer' } }).catch((e) => e);

const crypto = cryptoClient({ baseUrl, apiKey: process.env.STORE_KEY });
const cryptoOrder = await crypto.POST('/stores/orders', { body: { data: { type: 'orders', attributes: {
  order: { reference: 'esm-1', amount: { total: '5.00', currency: 'EUR' }, return_urls: { return_url: 'https://shop.example/r' }, line_items: [] },
  customer: { email: 'esm@example.com', country: 'PT' } } } } });

const partner = issuingClient({ baseUrl, partnerApiKey: process.env.PARTNER_KEY, partnerId: process.env.PARTNER_ID });
const registered = await partner.POST('/auth/register/partner', { body: { userId: 'esm-user' } });
await fetch(baseUrl + '/sandbox/issuing/kyc/' + registered.data.customerId + '/decision', {
  method: 'POST', headers: { authorization: 'Bearer ' + process.env.ADMIN_TOKEN, 'content-type': 'application/json' },
  body: JSON.stringify({ status: 'approved' }) });
const login = await partner.POST('/auth/login/partner', { body: { customerId: registered.data.customerId } });
const customerApi = issuingClient({ baseUrl, accessToken: login.data.accessToken });
const account = await customerApi.POST('/accounts', { body: { currency: 'EUR' } });
const card = await customerApi.POST('/cards', { body: { isVirtual: true, currency: 'EUR' } });

console.log(JSON.stringify({
  payments: order.data.data.transactionStatus,
  refused: refused instanceof PaymentsApiError ? refused.status : 'not typed',
  crypto: cryptoOrder.data.data.type,
  issuing: { account: Boolean(account.data.accountId), card: Boolean(card.data.cardId) },
}));
`;

const CJS = `
const { paymentsClient, verifyCryptoWebhook, decryptIpn } = require('@tessera/sdk');
const payments = paymentsClient({ baseUrl: process.env.TESSERA_URL, apiKey: process.env.SITE_KEY });
payments.GET('/order', {}).then((list) => {
  console.log(JSON.stringify({ code: list.data.code, verifiers: typeof verifyCryptoWebhook + typeof decryptIpn }));
});
`;

const TYPED = `
import { paymentsClient } from '@tessera/sdk';
const payments = paymentsClient({ baseUrl: 'http://localhost:8080', apiKey: 'sk_test_x' });
export async function listed(): Promise<number> {
  const answer = await payments.GET('/order', { params: { query: { perPage: 10 } } });
  return answer.data?.data[0]?.amount ?? 0;
}
`;

const MISTYPED = `
import { paymentsClient } from '@tessera/sdk';
const payments = paymentsClient({ baseUrl: 'http://localhost:8080', apiKey: 'sk_test_x' });
await payments.POST('/order', { body: { amount: '1', currency: 'EUR', orderType: 'not-a-type', customerId: 1 } });
`;

describe('the packed SDK in an empty project', () => {
  it('runs an order through each API from plain Node (ESM)', async () => {
    await writeFile(join(project, 'order.mjs'), ESM);
    const { stdout } = await run(process.execPath, ['order.mjs'], { cwd: project, env });
    expect(JSON.parse(stdout)).toEqual({
      payments: 'complete-ok',
      refused: 409,
      crypto: 'orders_redirect',
      issuing: { account: true, card: true },
    });
  });

  it('works from CommonJS', async () => {
    await writeFile(join(project, 'list.cjs'), CJS);
    const { stdout } = await run(process.execPath, ['list.cjs'], { cwd: project, env });
    expect(JSON.parse(stdout)).toEqual({ code: 200, verifiers: 'functionfunction' });
  });

  it('types its calls: a valid use compiles, a wrong field does not', async () => {
    const tsc = (file: string) =>
      run(
        process.execPath,
        [
          TSC,
          '--noEmit',
          '--strict',
          '--module',
          'nodenext',
          '--moduleResolution',
          'nodenext',
          '--target',
          'es2022',
          '--skipLibCheck',
          file,
        ],
        {
          cwd: project,
        },
      );
    await writeFile(join(project, 'typed.mts'), TYPED);
    await expect(tsc('typed.mts')).resolves.toBeDefined();
    await writeFile(join(project, 'mistyped.mts'), MISTYPED);
    const failed = await tsc('mistyped.mts').catch((err: { stdout: string }) => err.stdout);
    expect(failed).toMatch(/not-a-type/);
  });
});
