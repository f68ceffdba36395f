// Payments: order creation (POST /order: purchase, authAndCapture, a new card, no 3D Secure), form-encoded
// as the service's clients send it, with a merchant's API key: validation, the order, the card network
// simulator's sale, the ledger credit to the site, the IPN event, in one transaction.
import type { Db } from '../packages/server/src/platform/db/database.ts';
import { Ledger } from '../packages/server/src/platform/ledger/ledger.ts';
import type { FloorFixture } from './floor-server.ts';
import type { HttpTarget } from './http-load.ts';
import type { TesseraServer } from './servers.ts';

const CUSTOMERS = 100;
const RECEIVABLE_SHARDS = 16;

export interface PathSetup<F> {
  target: HttpTarget;
  floor: Omit<HttpTarget, 'base'>;
  fixture: F;
}

/** A Visa number of its own for each customer (Luhn-valid), so velocity by card counts like a shop's. */
function cardOf(index: number): string {
  const body = `411111${String(index).padStart(9, '0')}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let digit = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) digit *= 2;
    sum += digit > 9 ? digit - 9 : digit;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

export async function setUpPayments(
  tessera: TesseraServer,
  db: Db,
  options: { cardPerCustomer?: boolean } = {},
): Promise<PathSetup<FloorFixture['payments']>> {
  const { call, admin } = tessera;
  const merchant = await call<{ id: number; apiKey: string; sites: { id: number }[] }>(
    'POST',
    '/admin/merchants',
    admin,
    { name: 'Bench merchant', sites: [{ name: 'Bench site' }] },
  );
  const siteId = merchant.sites[0]?.id as number;
  const auth = { authorization: `Bearer ${merchant.apiKey}` };
  const customers: number[] = [];
  for (let i = 0; i < CUSTOMERS; i++) {
    const created = await call<{ data: { id: number } }>('POST', '/payments/customer', auth, {
      identifier: `bench-${i}`,
      email: `bench-${i}@example.com`,
    });
    customers.push(created.data.id);
  }
  const expiry = `12/${String((new Date().getUTCFullYear() + 3) % 100).padStart(2, '0')}`;
  const bodies = customers.map((customerId, i) =>
    new URLSearchParams({
      amount: '10.90',
      currency: 'EUR',
      orderType: 'purchase',
      cardTransactionMode: 'authAndCapture',
      customerId: String(customerId),
      description: 'Bench order',
      cardNumber: options.cardPerCustomer ? cardOf(i) : '4111111111111111',
      cardExpiryDate: expiry,
      cardCvv: '123',
      cardHolderName: 'Bench Buyer',
      cardHolderCountry: 'RO',
    }).toString(),
  );
  // One order per customer through the real path opens the accounts the orders post to.
  for (const body of bodies) {
    const res = await fetch(`${tessera.base}/payments/order`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    if (res.status !== 201) throw new Error(`order: ${res.status} ${await res.text()}`);
  }
  const ledger = new Ledger(() => new Date());
  const receivableAccounts: string[] = [];
  for (let shard = 0; shard < RECEIVABLE_SHARDS; shard++) {
    const account = await ledger.openAccount(db, {
      ownerType: 'payments_network',
      ownerId: 'card-network',
      asset: 'EUR',
      purpose: `receivable:${shard}`,
      isBounded: false,
    });
    receivableAccounts.push(account.id);
  }
  const siteBalanceAccounts = (
    await db
      .selectFrom('ledger_accounts')
      .select('id')
      .where('owner_type', '=', 'payments_site')
      .where('owner_id', '=', String(siteId))
      .where('asset', '=', 'EUR')
      .execute()
  ).map((row) => row.id);
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  return {
    target: {
      base: tessera.base,
      path: '/payments/order',
      headers: { ...auth, ...headers },
      bodies,
      expect: '"transactionStatus":"complete-ok"',
    },
    floor: { path: '/floor/payments/order', headers, bodies, expect: '"transactionStatus":"complete-ok"' },
    fixture: { merchantId: merchant.id, siteId, siteBalanceAccounts, receivableAccounts, currency: 'EUR' },
  };
}
