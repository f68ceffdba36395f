// No row that every tenant writes (docs/architecture.md, Scale): the statements of a payments order, a card
// authorization and a crypto order update, delete or lock only rows of their own tenant, so two tenants'
// requests never wait for each other in the database. Every table gets a trigger that logs which
// transaction wrote which row (by primary key); rows only locked are found by their xmax, which names the
// last transaction that locked them. Each request runs alone, and the rows it updated or locked are
// compared with another tenant's same request: none may be in both.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aStore, orderDocument, type TestStore } from '../harness/crypto-builders.ts';
import type { Harness as HarnessType } from '../harness/harness.ts';
import { Harness } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import { aCustomer, aMerchant, anOrder } from '../harness/payments-builders.ts';

let h: HarnessType;

beforeAll(async () => {
  h = await Harness.start();
  await installRowLog(h);
});
afterAll(async () => {
  await h?.close();
});

/** Logs every row written, by transaction, table and primary key (test-only triggers). */
async function installRowLog(harness: HarnessType): Promise<void> {
  const db = harness.services.db;
  await sql`CREATE TABLE test_row_log (id bigint GENERATED ALWAYS AS IDENTITY, xid bigint NOT NULL, tbl text NOT NULL, op text NOT NULL, key jsonb NOT NULL)`.execute(
    db,
  );
  await sql`
    CREATE FUNCTION test_log_row() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      r jsonb := CASE TG_OP WHEN 'DELETE' THEN to_jsonb(OLD) ELSE to_jsonb(NEW) END;
      k jsonb := '{}';
      c text;
    BEGIN
      IF TG_NARGS > 0 THEN
        FOREACH c IN ARRAY TG_ARGV LOOP k := k || jsonb_build_object(c, r -> c); END LOOP;
      END IF;
      INSERT INTO test_row_log (xid, tbl, op, key) VALUES (pg_current_xact_id()::text::bigint, TG_TABLE_NAME, TG_OP, CASE WHEN k = '{}' THEN r ELSE k END);
      RETURN NULL;
    END $$`.execute(db);
  for (const { table, keys } of await tablesWithKeys(harness)) {
    if (table === 'test_row_log') continue;
    const args = keys.map((k) => `'${k}'`).join(', ');
    await sql
      .raw(
        `CREATE TRIGGER test_log_row AFTER INSERT OR UPDATE OR DELETE ON "${table}" FOR EACH ROW EXECUTE FUNCTION test_log_row(${args})`,
      )
      .execute(db);
  }
}

async function tablesWithKeys(harness: HarnessType): Promise<{ table: string; keys: string[] }[]> {
  const { rows } = await sql<{ table: string; keys: string[] | null }>`
    SELECT c.relname AS table,
      (SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_index i
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
       WHERE i.indrelid = c.oid AND i.indisprimary) AS keys
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind = 'r'`.execute(harness.services.db);
  return rows.map((row) => ({ table: row.table, keys: row.keys ?? [] }));
}

/**
 * The rows a request's transactions updated, deleted or locked: its transactions are those that inserted
 * into one of `tables` while it ran.
 */
async function rowsTouchedBy(request: () => Promise<void>, tables: string[]): Promise<Set<string>> {
  const touched = new Set<string>();
  // Eight requests, so the shards a request picks (a site’s balance, a network’s) are bound to meet.
  for (let i = 0; i < 8; i++) for (const row of await rowsTouchedByOne(request, tables)) touched.add(row);
  return touched;
}

async function rowsTouchedByOne(request: () => Promise<void>, tables: string[]): Promise<Set<string>> {
  const db = h.services.db;
  const mark = await sql<{ n: string }>`SELECT coalesce(max(id), 0)::text AS n FROM test_row_log`.execute(db);
  await request();
  const { rows: xids } = await sql<{ xid: string }>`
    SELECT DISTINCT xid::text FROM test_row_log l WHERE l.id > ${mark.rows[0]?.n ?? '0'}::bigint
      AND l.op = 'INSERT' AND l.tbl = ANY(${tables}::text[])`.execute(db);
  const ids = xids.map((x) => x.xid);
  expect(ids.length).toBeGreaterThan(0);
  const touched = new Set<string>();
  const { rows: written } = await sql<{ tbl: string; key: unknown }>`
    SELECT tbl, key FROM test_row_log WHERE op <> 'INSERT' AND xid::text = ANY(${ids}::text[])`.execute(db);
  for (const row of written) touched.add(`${row.tbl} ${JSON.stringify(row.key)}`);
  for (const { table, keys } of await tablesWithKeys(h)) {
    const key = keys.length > 0 ? keys.map((k) => `'${k}', "${k}"`).join(', ') : `'row', to_jsonb(t.*)`;
    const { rows: locked } = await sql<{ key: unknown }>`
      SELECT jsonb_build_object(${sql.raw(key)}) AS key FROM ${sql.table(table)} t
      WHERE t.xmax::text = ANY(${ids}::text[])`.execute(db);
    for (const row of locked) touched.add(`${table} ${JSON.stringify(row.key)} (locked)`);
  }
  return touched;
}

const shared = (a: Set<string>, b: Set<string>) => [...a].filter((row) => b.has(row));

describe('rows shared between tenants', () => {
  it('a payments order of one merchant touches no row another merchant’s order touches', async () => {
    const tenants = [];
    for (let i = 0; i < 2; i++) {
      const merchant = await aMerchant(h);
      tenants.push({ merchant, customerId: await aCustomer(h, merchant) });
    }
    const [one, two] = tenants as [(typeof tenants)[0], (typeof tenants)[0]];
    const order = (tenant: typeof one, keyed: boolean) => async () => {
      const res = await h.request('POST', '/payments/order', {
        headers: {
          ...tenant.merchant.auth,
          ...(keyed ? { 'idempotency-key': `shared-rows-${Math.random()}` } : {}),
        },
        form: anOrder(tenant.customerId),
      });
      expect(res.status).toBe(201);
    };
    // The first order of each opens the accounts it posts to; the measured ones are the common case.
    await order(one, false)();
    await order(two, false)();
    for (const keyed of [false, true]) {
      const a = await rowsTouchedBy(order(one, keyed), ['payments_orders']);
      const b = await rowsTouchedBy(order(two, keyed), ['payments_orders']);
      expect(shared(a, b), `keyed: ${keyed}`).toEqual([]);
    }
  });

  it('a card authorization of one partner touches no row another partner’s authorization touches', async () => {
    const cards: string[] = [];
    for (const name of ['Partner A', 'Partner B']) {
      const partner = await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name } });
      cards.push((await aCardholder(h, partner.body.apiKey, 100_00n)).cardId);
    }
    const authorize = (cardId: string | undefined) => async () => {
      const res = await h.request('POST', '/sandbox/issuing/authorizations', {
        headers: { authorization: `Bearer ${h.adminToken}` },
        json: { cardId, amount: '1.00', currency: 'EUR', merchant: 'Shop' },
      });
      expect(res.status).toBeLessThan(300);
    };
    const [one, two] = cards;
    await authorize(one)();
    await authorize(two)();
    const a = await rowsTouchedBy(authorize(one), ['issuing_transactions']);
    const b = await rowsTouchedBy(authorize(two), ['issuing_transactions']);
    expect(shared(a, b)).toEqual([]);
  });

  it('a crypto order of one store touches no row another store’s order touches', async () => {
    const order = (store: TestStore) => async () => {
      const res = await h.request('POST', '/crypto/api/stores/orders', {
        headers: store.auth,
        json: orderDocument({ reference: `shared-${Math.random()}` }),
      });
      expect(res.status).toBe(201);
    };
    const one = await aStore(h);
    const two = await aStore(h);
    await order(one)();
    await order(two)();
    const a = await rowsTouchedBy(order(one), ['crypto_orders']);
    const b = await rowsTouchedBy(order(two), ['crypto_orders']);
    expect(shared(a, b)).toEqual([]);
  });
});
