// bench:scale's year of data: the scene's tenants' rows multiplied by SQL from their real rows
// (bench/scale.ts).
import type pg from 'pg';
import { rollUpDailyFigures } from '../packages/server/src/pages/console/overview-rollup.ts';
import { openDatabase } from '../packages/server/src/platform/db/database.ts';
import type { Scene } from './scale-scene.ts';

export /**
 * The big tenant's year: each table's rows copied from one of its real rows, with fresh ids, a creation
 * time spread over the past year in id order, and what must differ (references, customers) varied.
 */
async function seed(pool: pg.Pool, scene: Scene, orders: number) {
  const half = Math.floor(orders / 2);
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
    orders,
    {
      id: `nextval(pg_get_serial_sequence('payments_orders', 'id'))`,
      customer_id: `($3::int[])[1 + g % ${m.customers.length}]`,
      external_order_id: `'year-' || g`,
      checkout_attempt: 'NULL',
      created_at: spread(orders),
      updated_at: spread(orders),
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
  rows.payments_transactions = orders;
  rows.crypto_orders = await copy('crypto_orders', `store_id = '${scene.store.id}'`, half, {
    id: 'gen_random_uuid()',
    reference: `'year-ref-' || g`,
    status: `'expired'`,
    created_at: spread(half),
    updated_at: spread(half),
    expires_at: spread(half),
  });
  rows.issuing_transactions = await copy(
    'issuing_transactions',
    `partner_id = '${scene.partner.id}' AND status = 'authorized'`,
    half,
    {
      id: 'gen_random_uuid()',
      status: `'settled'`,
      settled_amount: 'amount',
      hold_id: 'NULL',
      hold_expires_at: 'NULL',
      network_reference: 'NULL',
      created_at: spread(half),
      authorized_at: spread(half),
      settled_at: spread(half),
      updated_at: spread(half),
    },
  );
  rows.events = await copy(
    'events',
    `api = 'payments' AND tenant_id = '${m.siteId}'`,
    Math.floor(orders * 1.5),
    {
      id: `'evt_0' || lpad(g::text, 25, '0')`,
      created_at: spread(Math.floor(orders * 1.5)),
    },
  );
  // The busy site's ledger: a capture per order, each a transaction of two entries, the balances moved
  // to match (the site's by its row, the network's receivable by one delta), so the invariants hold.
  const receivable = await pool.query<{ id: string }>(
    `SELECT account_id AS id FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id
     WHERE a.owner_type = 'payments_network' LIMIT 1`,
  );
  const entries = orders * 2;
  await pool.query(
    `INSERT INTO ledger_transactions (id, operation_id, request_hash, kind, status, asset, metadata, created_at)
     SELECT 'ltx_00' || lpad(g::text, 24, '0'), 'year-capture:' || g, md5(g::text), 'transfer', 'posted', 'EUR', '{}',
       ${spread(orders)} FROM generate_series(1, $1::int) g`,
    [orders, start],
  );
  await pool.query(
    `INSERT INTO ledger_entries (transaction_id, account_id, asset, amount)
     SELECT 'ltx_00' || lpad(g::text, 24, '0'), a.id, 'EUR', a.amount
     FROM generate_series(1, $1::int) g, (VALUES ($2::text, 1090::numeric), ($3::text, -1090::numeric)) a (id, amount)`,
    [orders, scene.siteAccountId, receivable.rows[0]?.id],
  );
  await pool.query('UPDATE ledger_accounts SET posted = posted + $1::numeric WHERE id = $2', [
    1090 * orders,
    scene.siteAccountId,
  ]);
  await pool.query(
    `INSERT INTO ledger_account_deltas (account_id, posted, pending_debits, pending_credits) VALUES ($1, $2::numeric, 0, 0)`,
    [receivable.rows[0]?.id, -1090 * orders],
  );
  rows.ledger_entries = entries;
  // A key's row is its scope's and key's SHA-256: the first 16 bytes its primary key, the rest its check
  // (idempotency-store.ts, keyDigest; migrations 0084 and 0087)
  const keySha = (key: string) =>
    `sha256(convert_to('payments:merchant:${m.id}' || E'\\n' || ${key}, 'UTF8'))`;
  const digestOf = (key: string) => `encode(substr(${keySha(key)}, 1, 16), 'hex')::uuid`;
  rows.idempotency_keys = await copy('idempotency_keys', `key_digest = ${digestOf(`'scale-0'`)}`, half, {
    key_digest: digestOf(`'year-' || g`),
    key_check: `substr(${keySha(`'year-' || g`)}, 17, 16)`,
  });
  // Every charge's risk signal (docs/risk.md), keys varied so velocity has something to count: 62,500
  // IPs, 50,000 emails, 400,000 cards, one in fifty declined.
  rows.risk_signals = await copy('risk_signals', `tenant = 'merchant:${m.id}'`, orders, {
    object_id: `'year-' || g`,
    at: spread(orders),
    ip: `'10.' || (g % 250) || '.' || (g / 250 % 250) || '.1'`,
    email: `'buyer' || (g % 50000) || '@example.com'`,
    card_fingerprint: 'md5((g % 400000)::text)',
    customer_id: '(g % 20000)::text',
    declined: 'g % 50 = 0',
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

/** The columns a copy writes: all but the generated ones (an identity column takes its default). */
async function columnsOf(pool: pg.Pool, table: string): Promise<string[]> {
  const { rows } = await pool.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_name = $1 AND table_schema = current_schema()
       AND is_generated = 'NEVER' AND coalesce(identity_generation, '') <> 'ALWAYS' ORDER BY ordinal_position`,
    [table],
  );
  return rows.map((r) => r.column_name);
}
