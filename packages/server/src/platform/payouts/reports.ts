// Money out's reports (docs/payouts.md, Reports): a tenant's balance transactions (keyset pages), the
// settlement report of one payout, the tenant's balance by day and the operator's revenue by day. CSV is
// RFC 4180 with stable columns: amounts as decimal strings in the currency's own exponent, times in UTC.
import { sql } from 'kysely';
import { z } from 'zod';
import type { Executor } from '../db/database.ts';
import { DomainError } from '../errors/domain-error.ts';
import { idFloor } from '../ids.ts';
import { formatAmountIn } from '../money/amount.ts';
import { nextDay, summedThrough } from './balance-days.ts';
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

/** Lines read per page of a settlement report: its memory stays a page, however long the payout. */
const REPORT_PAGE = 10_000;

/**
 * Every balance transaction an itemized payout pays, oldest first (by id, the payout's index): their nets
 * sum to the payout's amount. Streamed a page at a time. A payout of an amount chosen by hand pays no line
 * of its own: its report is the header alone, and the next itemized payout lists it (type payout, a
 * negative net).
 */
export async function* settlementReport(db: Executor, payout: PayoutRow): AsyncGenerator<string> {
  yield csvLines([SETTLEMENT_COLUMNS]);
  if (!payout.itemized) return;
  let after = '';
  for (;;) {
    const rows = await db
      .selectFrom('balance_transactions')
      .selectAll()
      .where('payout_id', '=', payout.id)
      .where('id', '>', after)
      .orderBy('id')
      .limit(REPORT_PAGE)
      .execute();
    const lines = rows
      .filter((row) => !(row.type === 'payout' && row.source_id === payout.id))
      .map((row) => {
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
    if (lines.length > 0) yield csvLines(lines);
    if (rows.length < REPORT_PAGE) return;
    after = rows.at(-1)?.id ?? after;
  }
}

/**
 * The tenant's balance at the end of each UTC day of [from, to] in each currency: the day's gross, fees
 * and net movement and the closing total (every balance transaction up to that day's end). Days the
 * balance-days sweep has summed are read from balance_days (the opening balance is the closing of the
 * tenant's last summed day before `from`); the days after them from the tenant's rows.
 */
export async function balanceByDay(db: Executor, owner: Owner, from: string, to: string): Promise<string> {
  checkRange(from, to);
  const key = ownerKey(owner);
  const summed = await summedThrough(db);
  const liveFrom = summed ? nextDay(summed) : '1970-01-01';
  const { rows: openings } = await sql<{ currency: string; closing: string }>`
    SELECT DISTINCT ON (currency) currency, closing::text FROM balance_days
    WHERE owner = ${key} AND day < ${from < liveFrom ? from : liveFrom}::date
    ORDER BY currency, day DESC`.execute(db);
  const { rows: summedDays } = await sql<DayRow>`
    SELECT day::text AS day, currency, gross::text, fee::text, net::text FROM balance_days
    WHERE owner = ${key} AND day >= ${from}::date AND day <= ${to}::date
      AND day <= ${summed ?? '1969-12-31'}::date`.execute(db);
  // The live days: the tenant's rows from the first day not summed (its `(owner, id)` index from there).
  const liveStart = Date.parse(liveFrom);
  const { rows: live } = await sql<DayRow & { before: boolean }>`
    SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, currency, sum(gross)::text AS gross,
      sum(fee)::text AS fee, sum(net)::text AS net, false AS before
    FROM balance_transactions
    WHERE owner = ${key} AND id >= ${idFloor('balanceTransaction', liveStart)}
      AND created_at >= ${new Date(liveStart)} AND created_at < ${new Date(Date.parse(to) + DAY_MS)}
    GROUP BY 1, 2`.execute(db);
  const opening = new Map(openings.map((r) => [r.currency, BigInt(r.closing)]));
  const days = new Map<string, DayRow>();
  for (const row of [...summedDays, ...live]) {
    if (row.day < from) opening.set(row.currency, (opening.get(row.currency) ?? 0n) + BigInt(row.net));
    else days.set(`${row.day} ${row.currency}`, row);
    if (!opening.has(row.currency)) opening.set(row.currency, 0n);
  }
  const currencies = [...opening.keys()].sort();
  const lines: string[][] = [];
  for (let day = from; day <= to; day = nextDay(day)) {
    for (const currency of currencies) {
      const row = days.get(`${day} ${currency}`);
      const [gross, fee, net] = [row?.gross, row?.fee, row?.net].map((v) => BigInt(v ?? 0)) as [
        bigint,
        bigint,
        bigint,
      ];
      const closing = (opening.get(currency) ?? 0n) + net;
      opening.set(currency, closing);
      lines.push([
        day,
        currency,
        ...[gross, fee, net, closing].map((minor) => formatAmountIn(minor, currency)),
      ]);
    }
  }
  return toCsv(['date', 'currency', 'gross', 'fee', 'net', 'closing_balance'], lines);
}

interface DayRow {
  day: string;
  currency: string;
  gross: string;
  fee: string;
  net: string;
}

/**
 * The operator's fee revenue per UTC day, tenant and currency: fees earned less fees given back. Summed
 * days from balance_days, the days after them from the rows of those days.
 */
export async function revenueByDay(db: Executor, from: string, to: string): Promise<string> {
  checkRange(from, to);
  const summed = await summedThrough(db);
  const liveFrom = summed && summed >= from ? nextDay(summed) : from;
  const { rows } = await sql<{ day: string; owner: string; currency: string; fees: string; count: string }>`
    SELECT day::text AS day, owner, currency, fee::text AS fees, fee_count::text AS count FROM balance_days
    WHERE day >= ${from}::date AND day < ${liveFrom}::date AND day <= ${to}::date AND fee_count > 0
    UNION ALL
    SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), owner, currency, sum(fee)::text, count(*)::text
    FROM balance_transactions
    WHERE created_at >= ${new Date(Date.parse(liveFrom))} AND created_at < ${new Date(Date.parse(to) + DAY_MS)}
      AND fee <> 0
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`.execute(db);
  return toCsv(
    ['date', 'tenant', 'currency', 'fees', 'transactions'],
    rows.map((r) => [r.day, r.owner, r.currency, formatAmountIn(BigInt(r.fees), r.currency), r.count]),
  );
}

const DAY_MS = 86_400_000;

/** A report's days: in order, and at most 366 of them (a year is the longest report). */
function checkRange(from: string, to: string): void {
  if (from > to) throw new DomainError('validation_failed', 'from must not be after to', { field: 'from' });
  if (Date.parse(to) - Date.parse(from) > 366 * 86_400_000) {
    throw new DomainError('validation_failed', 'a report covers at most 366 days', { field: 'to' });
  }
}

/** RFC 4180: CRLF line ends, fields quoted when they hold a comma, a quote or a line break. */
export function toCsv(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return csvLines([header, ...rows]);
}

function csvLines(rows: readonly (readonly string[])[]): string {
  const field = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);
  return rows.map((row) => `${row.map(field).join(',')}\r\n`).join('');
}
