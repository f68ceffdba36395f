// The search box: any object by its id, among what the viewer may see. Payments ids are numbers shared by
// orders, transactions and customers, so one id may name several objects; the page then lists them.
import { type RawBuilder, sql } from 'kysely';
import { sees } from '../../../platform/console/console-scope.ts';
import type { Viewer } from '../../../platform/console/console-users.ts';
import { UUID } from '../../../platform/console/paging.ts';
import type { Executor } from '../../../platform/db/database.ts';
import { ownedBy as ownedByHash } from '../../../platform/db/owner-hash.ts';
import { ownedBy } from './ledger-reads.ts';

export interface Found {
  kind: string;
  id: string;
  href: string;
}

const tenant = (viewer: Viewer, column: string): RawBuilder<boolean> =>
  viewer.role === 'operator' ? sql<boolean>`true` : sql<boolean>`${sql.ref(column)} = ${viewer.tenant.id}`;

export async function findById(db: Executor, viewer: Viewer, input: string): Promise<Found[]> {
  const q = input.trim();
  if (q.length === 0 || q.length > 120) return [];
  const branches: RawBuilder<Found>[] = [];
  // uuid columns are compared only with a uuid (anything else would be a type error, and names none of them).
  const uuid = UUID.test(q) ? q : '00000000-0000-0000-0000-000000000000';
  const add = (kind: string, href: RawBuilder<string>, from: RawBuilder<unknown>) =>
    branches.push(sql<Found>`SELECT ${kind} AS kind, ${href} AS href, ${q} AS id ${from}`);

  if (sees(viewer, 'merchant')) {
    if (/^\d{1,15}$/.test(q)) {
      const n = Number(q);
      add(
        'payments order',
        sql`'/console/payments/orders/' || id`,
        sql`FROM payments_orders WHERE id = ${n} AND ${tenant(viewer, 'merchant_id')}`,
      );
      add(
        'payments transaction',
        sql`'/console/payments/transactions/' || id`,
        sql`FROM payments_transactions WHERE id = ${n} AND ${tenant(viewer, 'merchant_id')}`,
      );
      add(
        'payments customer',
        sql`'/console/payments/customers/' || id`,
        sql`FROM payments_customers WHERE id = ${n} AND ${tenant(viewer, 'merchant_id')}`,
      );
      add(
        'stored card',
        sql`'/console/payments/customers/' || customer_id`,
        sql`FROM payments_cards WHERE id = ${n} AND ${tenant(viewer, 'merchant_id')}`,
      );
      add(
        'site',
        sql`'/console/payments/sites/' || id`,
        sql`FROM sites WHERE id = ${n} AND ${tenant(viewer, 'merchant_id')}`,
      );
      add(
        'merchant',
        sql`'/console/payments/sites?merchantId=' || id`,
        sql`FROM merchants WHERE id = ${n} AND ${tenant(viewer, 'id')}`,
      );
    }
    add(
      'payments order (merchant’s order id)',
      sql`'/console/payments/orders/' || id`,
      sql`FROM payments_orders WHERE external_order_id = ${q} AND ${tenant(viewer, 'merchant_id')}`,
    );
    add(
      'payment link',
      sql`'/console/payments/links'`,
      sql`FROM payments_links WHERE hash = ${q} AND ${tenant(viewer, 'merchant_id')}`,
    );
  }
  if (sees(viewer, 'store')) {
    add(
      'crypto order',
      sql`'/console/crypto/orders/' || id`,
      sql`FROM crypto_orders WHERE (id = ${uuid}::uuid OR payment_id = ${uuid}::uuid OR reference = ${q}) AND ${tenant(viewer, 'store_id')}`,
    );
    add(
      'crypto deposit',
      sql`'/console/crypto/orders/' || order_id`,
      sql`FROM crypto_deposits WHERE id = ${q} AND ${tenant(viewer, 'store_id')}`,
    );
    add(
      'crypto refund',
      sql`'/console/crypto/refunds/' || id`,
      sql`FROM crypto_refunds WHERE id = ${uuid}::uuid AND ${tenant(viewer, 'store_id')}`,
    );
    add(
      'store',
      sql`'/console/crypto/stores/' || id`,
      sql`FROM stores WHERE (id = ${q} OR client_id = ${q}) AND ${tenant(viewer, 'id')}`,
    );
  }
  if (sees(viewer, 'partner')) {
    add(
      'partner',
      sql`'/console/issuing/partners/' || id`,
      sql`FROM partners WHERE (id = ${q} OR partner_id = ${uuid}::uuid) AND ${tenant(viewer, 'id')}`,
    );
    add(
      'issuing customer',
      sql`'/console/issuing/customers/' || id`,
      sql`FROM issuing_customers WHERE id = ${q} AND ${tenant(viewer, 'partner_id')}`,
    );
    add(
      'issuing account',
      sql`'/console/issuing/customers/' || customer_id`,
      sql`FROM issuing_accounts WHERE id = ${uuid}::uuid AND ${tenant(viewer, 'partner_id')}`,
    );
    add(
      'issued card',
      sql`'/console/issuing/cards/' || id`,
      sql`FROM issuing_cards WHERE id = ${uuid}::uuid AND ${tenant(viewer, 'partner_id')}`,
    );
    add(
      'card transaction',
      sql`'/console/issuing/transactions/' || id`,
      sql`FROM issuing_transactions WHERE id = ${uuid}::uuid AND ${tenant(viewer, 'partner_id')}`,
    );
    add(
      '3-D Secure challenge',
      sql`'/console/issuing/transactions/' || c.transaction_id`,
      sql`FROM issuing_3ds_challenges c JOIN issuing_transactions t ON t.id = c.transaction_id
        WHERE c.id = ${uuid}::uuid AND ${tenant(viewer, 't.partner_id')}`,
    );
    add(
      'topup',
      sql`'/console/issuing/customers/' || customer_id`,
      sql`FROM issuing_topups WHERE id = ${q} AND ${tenant(viewer, 'partner_id')}`,
    );
  }
  add(
    'event',
    sql`'/console/developers/events/' || id`,
    sql`FROM events e WHERE e.id = ${q} AND ${eventVisible(viewer)}`,
  );
  add(
    'ledger account',
    sql`'/console/ledger/accounts/' || a.id`,
    sql`FROM ledger_accounts a WHERE a.id = ${q} AND ${ownedBy(viewer)}`,
  );
  const { rows } = await sql<Found>`${sql.join(branches, sql` UNION ALL `)}`.execute(db);
  return rows;
}

/** The events a viewer may open: all for an operator, else those of their own tenant's API. */
export function eventVisible(viewer: Viewer): RawBuilder<boolean> {
  if (viewer.role === 'operator') return sql<boolean>`true`;
  const { kind, id } = viewer.tenant;
  if (kind === 'merchant') {
    return sql<boolean>`e.api = 'payments' AND e.tenant_id IN (SELECT id::text FROM sites WHERE merchant_id::text = ${id})`;
  }
  return sql<boolean>`e.api = ${kind === 'store' ? 'crypto' : 'issuing'} AND ${ownedByHash('e.tenant_id', id)}`;
}
