// Console reads of money out (docs/payouts.md, Console): which sites and stores a viewer's money is in,
// their payouts and a payout's balance transactions. An operator sees every tenant; a merchant's member
// its sites; a store's member its store; a partner's member none (issuing accounts are not paid out).
import { sql } from 'kysely';
import type { Viewer } from '../../../platform/console/console-users.ts';
import { type Page, pageOf, whenGiven } from '../../../platform/console/paging.ts';
import type { Db, Executor } from '../../../platform/db/database.ts';
import { notFound } from '../../../platform/errors/domain-error.ts';

/** The owner keys ('site:1', 'store:str_…') the viewer may see; 'all' for an operator. */
export async function ownersOf(db: Executor, viewer: Viewer): Promise<string[] | 'all'> {
  if (viewer.role === 'operator') return 'all';
  const { kind, id } = viewer.tenant;
  if (kind === 'store') return [`store:${id}`];
  if (kind !== 'merchant') return [];
  const sites = await db.selectFrom('sites').select('id').where('merchant_id', '=', Number(id)).execute();
  return sites.map((s) => `site:${s.id}`);
}

/** The owner key if the viewer may see it, else not found. */
export async function ownerFor(db: Executor, viewer: Viewer, key: string): Promise<string> {
  const owners = await ownersOf(db, viewer);
  if (!/^(site:\d{1,10}|store:[\w-]{1,64})$/.test(key) || (owners !== 'all' && !owners.includes(key))) {
    throw notFound('tenant');
  }
  return key;
}

/** A site's or store's name for its owner key (`site:1`, `store:str_…`): one primary-key probe */
const ownerName = (column: string) => sql<string | null>`CASE
  WHEN ${sql.ref(column)} LIKE 'site:%' THEN (SELECT s.name FROM sites s WHERE s.id = substr(${sql.ref(column)}, 6)::int)
  WHEN ${sql.ref(column)} LIKE 'store:%' THEN (SELECT st.name FROM stores st WHERE st.id = substr(${sql.ref(column)}, 7))
END`;

/** The names of owner keys the viewer was shown (a balance page's handful), by key */
export async function ownerNames(db: Executor, keys: readonly string[]): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map();
  const { rows } = await sql<{ key: string; name: string | null }>`
    SELECT k.key, ${ownerName('k.key')} AS name FROM unnest(${keys}::text[]) AS k(key)`.execute(db);
  return new Map(rows.flatMap((r) => (r.name ? [[r.key, r.name] as const] : [])));
}

const scope = (owners: string[] | 'all', column: string) =>
  owners === 'all' ? sql<boolean>`true` : sql<boolean>`${sql.ref(column)} = ANY(${owners}::text[])`;

export const PAYOUT_STATUSES = ['held', 'pending', 'in_transit', 'paid', 'failed', 'returned'];

export interface PayoutListRow {
  id: string;
  owner: string;
  owner_name: string | null;
  /** Where it goes: the bank account as the payout recorded it, masked */
  iban_masked: string;
  holder_name: string;
  currency: string;
  amount: string;
  status: string;
  arrival_date: string | null;
  failure_code: string | null;
  created_at: Date;
}

export async function listPayouts(
  db: Db,
  viewer: Viewer,
  f: Record<string, string | undefined>,
): Promise<Page<PayoutListRow & { cursor_at: Date; cursor_id: string }>> {
  const owners = await ownersOf(db, viewer);
  return pageOf(
    db,
    {
      selectFrom: sql`p.id, p.owner, ${ownerName('p.owner')} AS owner_name, p.iban_masked, p.holder_name, p.currency, p.amount::text, p.status, p.arrival_date, p.failure_code, p.created_at FROM payouts p`,
      where: [
        scope(owners, 'p.owner'),
        ...whenGiven(f, 'status', (v) => sql<boolean>`p.status = ${v}`, /^[a-z_]{1,20}$/),
        ...whenGiven(f, 'tenant', (v) => sql<boolean>`p.owner = ${v}`, /^(site:\d{1,10}|store:[\w-]{1,64})$/),
      ],
      createdAt: 'p.created_at',
      id: 'p.id',
      amount: { column: 'p.amount', currency: 'p.currency' },
    },
    f,
  );
}

export async function getPayout(db: Executor, viewer: Viewer, id: string) {
  const owners = await ownersOf(db, viewer);
  const row = await db.selectFrom('payouts').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || (owners !== 'all' && !owners.includes(row.owner))) throw notFound('payout');
  return row;
}

export interface BalanceTransactionListRow {
  id: string;
  type: string;
  source_type: string;
  source_id: string;
  currency: string;
  gross: string;
  fee: string;
  net: string;
  created_at: Date;
  available_at: Date;
}

/** A payout's balance transactions (what it pays), newest first by id: the payout's index, in its order. */
export function payoutItems(db: Db, payoutId: string, cursor: string | undefined) {
  return pageOf<BalanceTransactionListRow & { cursor_at: Date; cursor_id: string }>(
    db,
    {
      selectFrom: sql`b.id, b.type, b.source_type, b.source_id, b.currency, b.gross::text, b.fee::text, b.net::text, b.created_at, b.available_at FROM balance_transactions b`,
      where: [sql<boolean>`b.payout_id = ${payoutId}`],
      createdAt: 'b.created_at',
      id: 'b.id',
      sequence: 'b.id',
    },
    cursor,
  );
}
