// What the console shows of the ledger: accounts and balances per owner and asset, and each account's
// entries with the business operation that posted them (its operation id names the object).
import { type RawBuilder, sql } from 'kysely';
import type { Viewer } from '../../../platform/console/console-users.ts';
import { pageOf, whenGiven } from '../../../platform/console/paging.ts';
import type { Executor } from '../../../platform/db/database.ts';
import { ownedBy as ownedByHash } from '../../../platform/db/owner-hash.ts';
import { notFound } from '../../../platform/errors/domain-error.ts';

type Filters = Record<string, string | undefined>;

/** A member sees the accounts of their tenant: a merchant its sites', a store its own, a partner its customers'. */
export function ownedBy(viewer: Viewer): RawBuilder<boolean> {
  if (viewer.role === 'operator') return sql<boolean>`true`;
  const id = viewer.tenant.id;
  switch (viewer.tenant.kind) {
    case 'merchant':
      return sql<boolean>`a.owner_type = 'payments_site' AND a.owner_id IN (SELECT id::text FROM sites WHERE merchant_id::text = ${id})`;
    case 'store':
      return sql<boolean>`a.owner_type = 'crypto_store' AND a.owner_id = ${id}`;
    case 'partner':
      return sql<boolean>`a.owner_type = 'issuing_account' AND a.owner_id IN (SELECT id::text FROM issuing_accounts WHERE partner_id = ${id})`;
  }
}

export interface LedgerAccountRow {
  cursor_at: Date;
  cursor_id: string;
  id: string;
  owner_type: string;
  owner_id: string;
  asset: string;
  purpose: string;
  is_bounded: boolean;
  posted: string;
  pending_debits: string;
  pending_credits: string;
  created_at: Date;
}

const ACCOUNT_COLUMNS = sql`a.id, a.owner_type, a.owner_id, a.asset, a.purpose, a.is_bounded, a.posted, a.pending_debits,
  a.pending_credits, a.created_at FROM ledger_balances a`;

export function listLedgerAccounts(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<LedgerAccountRow>(
    db,
    {
      selectFrom: ACCOUNT_COLUMNS,
      where: [
        ownedBy(viewer),
        ...whenGiven(f, 'ownerType', (v) => sql`a.owner_type = ${v}`),
        ...whenGiven(f, 'ownerId', (v) => sql`a.owner_id = ${v}`),
        ...whenGiven(f, 'asset', (v) => sql`a.asset = ${v.toUpperCase()}`, /^[A-Za-z0-9]{2,12}$/),
      ],
      createdAt: 'a.created_at',
      id: 'a.id',
    },
    f,
  );
}

export async function getLedgerAccount(db: Executor, viewer: Viewer, id: string): Promise<LedgerAccountRow> {
  const { rows } = await sql<LedgerAccountRow>`
    SELECT a.created_at AS cursor_at, a.id AS cursor_id, ${ACCOUNT_COLUMNS}
    WHERE a.id = ${id} AND ${ownedBy(viewer)}`.execute(db);
  const row = rows[0];
  if (!row) throw notFound('ledger account');
  return row;
}

export interface LedgerEntryRow {
  cursor_at: Date;
  cursor_id: string;
  transaction_id: string;
  operation_id: string;
  kind: string;
  status: string;
  amount: string;
  metadata: Record<string, unknown>;
  created_at: Date;
}

export function entriesOf(db: Executor, accountId: string, cursor: string | undefined) {
  return pageOf<LedgerEntryRow>(
    db,
    {
      selectFrom: sql`e.transaction_id, t.operation_id, t.kind, t.status, e.amount, t.metadata, t.created_at
        FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id`,
      where: [ownedByHash('e.account_id', accountId)],
      createdAt: 't.created_at',
      id: 'e.transaction_id',
      // Ledger transaction ids grow with time: the index on (the account's hash, transaction_id) serves the page.
      sequence: 'e.transaction_id',
    },
    cursor,
  );
}

/** The business object an operation id names (`payments-refund:42` → 42), for a link that opens it. */
export function objectOfOperation(operationId: string): string | undefined {
  const tail = operationId.split(':').slice(1).join(':');
  return tail.length > 0 ? tail.split(':')[0] : undefined;
}
