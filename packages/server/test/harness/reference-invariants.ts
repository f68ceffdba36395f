// The references the hot write paths make without a foreign key (migration 0076): each must resolve.
import { sql } from 'kysely';
import { expect } from 'vitest';
import type { Harness } from './harness.ts';

/** Child table, its column, the parent table it points to (by `id`) */
const UNCHECKED_REFERENCES: [string, string, string][] = [
  ['issuing_transactions', 'customer_id', 'issuing_customers'],
  ['issuing_transactions', 'partner_id', 'partners'],
  ['issuing_transactions', 'card_id', 'issuing_cards'],
  ['issuing_transactions', 'account_id', 'issuing_accounts'],
  ['payments_orders', 'merchant_id', 'merchants'],
  ['payments_orders', 'site_id', 'sites'],
  ['payments_orders', 'customer_id', 'payments_customers'],
  ['payments_transactions', 'merchant_id', 'merchants'],
  ['payments_transactions', 'site_id', 'sites'],
  ['payments_transactions', 'order_id', 'payments_orders'],
  ['payments_transactions', 'customer_id', 'payments_customers'],
  ['crypto_orders', 'store_id', 'stores'],
];

/** Every reference above resolves, in the whole test database: none names a row that is not there. */
export async function expectReferencesHold(h: Harness): Promise<void> {
  for (const [child, column, parent] of UNCHECKED_REFERENCES) {
    const dangling = await sql<{ id: string }>`
      SELECT c.${sql.ref(column)}::text AS id FROM ${sql.table(child)} c
      WHERE NOT EXISTS (SELECT 1 FROM ${sql.table(parent)} p WHERE p.id = c.${sql.ref(column)}) LIMIT 5`.execute(
      h.services.db,
    );
    expect(dangling.rows, `${child}.${column} → ${parent}`).toEqual([]);
  }
}
