// `npm run bench:scale`: the reads of the APIs and the console on a year of data. One tenant of each API
// is made through the real API (orders, payments, authorizations, keyed writes), every read is measured
// (median of 5, ms), then the tenant's rows are multiplied by SQL from those real rows — orders,
// transactions, crypto orders, card transactions, events, ledger entries, idempotency keys, spread over a
// year — the tables vacuumed and analyzed as a year of autovacuum leaves them, and the same reads measured
// again. Sizes: BENCH_SCALE_ORDERS payments orders (default 200,000; the figure in docs/scale.md used
// 2,000,000), and the others in proportion. Writes bench/scale-results.json. Docs: docs/scale.md.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { rollUpDailyFigures } from '../packages/server/src/pages/console/overview-rollup.ts';
import { openDatabase } from '../packages/server/src/platform/db/database.ts';
import {
  ensureDatabase,
  startEmbeddedPostgres,
} from '../packages/server/src/platform/db/embedded-postgres.ts';
import { migrate } from '../packages/server/src/platform/db/migrate.ts';
import { Ledger } from '../packages/server/src/platform/ledger/ledger.ts';
import { ConsoleClient } from '../packages/server/test/harness/console-client.ts';
import { startTessera, type TesseraServer } from './servers.ts';

const ORDERS = Number(process.env.BENCH_SCALE_ORDERS ?? 200_000);
const HALF = Math.floor(ORDERS / 2);
const RUNS = 5;

interface Scene {
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

async function main() {
  const directory = await mkdtemp(join(tmpdir(), 'tessera-scale-'));
  await chmod(directory, 0o755);
  const server = await startEmbeddedPostgres({
    directory: join(directory, 'data'),
    password: randomBytes(12).toString('hex'),
  });
  await ensureDatabase(server.connectionString('postgres'), 'tessera_scale');
  const databaseUrl = server.connectionString('tessera_scale');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  await migrate(databaseUrl);
  const tessera = await startTessera(databaseUrl, { workers: 1, dataDir: join(directory, 'server') });
  try {
    const scene = await makeScene(tessera, pool);
    process.stdout.write(`Scale bench: ${ORDERS.toLocaleString('en')} payments orders in the big tenant\n\n`);
    const small = await measureReads(scene);
    const seeded = await seed(pool, scene);
    const size = await databaseSize(pool);
    process.stdout.write(
      `seeded in ${seeded.seconds} s: ${JSON.stringify(seeded.rows)}; database ${size}\n\n`,
    );
    const big = await measureReads(scene);
    const results = Object.keys(small).map((read) => {
      const [s, b] = [small[read] ?? 0, big[read] ?? 0];
      return { read, smallMs: s, bigMs: b, ratio: Math.round((b / Math.max(s, 0.1)) * 100) / 100 };
    });
    for (const r of results) {
      process.stdout.write(
        `${r.read.padEnd(58)} small ${r.smallMs.toFixed(1).padStart(7)} ms   big ${r.bigMs.toFixed(1).padStart(7)} ms   ×${r.ratio.toFixed(2)}\n`,
      );
    }
    await writeFile(
      new URL('./scale-results.json', import.meta.url),
      `${JSON.stringify(
        {
          results,
          seeded,
          database: size,
          meta: {
            date: new Date().toISOString(),
            machine: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
            orders: ORDERS,
          },
        },
        null,
        2,
      )}\n`,
    );
    process.stdout.write('\nwritten to bench/scale-results.json\n');
  } finally {
    await tessera.stop();
    await pool.end();
    await server.stop();
    await rm(directory, { recursive: true, force: true });
  }
}

/** One tenant per API, with a few dozen objects made through the API. */
async function makeScene(tessera: TesseraServer, pool: pg.Pool): Promise<Scene> {
  const { call, admin } = tessera;
  const merchant = await call<{ id: number; apiKey: string; sites: { id: number }[] }>(
    'POST',
    '/admin/merchants',
    admin,
    { name: 'Big merchant', sites: [{ name: 'Big site' }] },
  );
  const auth = { authorization: `Bearer ${merchant.apiKey}` };
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

/** Every read, the median of RUNS calls each, ms. */
async function measureReads(scene: Scene): Promise<Record<string, number>> {
  const api = (path: string, headers: Record<string, string>) => async () => {
    const res = await fetch(`${scene.tessera.base}${path}`, { headers });
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${(await res.text()).slice(0, 200)}`);
    await res.arrayBuffer();
  };
  const page = (client: ConsoleClient, path: string) => async () => {
    const res = await client.get(path);
    // A search that finds one object sends the browser to it (303); one that finds none answers 404.
    if (![200, 303, 404].includes(res.status)) throw new Error(`console ${path}: ${res.status}`);
  };
  const payments = { authorization: `Bearer ${scene.merchant.apiKey}` };
  const crypto = { authorization: `Bearer ${scene.store.key}` };
  const { merchant, store, operator } = scene.console;
  const reads: Record<string, () => Promise<void>> = {
    'payments GET /order page 1': api('/payments/order?perPage=100', payments),
    'payments GET /order page 100 (the window’s last)': api('/payments/order?perPage=100&page=100', payments),
    'payments GET /order?externalOrderId=': api(
      `/payments/order?externalOrderId=${scene.externalOrderId}`,
      payments,
    ),
    'payments GET /order?customerId=': api(
      `/payments/order?customerId=${scene.merchant.customers[3]}`,
      payments,
    ),
    'payments GET /transaction page 1': api('/payments/transaction?perPage=100', payments),
    'payments GET /order/{id}': api(`/payments/order/${scene.orderId}`, payments),
    'crypto GET /stores/orders/{id}': api(`/crypto/api/stores/orders/${scene.cryptoOrderId}`, crypto),
    'console overview, 90 days (merchant)': page(merchant, '/console/?days=90'),
    'console overview, 90 days (operator)': page(operator, '/console/?days=90'),
    'console search: an order id': page(operator, `/console/search?q=${scene.orderId}`),
    'console search: a merchant order id': page(operator, `/console/search?q=${scene.externalOrderId}`),
    'console search: a crypto reference': page(operator, `/console/search?q=${scene.cryptoReference}`),
    'console search: unknown text': page(operator, '/console/search?q=no-such-thing'),
    'console payments orders (merchant)': page(merchant, '/console/payments/orders'),
    'console crypto orders (store)': page(store, '/console/crypto/orders'),
    'console payments orders (operator)': page(operator, '/console/payments/orders'),
    'console card transactions (operator)': page(operator, '/console/issuing/transactions'),
    'console ledger account of the busy site': page(
      merchant,
      `/console/ledger/accounts/${scene.siteAccountId}`,
    ),
    'console events (operator)': page(operator, '/console/developers/events'),
  };
  const medians: Record<string, number> = {};
  for (const [name, read] of Object.entries(reads)) {
    await read(); // warm: plans, caches
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      await read();
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    medians[name] = Math.round((times[Math.floor(RUNS / 2)] ?? 0) * 10) / 10;
  }
  return medians;
}

/**
 * The big tenant's year: each table's rows copied from one of its real rows, with fresh ids, a creation
 * time spread over the past year in id order, and what must differ (references, customers) varied.
 */
async function seed(pool: pg.Pool, scene: Scene) {
  const started = performance.now();
  const now = new Date();
  const start = new Date(now.getTime() - 366 * 86_400_000);
  const spread = (n: number, g = 'g') =>
    `($2::timestamptz + (${g}::bigint * ${Math.floor((365 * 86_400_000) / n)}) * interval '1 millisecond')`;
  const copy = async (
    table: string,
    template: string,
    count: number,
    overrides: Record<string, string>,
    parameters: unknown[] = [],
  ) => {
    const columns = await columnsOf(pool, table);
    const select = columns.map((c) => overrides[c] ?? `t0.${c}`).join(', ');
    await pool.query(
      `INSERT INTO ${table} (${columns.join(', ')}) SELECT ${select}
       FROM (SELECT * FROM ${table} WHERE ${template} LIMIT 1) t0, generate_series(1, $1::int) g
       WHERE $2::timestamptz IS NOT NULL`,
      [count, start, ...parameters],
    );
    return count;
  };
  const m = scene.merchant;
  const rows: Record<string, number> = {};
  const before = await pool.query<{ max: number }>('SELECT max(id) AS max FROM payments_orders');
  rows.payments_orders = await copy(
    'payments_orders',
    `merchant_id = ${m.id} AND status = 'complete-ok'`,
    ORDERS,
    {
      id: `nextval(pg_get_serial_sequence('payments_orders', 'id'))`,
      customer_id: `($3::int[])[1 + g % ${m.customers.length}]`,
      external_order_id: `'year-' || g`,
      checkout_attempt: 'NULL',
      created_at: spread(ORDERS),
      updated_at: spread(ORDERS),
    },
    [m.customers],
  );
  // One transaction per new order, made from one of the tenant's real deposits.
  const transactionColumns = await columnsOf(pool, 'payments_transactions');
  const fromOrder: Record<string, string> = {
    id: `nextval(pg_get_serial_sequence('payments_transactions', 'id'))`,
    order_id: 'o.id',
    customer_id: 'o.customer_id',
    network_reference: `'year:' || o.id`,
    return_token: 'NULL',
    parent_id: 'NULL',
    created_at: 'o.created_at',
    updated_at: 'o.created_at',
  };
  await pool.query(
    `INSERT INTO payments_transactions (${transactionColumns.join(', ')})
     SELECT ${transactionColumns.map((c) => fromOrder[c] ?? `t0.${c}`).join(', ')}
     FROM (SELECT * FROM payments_transactions WHERE merchant_id = $1 AND type = 'deposit' LIMIT 1) t0,
       payments_orders o WHERE o.merchant_id = $1 AND o.id > $2`,
    [m.id, before.rows[0]?.max ?? 0],
  );
  rows.payments_transactions = ORDERS;
  rows.crypto_orders = await copy('crypto_orders', `store_id = '${scene.store.id}'`, HALF, {
    id: 'gen_random_uuid()',
    reference: `'year-ref-' || g`,
    status: `'expired'`,
    created_at: spread(HALF),
    updated_at: spread(HALF),
    expires_at: spread(HALF),
  });
  rows.issuing_transactions = await copy(
    'issuing_transactions',
    `partner_id = '${scene.partner.id}' AND status = 'authorized'`,
    HALF,
    {
      id: 'gen_random_uuid()',
      status: `'settled'`,
      settled_amount: 'amount',
      hold_id: 'NULL',
      hold_expires_at: 'NULL',
      network_reference: 'NULL',
      created_at: spread(HALF),
      authorized_at: spread(HALF),
      settled_at: spread(HALF),
      updated_at: spread(HALF),
    },
  );
  rows.events = await copy(
    'events',
    `api = 'payments' AND tenant_id = '${m.siteId}'`,
    Math.floor(ORDERS * 1.5),
    {
      id: `'evt_0' || lpad(g::text, 25, '0')`,
      created_at: spread(Math.floor(ORDERS * 1.5)),
    },
  );
  // The busy site's ledger: a capture per order, each a transaction of two entries, the balances moved
  // to match (the site's by its row, the network's receivable by one delta), so the invariants hold.
  const receivable = await pool.query<{ id: string }>(
    `SELECT account_id AS id FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id
     WHERE a.owner_type = 'payments_network' LIMIT 1`,
  );
  const entries = ORDERS * 2;
  await pool.query(
    `INSERT INTO ledger_transactions (id, operation_id, request_hash, kind, status, asset, metadata, created_at)
     SELECT 'ltx_00' || lpad(g::text, 24, '0'), 'year-capture:' || g, md5(g::text), 'transfer', 'posted', 'EUR', '{}',
       ${spread(ORDERS)} FROM generate_series(1, $1::int) g`,
    [ORDERS, start],
  );
  await pool.query(
    `INSERT INTO ledger_entries (transaction_id, account_id, asset, amount)
     SELECT 'ltx_00' || lpad(g::text, 24, '0'), a.id, 'EUR', a.amount
     FROM generate_series(1, $1::int) g, (VALUES ($2::text, 1090::numeric), ($3::text, -1090::numeric)) a (id, amount)`,
    [ORDERS, scene.siteAccountId, receivable.rows[0]?.id],
  );
  await pool.query('UPDATE ledger_accounts SET posted = posted + $1::numeric WHERE id = $2', [
    1090 * ORDERS,
    scene.siteAccountId,
  ]);
  await pool.query(
    `INSERT INTO ledger_account_deltas (account_id, posted, pending_debits, pending_credits) VALUES ($1, $2::numeric, 0, 0)`,
    [receivable.rows[0]?.id, -1090 * ORDERS],
  );
  rows.ledger_entries = entries;
  rows.idempotency_keys = await copy('idempotency_keys', `key = 'scale-0'`, HALF, {
    key: `'year-' || g`,
  });
  // The seeded rows are back-dated, which no real write is: the overview's rollup (already past those
  // days) is emptied and caught up here, as its sweep does over a year in a minute of runs.
  await pool.query('DELETE FROM console_daily_figures; DELETE FROM console_daily_figures_days');
  const handle = openDatabase(pool.options.connectionString ?? '', { max: 2 });
  try {
    while ((await rollUpDailyFigures(handle.db, new Date())) > 0);
  } finally {
    await handle.close();
  }
  await pool.query('VACUUM ANALYZE');
  return { seconds: Math.round((performance.now() - started) / 1000), rows };
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

/** The columns a copy writes: all but the generated ones (an identity column takes its default). */
async function columnsOf(pool: pg.Pool, table: string): Promise<string[]> {
  const { rows } = await pool.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_name = $1 AND table_schema = current_schema()
       AND is_generated = 'NEVER' AND coalesce(identity_generation, '') <> 'ALWAYS' ORDER BY ordinal_position`,
    [table],
  );
  return rows.map((r) => r.column_name);
}

async function databaseSize(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ size: string }>(
    'SELECT pg_size_pretty(pg_database_size(current_database())) AS size',
  );
  return rows[0]?.size ?? '?';
}

await main();
