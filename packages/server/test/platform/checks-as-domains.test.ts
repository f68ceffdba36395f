// The one-column checks of the tables every request writes are domains (migration 0048; docs/architecture.md,
// Write paths): Postgres parses and plans a table's CHECK constraints again on every write, a domain's once per
// connection. Nothing is checked less: each domain refuses what the table's constraint refused, under the
// constraint's old name.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/platform/db/database.ts';
import { createTestDatabase } from '../harness/test-database.ts';

let handle: DatabaseHandle;

beforeAll(async () => {
  handle = openDatabase(await createTestDatabase(), { max: 2 });
});
afterAll(async () => {
  await handle.close();
});

const HOT_TABLES = [
  'ledger_accounts',
  'ledger_entries',
  'ledger_transactions',
  'ledger_account_credits',
  'events',
  'payments_orders',
  'payments_transactions',
  'payments_cards',
  'issuing_transactions',
  'card_network_authorizations',
  'crypto_orders',
  'crypto_quotes',
  'crypto_payments',
];

/** The constraint a value's cast to a domain breaks, or 'accepted'. */
async function refusal(domain: string, value: string): Promise<string> {
  try {
    await sql`SELECT ${value}::${sql.id(domain)}`.execute(handle.db);
    return 'accepted';
  } catch (err) {
    return (err as { constraint?: string }).constraint ?? String(err);
  }
}

describe('checks as domains', () => {
  it('leaves no one-column CHECK constraint on the tables every request writes', async () => {
    const { rows } = await sql<{ name: string }>`
      SELECT conrelid::regclass::text || '.' || conname AS name FROM pg_constraint
      WHERE contype = 'c' AND cardinality(conkey) = 1 AND conrelid::regclass::text = ANY (${HOT_TABLES})`.execute(
      handle.db,
    );
    expect(rows).toEqual([]);
    const domains = await sql<{ column: string; domain: string | null }>`
      SELECT table_name || '.' || column_name AS column, domain_name AS domain FROM information_schema.columns
      WHERE table_schema = current_schema() AND (table_name, column_name) IN (
        ('payments_orders', 'status'), ('payments_transactions', 'amount'), ('issuing_transactions', 'held_amount'),
        ('ledger_entries', 'amount'), ('crypto_orders', 'total'), ('events', 'api'))
      ORDER BY 1`.execute(handle.db);
    for (const row of domains.rows) expect(row.domain).toBe(row.column.replace('.', '_'));
    expect(domains.rows).toHaveLength(6);
  });

  it('refuses what the table constraints refused, under their names, and takes what they took', async () => {
    const cases: [string, string, string][] = [
      ['payments_orders_status', 'shipped', 'complete-ok'],
      ['payments_orders_amount', '0', '1'],
      ['payments_transactions_type', 'gift', 'chargeback'],
      ['payments_transactions_amount', '-5', '5'],
      ['issuing_transactions_held_amount', '-1', '0'],
      ['issuing_transactions_status', 'lost', 'pending_3ds'],
      ['card_network_authorizations_route', 'elsewhere', 'on-us'],
      ['crypto_orders_total', '0', '1000000000000000000000'],
      ['crypto_quotes_rate_e18', '0', '1'],
      ['events_api', 'console', 'crypto'],
      ['ledger_entries_amount', '0', '-1'],
      ['ledger_account_credits_pending_credits', '-1', '0'],
      ['ledger_accounts_pending_debits', '-1', '0'],
      ['ledger_accounts_pending_credits', '-1', '0'],
    ];
    for (const [domain, bad, good] of cases) {
      expect(await refusal(domain, bad), `${domain} ${bad}`).toBe(`${domain}_check`);
      expect(await refusal(domain, good), `${domain} ${good}`).toBe('accepted');
    }
  });

  it('keeps the column type: amounts stay whole numbers of 78 digits', async () => {
    const { rows } = await sql<{
      value: string;
    }>`SELECT ${'12.5'}::payments_orders_amount::text AS value`.execute(handle.db);
    expect(rows[0]?.value).toBe('13');
  });
});
