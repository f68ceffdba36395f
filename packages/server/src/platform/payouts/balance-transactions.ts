// Balance transactions (docs/payouts.md, Balances): every movement of a tenant's balance, immutable,
// written in the same database transaction as its ledger posting. Per owner and currency their nets sum
// to the tenant's ledger balance (`tessera reconcile` proves it); when each became available says what
// of that balance is available, pending or reserved.
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import { ownedBy } from '../db/owner-hash.ts';
import type { StatementBatch } from '../db/statement-batch.ts';
import { rowInsert } from '../db/statement-batch.ts';
import { newId } from '../ids.ts';
import type { Ledger } from '../ledger/ledger.ts';
import { balanceAccounts, balanceAccountsOf } from './balance-accounts.ts';
import { type Owner, ownerKey, type PayoutSchedule, shareOf } from './terms.ts';

export const BALANCE_TRANSACTION_TYPES = [
  'capture',
  'refund',
  'fee',
  'payout',
  'payout_return',
  'reserve_hold',
  'reserve_release',
  'adjustment',
  // the card network took a payment back (gross) with the dispute fee (fee); a won dispute gives it back
  'chargeback',
  'representment',
] as const;
export type BalanceTransactionType = (typeof BALANCE_TRANSACTION_TYPES)[number];

export interface BalanceTransactionRow {
  id: string;
  owner: string;
  currency: string;
  type: BalanceTransactionType;
  source_type: string;
  source_id: string;
  gross: string;
  fee: string;
  net: string;
  created_at: Date;
  available_at: Date;
  payout_id: string | null;
}

export interface Movement {
  owner: Owner;
  currency: string;
  type: BalanceTransactionType;
  source: { type: string; id: string };
  gross: bigint;
  fee?: bigint;
  at: Date;
  /** Default: at once */
  availableAt?: Date;
}

const DAY_MS = 86_400_000;
export const addDays = (at: Date, days: number) => new Date(at.getTime() + days * DAY_MS);

export function balanceTransaction(m: Movement): BalanceTransactionRow {
  const fee = m.fee ?? 0n;
  return {
    id: newId('balanceTransaction', m.at.getTime()),
    owner: ownerKey(m.owner),
    currency: m.currency,
    type: m.type,
    source_type: m.source.type,
    source_id: m.source.id,
    gross: m.gross.toString(),
    fee: fee.toString(),
    net: (m.gross - fee).toString(),
    created_at: m.at,
    available_at: m.availableAt ?? m.at,
    payout_id: null,
  };
}

/**
 * A capture's balance transactions: the capture, available after the tenant's delay, and, under a
 * rolling reserve, the share held back then and released after the reserve's days.
 */
export function captureTransactions(
  m: Omit<Movement, 'type' | 'availableAt'>,
  schedule: PayoutSchedule,
): BalanceTransactionRow[] {
  const availableAt = addDays(m.at, schedule.delayDays);
  const capture = balanceTransaction({ ...m, type: 'capture', availableAt });
  const held = shareOf(BigInt(capture.net), schedule.reserveBps);
  if (held <= 0n) return [capture];
  const reserve = { owner: m.owner, currency: m.currency, source: m.source, at: m.at };
  return [
    capture,
    balanceTransaction({ ...reserve, type: 'reserve_hold', gross: -held, availableAt }),
    balanceTransaction({
      ...reserve,
      type: 'reserve_release',
      gross: held,
      availableAt: addDays(m.at, Math.max(schedule.reserveDays, schedule.delayDays)),
    }),
  ];
}

const COLUMNS = [
  'id',
  'owner',
  'currency',
  'type',
  'source_type',
  'source_id',
  'gross',
  'fee',
  'net',
  'created_at',
  'available_at',
  'payout_id',
] as const;
const insertOne = rowInsert<BalanceTransactionRow, (typeof COLUMNS)[number]>('balance_transactions', COLUMNS);

/** Adds the rows to a batch of their business step's writes (platform/db/statement-batch.ts). */
export function stageBalanceTransactions(batch: StatementBatch, rows: BalanceTransactionRow[]): void {
  for (const row of rows) batch.add(insertOne(row));
}

export async function insertBalanceTransactions(db: Executor, rows: BalanceTransactionRow[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('balance_transactions').values(rows).execute();
}

export interface Balance {
  currency: string;
  available: bigint;
  pending: bigint;
  reserved: bigint;
}

/**
 * A tenant's balance in each currency it has money in: the ledger says the total, and the balance
 * transactions not yet available say how much of it is pending or reserved (an index range over the
 * last delay's rows, however long the history). Available is the rest, and may be below zero when
 * refunds took more than was available: the next payouts recover it.
 */
export async function balancesOf(db: Executor, ledger: Ledger, owner: Owner, now: Date): Promise<Balance[]> {
  // The currencies it has money in: those of its balance accounts with an entry (the ledger's unique key on
  // owner, asset and purpose finds them; balance transactions have no index by currency but the unpaid one).
  const { ownerType, ownerId, purposes } = balanceAccountsOf(owner);
  const currencies = await sql<{ currency: string }>`
    SELECT DISTINCT a.asset AS currency FROM ledger_accounts a
    WHERE a.owner_type = ${ownerType} AND a.owner_id = ${ownerId} AND a.purpose = ANY(${purposes}::text[])
      AND (SELECT 1 FROM ledger_entries e WHERE ${ownedBy('e.account_id', sql.ref('a.id'))} LIMIT 1) IS NOT NULL
    ORDER BY 1`.execute(db);
  const balances: Balance[] = [];
  for (const { currency } of currencies.rows)
    balances.push(await balanceOf(db, ledger, owner, currency, now));
  return balances;
}

export async function balanceOf(
  db: Executor,
  ledger: Ledger,
  owner: Owner,
  currency: string,
  now: Date,
): Promise<Balance> {
  const accounts = await balanceAccounts(ledger, db, owner, currency);
  // what is not yet available is never paid: `payout_id IS NULL` lets the unpaid index serve it (0044)
  const { rows } = await sql<{ total: string | null; pending: string | null; reserved: string | null }>`
    SELECT
      (SELECT sum(posted) FROM ledger_balances WHERE id = ANY(${accounts}::text[]))::text AS total,
      sum(net) FILTER (WHERE type <> 'reserve_release')::text AS pending,
      sum(net) FILTER (WHERE type = 'reserve_release')::text AS reserved
    FROM balance_transactions
    WHERE owner = ${ownerKey(owner)} AND currency = ${currency} AND payout_id IS NULL
      AND available_at > ${now}`.execute(db);
  const row = rows[0];
  const total = BigInt(row?.total ?? 0);
  const pending = BigInt(row?.pending ?? 0);
  const reserved = BigInt(row?.reserved ?? 0);
  return { currency, available: total - pending - reserved, pending, reserved };
}
