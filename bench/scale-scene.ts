// bench:scale's scene: one tenant of each API made through the real API (bench/scale.ts), and its console
// members signed in.
import type pg from 'pg';
import { openDatabase } from '../packages/server/src/platform/db/database.ts';
import { Ledger } from '../packages/server/src/platform/ledger/ledger.ts';
import { ConsoleClient } from '../packages/server/test/harness/console-client.ts';
import type { TesseraServer } from './servers.ts';

export interface Scene {
  tessera: TesseraServer;
  merchant: { id: number; apiKey: string; siteId: number; customers: number[] };
  store: { id: string; key: string };
  partner: { id: string };
  console: { merchant: ConsoleClient; store: ConsoleClient; operator: ConsoleClient };
  siteAccountId: string;
  orderId: number;
  externalOrderId: string;
  cryptoReference: string;
  cryptoOrderId: string;
}

export /** One tenant per API, with a few dozen objects made through the API. */
async function makeScene(tessera: TesseraServer, pool: pg.Pool): Promise<Scene> {
  const { call, admin } = tessera;
  const merchant = await call<{ id: number; apiKey: string; sites: { id: number }[] }>(
    'POST',
    '/admin/merchants',
    admin,
    { name: 'Big merchant', sites: [{ name: 'Big site' }] },
  );
  const auth = { authorization: `Bearer ${merchant.apiKey}` };
  // Its captures available at once and paid only when asked (bench/scale-money-out.ts pays them once).
  await call('PUT', `/admin/merchants/${merchant.id}/sites/${merchant.sites[0]?.id}/payout-schedule`, admin, {
    interval: 'manual',
    delayDays: 0,
  });
  const customers: number[] = [];
  for (let i = 0; i < 20; i++) {
    const created = await call<{ data: { id: number } }>('POST', '/payments/customer', auth, {
      identifier: `scale-${i}`,
      email: `scale-${i}@example.com`,
    });
    customers.push(created.data.id);
  }
  const expiry = `12/${String((new Date().getUTCFullYear() + 3) % 100).padStart(2, '0')}`;
  let orderId = 0;
  for (let i = 0; i < 40; i++) {
    const res = await fetch(`${tessera.base}/payments/order`, {
      method: 'POST',
      headers: {
        ...auth,
        'content-type': 'application/x-www-form-urlencoded',
        // half keyed, so the idempotency keys have real rows to multiply
        ...(i % 2 === 0 ? { 'idempotency-key': `scale-${i}` } : {}),
      },
      body: new URLSearchParams({
        amount: '10.90',
        currency: 'EUR',
        orderType: 'purchase',
        customerId: String(customers[i % customers.length]),
        externalOrderId: `scale-order-${i}`,
        cardNumber: '4111111111111111',
        cardExpiryDate: expiry,
        cardCvv: '123',
        cardHolderName: 'Scale Buyer',
        cardHolderCountry: 'RO',
      }).toString(),
    });
    if (res.status !== 201) throw new Error(`order: ${res.status} ${await res.text()}`);
    orderId = ((await res.json()) as { data: { orderId: number } }).data.orderId;
  }
  const store = await call<{ id: string; clientId: string; clientSecret: string }>(
    'POST',
    '/admin/stores',
    admin,
    {
      name: 'Big store',
    },
  );
  const session = await call<{ data: { id: string } }>(
    'POST',
    '/crypto/api/stores/session',
    {},
    {
      data: { type: 'session', attributes: { client_id: store.clientId, client_secret: store.clientSecret } },
    },
  );
  let cryptoOrderId = '';
  for (let i = 0; i < 20; i++) {
    const created = await call<{ data: { id: string } }>(
      'POST',
      '/crypto/api/stores/orders',
      { authorization: `Bearer ${session.data.id}` },
      {
        data: {
          type: 'orders',
          attributes: {
            order: {
              reference: `scale-ref-${i}`,
              amount: { total: '25.00', currency: 'EUR' },
              return_urls: { return_url: 'https://shop.example/return' },
              line_items: [{ sku: 'S-1', name: 'Item', price: '25.00', currency: 'EUR', quantity: 1 }],
            },
            customer: { email: 'buyer@example.com', country: 'RO' },
          },
        },
      },
    );
    cryptoOrderId = created.data.id;
  }
  const partner = await call<{ id: string; apiKey: string }>('POST', '/admin/partners', admin, {
    name: 'Big partner',
  });
  const registered = await call<{ customerId: string }>(
    'POST',
    '/issuing/v1/auth/register/partner',
    { 'x-partner-api-key': partner.apiKey },
    { userId: 'scale-holder' },
  );
  await call('POST', `/sandbox/issuing/kyc/${registered.customerId}/decision`, admin, { status: 'approved' });
  const login = await call<{ accessToken: string }>(
    'POST',
    '/issuing/v1/auth/login/partner',
    { 'x-partner-api-key': partner.apiKey },
    { customerId: registered.customerId },
  );
  const holder = { authorization: `Bearer ${login.accessToken}` };
  const account = await call<{ accountId: string }>('POST', '/issuing/v1/accounts', holder, {
    currency: 'EUR',
  });
  await fund(pool, account.accountId, 100_000n);
  const card = await call<{ cardId: string }>('POST', '/issuing/v1/cards', holder, {
    isVirtual: true,
    currency: 'EUR',
  });
  for (let i = 0; i < 10; i++) {
    await call('POST', '/sandbox/issuing/authorizations', admin, {
      cardId: card.cardId,
      amount: '0.10',
      currency: 'EUR',
      merchant: 'Scale shop',
    });
  }
  const member = async (kind: string, id: string) => {
    const email = `${kind}-${id}@scale.example`;
    const created = await call<{ password: string }>('POST', '/admin/console-users', admin, {
      email,
      role: 'member',
      tenant: { kind, id },
    });
    const client = new ConsoleClient(tessera.base);
    const answer = await client.signIn({ email, password: created.password });
    if (answer.status !== 303) throw new Error(`${kind} member sign-in answered ${answer.status}`);
    return client;
  };
  const siteAccount = await pool.query<{ id: string }>(
    `SELECT id FROM ledger_accounts WHERE owner_type = 'payments_site' AND owner_id = $1 AND asset = 'EUR'
     ORDER BY id LIMIT 1`,
    [String(merchant.sites[0]?.id)],
  );
  return {
    tessera,
    merchant: { id: merchant.id, apiKey: merchant.apiKey, siteId: merchant.sites[0]?.id ?? 0, customers },
    store: { id: store.id, key: session.data.id },
    partner: { id: partner.id },
    console: {
      merchant: await member('merchant', String(merchant.id)),
      store: await member('store', store.id),
      operator: await ConsoleClient.operator({ baseUrl: tessera.base, adminToken: tessera.adminToken }),
    },
    siteAccountId: siteAccount.rows[0]?.id ?? '',
    orderId,
    externalOrderId: 'scale-order-7',
    cryptoReference: 'scale-ref-3',
    cryptoOrderId,
  };
}

/** Money on the cardholder's account, from a funding account of the bench's own (as the tests' builders do). */
async function fund(pool: pg.Pool, accountId: string, minor: bigint): Promise<void> {
  const handle = openDatabase(pool.options.connectionString ?? '', { max: 2 });
  try {
    const ledger = new Ledger(() => new Date());
    const row = await handle.db
      .selectFrom('issuing_accounts')
      .select('ledger_account_id')
      .where('id', '=', accountId)
      .executeTakeFirstOrThrow();
    const source = await ledger.openAccount(handle.db, {
      ownerType: 'bench',
      ownerId: 'funding',
      asset: 'EUR',
      purpose: 'source',
      isBounded: false,
    });
    await handle.db.transaction().execute((tx) =>
      ledger.transfer(tx, {
        operationId: `bench-fund-${accountId}`,
        legs: [
          { accountId: source.id, amount: -minor },
          { accountId: row.ledger_account_id, amount: minor },
        ],
      }),
    );
  } finally {
    await handle.close();
  }
}
