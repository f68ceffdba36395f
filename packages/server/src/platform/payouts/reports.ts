// Money out's reports (docs/payouts.md, Reports): a tenant's balance transactions (keyset pages), the
// settlement report of one payout, the tenant's balance by day and the operator's revenue by day. CSV is
// RFC 4180 with stable columns: amounts as decimal strings in the currency's own exponent, times in UTC.
import { sql } from 'kysely';
import { z } from 'zod';
import type { Executor } from '../db/database.ts';
import { DomainError } from '../errors/domain-error.ts';
import { formatAmountIn } from '../money/amount.ts';
import type { BalanceTransactionRow, BalanceTransactionType } from './balance-transactions.ts';
import type { PayoutRow } from './payout-view.ts';
import { type Owner, ownerKey } from './terms.ts';

/** A report's day, YYYY-MM-DD, from 1970 (Postgres has no year 0, and nothing here is older). */
export const reportDay = z.iso
  .date()
  .refine((day) => day >= '1970-01-01', 'must be a day from 1970-01-01 on, YYYY-MM-DD');

/** A statement's month, YYYY-MM, from 1970. */
export const reportMonth = z
  .string()
  .regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'must be a month, YYYY-MM')
  .refine((month) => month >= '1970-01', 'must be a month from 1970-01 on');

export interface BalanceTransactionView {
  id: string;
  type: BalanceTransactionType;
  source: { type: string; id: string };
  currency: string;
  gross: string;
  fee: string;
  net: string;
  createdAt: string;
  availableAt: string;
  payoutId: string | null;
}

export function balanceTransactionView(row: BalanceTransactionRow): BalanceTransactionView {
  const money = (minor: string) => formatAmountIn(BigInt(minor), row.currency);
  return {
    id: row.id,
    type: row.type,
    source: { type: row.source_type, id: row.source_id },
    currency: row.currency,
    gross: money(row.gross),
    fee: money(row.fee),
    net: money(row.net),
    createdAt: row.created_at.toISOString(),
    availableAt: row.available_at.toISOString(),
    payoutId: row.payout_id,
  };
}

export interface BalanceTransactionFilter {
  type?: string | undefined;
  payoutId?: string | undefined;
  currency?: string | undefined;
}

/** Newest first; `before` is the last id of the previous page. */
export async function listBalanceTransactions(
  db: Executor,
  owner: Owner,
  filter: BalanceTransactionFilter,
  page: { limit: number; before?: string | undefined },
): Promise<BalanceTransactionRow[]> {
  let query = db.selectFrom('balance_transactions').selectAll().where('owner', '=', ownerKey(owner));
  if (filter.type) query = query.where('type', '=', filter.type);
  if (filter.payoutId) query = query.where('payout_id', '=', filter.payoutId);
  if (filter.currency) query = query.where('currency', '=', filter.currency);
  if (page.before) query = query.where('id', '<', page.before);
  const rows = await query.orderBy('id', 'desc').limit(page.limit).execute();
  return rows as BalanceTransactionRow[];
}

const SETTLEMENT_COLUMNS = [
  'balance_transaction_id',
  'created_at',
  'available_at',
  'type',
  'source_type',
  'source_id',
  'currency',
  'gross',
  'fee',
  'net',
] as const;

/**
 * Every balance transaction an itemized payout pays, oldest first: their nets sum to the payout's amount.
 * A payout of an amount chosen by hand pays no line of its own: its report is the header alone, and the
 * next itemized payout lists it (type payout, a negative net).
 */
export async function settlementReport(db: Executor, payout: PayoutRow): Promise<string> {
  const rows = payout.itemized
    ? await db
        .selectFrom('balance_transactions')
        .selectAll()
        .where('payout_id', '=', payout.id)
        .where((eb) => eb.not(eb.and([eb('type', '=', 'payout'), eb('source_id', '=', payout.id)])))
        .orderBy('id')
        .execute()
    : [];
  const lines = rows.map((row) => {
    const money = (minor: string) => formatAmountIn(BigInt(minor), row.currency);
    return [
      row.id,
      row.created_at.toISOString(),
      row.available_at.toISOString(),
      row.type,
      row.source_type,
      row.source_id,
      row.currency,
      money(row.gross),
      money(row.fee),
      money(row.net),
    ];
  });
  return toCsv(SETTLEMENT_COLUMNS, lines);
}

/**
 * The tenant's balance at the end of each UTC day of [from, to] in each currency: the day's gross, fees
 * and net movement and the closing total (every balance transaction up to that day's end).
 */
export async function balanceByDay(db: Executor, owner: Owner, from: string, to: string): Promise<string> {
  checkRange(from, to);
  // One pass over the tenant's rows: the opening balance before the first day, each day's sums, and the
  // closing balances as a running total over the days (not a sum of the whole history per day).
  const key = ownerKey(owner);
  const { rows } = await sql<{
    day: string;
    currency: string;
    gross: string;
    fee: string;
    net: string;
    closing: string;
  }>`
    WITH mine AS (
      SELECT currency, created_at, gross, fee, net FROM balance_transactions
      WHERE owner = ${key} AND created_at < ${to}::date + 1
    ), opening AS (
      SELECT currency, sum(net) FILTER (WHERE created_at < ${from}::date) AS total FROM mine GROUP BY currency
    ), daily AS (
      SELECT currency, (created_at AT TIME ZONE 'UTC')::date AS day, sum(gross) AS gross, sum(fee) AS fee,
        sum(net) AS net
      FROM mine WHERE created_at >= ${from}::date GROUP BY 1, 2
    ), days AS (
      SELECT d::date AS day FROM generate_series(${from}::date, ${to}::date, interval '1 day') d
    )
    SELECT to_char(days.day, 'YYYY-MM-DD') AS day, o.currency,
      coalesce(d.gross, 0)::text AS gross, coalesce(d.fee, 0)::text AS fee, coalesce(d.net, 0)::text AS net,
      (coalesce(o.total, 0) + sum(coalesce(d.net, 0)) OVER (PARTITION BY o.currency ORDER BY days.day))::text
        AS closing
    FROM days CROSS JOIN opening o
    LEFT JOIN daily d ON d.currency = o.currency AND d.day = days.day
    ORDER BY days.day, o.currency`.execute(db);
  return toCsv(
    ['date', 'currency', 'gross', 'fee', 'net', 'closing_balance'],
    rows.map((r) => [
      r.day,
      r.currency,
      ...[r.gross, r.fee, r.net, r.closing].map((minor) => formatAmountIn(BigInt(minor), r.currency)),
    ]),
  );
}

/** The operator's fee revenue per UTC day, tenant and currency: fees earned less fees given back. */
export async function revenueByDay(db: Executor, from: string, to: string): Promise<string> {
  checkRange(from, to);
  const { rows } = await sql<{ day: string; owner: string; currency: string; fees: string; count: string }>`
    SELECT to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, owner, currency,
      sum(fee)::text AS fees, count(*)::text AS count
    FROM balance_transactions
    WHERE created_at >= ${from}::date AND created_at < ${to}::date + 1 AND fee <> 0
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`.execute(db);
  return toCsv(
    ['date', 'tenant', 'currency', 'fees', 'transactions'],
    rows.map((r) => [r.day, r.owner, r.currency, formatAmountIn(BigInt(r.fees), r.currency), r.count]),
  );
}

/** A report's days: in order, and at most 366 of them (a year is the longest report). */
function checkRange(from: string, to: string): void {
  if (from > to) throw new DomainError('validation_failed', 'from must not be after to', { field: 'from' });
  if (Date.parse(to) - Date.parse(from) > 366 * 86_400_000) {
    throw new DomainError('validation_failed', 'a report covers at most 366 days', { field: 'to' });
  }
}

/** RFC 4180: CRLF line ends, fields quoted when they hold a comma, a quote or a line break. */
export function toCsv(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const field = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);
  return [header, ...rows].map((row) => `${row.map(field).join(',')}\r\n`).join('');
}
