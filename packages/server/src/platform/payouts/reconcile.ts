// `tessera reconcile` (docs/payouts.md, Reconciliation): proves, as of the end of a UTC day, that the
// books agree with themselves and with the bank, and names whatever does not:
//  1. every tenant's ledger balance equals the sum of its balance transactions, per currency;
//  2. every itemized payout made that day pays balance transactions that sum to its amount;
//  3. every bank file written that day totals its payouts, holds as many, and is recorded written;
//  4. every bank file read that day was applied, and every line of it matched a payout;
//  5. the platform's payouts-in-transit account holds exactly the payouts still on their way;
//  6. the platform's fee revenue equals the fees of the balance transactions;
//  7. no payout is still in transit more than two days after its arrival date (the bank, or a rail the
//     operator switched away from, never said what became of it).
// Checks 1 and 6 sum all history. Each day they prove is remembered (reconcile_marks: the cumulative sums
// both sides came to at its end), so a run reads only the days since the newest mark before its day, and a
// day proved once is answered from its mark; `full` proves every day again from the first. Every run's
// result is kept (reconcile_runs) for the console's Reports page.
import { type RawBuilder, sql } from 'kysely';
import type { Db, Executor } from '../db/database.ts';
import { ownedBy } from '../db/owner-hash.ts';
import { SITE_BALANCE_PURPOSES } from './balance-accounts.ts';
import { nextDay } from './balance-days.ts';

export interface Finding {
  check:
    | 'balances'
    | 'payout_items'
    | 'bank_files'
    | 'bank_statements'
    | 'payouts_in_transit'
    | 'revenue'
    | 'late_payouts';
  subject: string;
  expected: string;
  actual: string;
}

export interface Reconciliation {
  date: string;
  clean: boolean;
  checked: Record<Finding['check'], number>;
  findings: Finding[];
}

interface Check {
  checked: number;
  findings: Finding[];
}

export interface ReconcileOptions {
  /** Now, on the platform's clock: a day is remembered once it has been over an hour */
  now: Date;
  /** Prove every day again from the first, not from the newest mark */
  full?: boolean;
}

export async function reconcile(db: Db, date: string, options: ReconcileOptions): Promise<Reconciliation> {
  const started = performance.now();
  const end = sql`${date}::date + 1`;
  const sums = await provedSums(db, date, options);
  const checks: Record<Finding['check'], Check> = {
    balances: compareSums(sums.balances, (l, o) => ({
      check: 'balances',
      expected: `ledger ${l}`,
      actual: `balance transactions ${o}`,
    })),
    payout_items: await payoutItems(db, date),
    bank_files: await bankFiles(db, date),
    bank_statements: await bankStatements(db, date),
    // Open at the day's end: not yet paid, failed or returned then (exact for today).
    payouts_in_transit: await compare(
      db,
      ledgerTotals(
        sql`a.asset`,
        sql`a.owner_type = 'platform' AND a.owner_id = 'payouts' AND a.purpose = 'in_transit'`,
        end,
      ),
      sql`SELECT currency AS key, sum(amount) AS total FROM payouts
          WHERE created_at < ${end} AND (status IN ('held', 'pending', 'in_transit') OR updated_at >= ${end}) GROUP BY 1`,
      (l, o) => ({
        check: 'payouts_in_transit',
        expected: `open payouts ${o}`,
        actual: `in-transit account ${l}`,
      }),
    ),
    revenue: compareSums(sums.revenue, (l, o) => ({
      check: 'revenue',
      expected: `fees ${o}`,
      actual: `revenue account ${l}`,
    })),
    late_payouts: await latePayouts(db, date),
  };
  const findings = Object.values(checks).flatMap((c) => c.findings);
  const checked = Object.fromEntries(Object.entries(checks).map(([name, c]) => [name, c.checked]));
  const result = {
    date,
    clean: findings.length === 0,
    checked: checked as Reconciliation['checked'],
    findings,
  };
  await recordRun(db, result, options, Math.round(performance.now() - started));
  return result;
}

/** Per key, what the ledger and the balance transactions come to at a day's end: [ledger, rows]. */
interface Sums {
  balances: Record<string, [string, string]>;
  revenue: Record<string, [string, string]>;
}

const DAY_MS = 86_400_000;
/** A day's sums are remembered once it has been over this long (its late business steps have committed). */
const MARK_AFTER_MS = 3_600_000;

/**
 * Checks 1 and 6 at the end of `date`: from its own mark when it has one, else the newest mark before it
 * (nothing, for `full`) plus each day since, read by the day's time range (the balance transactions'
 * created index, the ledger transactions' BRIN). Each day over an hour ago with movements is remembered.
 */
async function provedSums(db: Db, date: string, options: ReconcileOptions): Promise<Sums> {
  if (options.full) await db.deleteFrom('reconcile_marks').execute();
  else {
    const own = await db
      .selectFrom('reconcile_marks')
      .select('sums')
      .where('day', '=', date)
      .executeTakeFirst();
    if (own) return own.sums as Sums;
  }
  const base = await db
    .selectFrom('reconcile_marks')
    .select([sql<string>`day::text`.as('day'), 'sums'])
    .where('day', '<', date)
    .orderBy('day', 'desc')
    .limit(1)
    .executeTakeFirst();
  const sums: Sums = base ? structuredClone(base.sums as Sums) : { balances: {}, revenue: {} };
  const from = base ? new Date(Date.parse(nextDay(base.day))) : new Date(0);
  const to = new Date(Date.parse(date) + DAY_MS);
  const { rows } = await sql<{
    day: string;
    side: 0 | 1;
    book: 'balances' | 'revenue';
    key: string;
    total: string;
  }>`
    SELECT to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, 0 AS side,
      CASE WHEN a.owner_type = 'platform' THEN 'revenue' ELSE 'balances' END AS book,
      CASE a.owner_type WHEN 'payments_site' THEN 'site:' || a.owner_id || ' ' || a.asset
        WHEN 'crypto_store' THEN 'store:' || a.owner_id || ' ' || a.asset ELSE a.asset END AS key,
      sum(e.amount)::text AS total
    FROM ledger_transactions t
    -- each transaction's entries by its key (OFFSET 0 keeps the planner from a hash join over them all)
    CROSS JOIN LATERAL (SELECT x.amount, x.account_id FROM ledger_entries x WHERE x.transaction_id = t.id OFFSET 0) e
    JOIN ledger_accounts a ON a.id = e.account_id
    WHERE t.created_at >= ${from} AND t.created_at < ${to} AND t.status = 'posted'
      AND ((a.owner_type = 'payments_site' AND a.purpose = ANY(${SITE_BALANCE_PURPOSES}::text[]))
        OR (a.owner_type = 'crypto_store' AND a.purpose = 'settlement')
        OR (a.owner_type = 'platform' AND a.owner_id = 'revenue'))
    GROUP BY 1, 3, 4
    UNION ALL
    SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), 1, 'balances', owner || ' ' || currency,
      sum(net)::text
    FROM balance_transactions WHERE created_at >= ${from} AND created_at < ${to}
    GROUP BY 1, 4
    UNION ALL
    SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'), 1, 'revenue', currency, sum(fee)::text
    FROM balance_transactions WHERE created_at >= ${from} AND created_at < ${to} AND fee <> 0
    GROUP BY 1, 4
    ORDER BY 1`.execute(db);
  const closedBefore = options.now.getTime() - MARK_AFTER_MS;
  const marks: { day: string; sums: string; proved_at: Date }[] = [];
  for (let i = 0; i < rows.length; ) {
    const day = rows[i]?.day as string;
    for (; i < rows.length && rows[i]?.day === day; i++) {
      const row = rows[i] as (typeof rows)[number];
      const pair = sums[row.book][row.key] ?? ['0', '0'];
      pair[row.side] = (BigInt(pair[row.side]) + BigInt(row.total)).toString();
      sums[row.book][row.key] = pair;
    }
    if (Date.parse(day) + DAY_MS <= closedBefore) {
      marks.push({ day, sums: JSON.stringify(sums), proved_at: options.now });
    }
  }
  for (let i = 0; i < marks.length; i += 100) {
    await db
      .insertInto('reconcile_marks')
      .values(marks.slice(i, i + 100))
      .onConflict((oc) =>
        oc
          .column('day')
          .doUpdateSet((eb) => ({ sums: eb.ref('excluded.sums'), proved_at: eb.ref('excluded.proved_at') })),
      )
      .execute();
  }
  return sums;
}

function compareSums(
  sums: Record<string, [string, string]>,
  say: (ledger: string, other: string) => Omit<Finding, 'subject'>,
): Check {
  const keys = Object.keys(sums).sort();
  return {
    checked: keys.length,
    findings: keys
      .filter((key) => sums[key]?.[0] !== sums[key]?.[1])
      .map((key) => ({ subject: key, ...say(sums[key]?.[0] ?? '0', sums[key]?.[1] ?? '0') })),
  };
}

/** Runs kept for the console: the newest 400. */
const RUNS_KEPT = 400;

async function recordRun(
  db: Db,
  result: Reconciliation,
  options: ReconcileOptions,
  ms: number,
): Promise<void> {
  const { id } = await db
    .insertInto('reconcile_runs')
    .values({
      date: result.date,
      full_run: options.full === true,
      clean: result.clean,
      checked: JSON.stringify(result.checked),
      findings: JSON.stringify(result.findings),
      duration_ms: ms,
      ran_at: options.now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .deleteFrom('reconcile_runs')
    .where('id', '<=', String(BigInt(id) - BigInt(RUNS_KEPT)))
    .execute();
}

export interface ReconcileRun extends Reconciliation {
  full: boolean;
  ranAt: Date;
  durationMs: number;
}

/** The newest run, for the console's Reports page. */
export async function lastReconcileRun(db: Executor): Promise<ReconcileRun | undefined> {
  const row = await db
    .selectFrom('reconcile_runs')
    .select([
      sql<string>`date::text`.as('date'),
      'full_run',
      'clean',
      'checked',
      'findings',
      'duration_ms',
      'ran_at',
    ])
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    date: row.date,
    clean: row.clean,
    checked: row.checked as Reconciliation['checked'],
    findings: row.findings as Finding[],
    full: row.full_run,
    ranAt: row.ran_at,
    durationMs: row.duration_ms,
  };
}

/**
 * What the ledger's posted entries of the accounts matching `where` total per key, up to `end`: each
 * account's entries by its index on the account's hash (owner-hash.ts), never a scan of every entry.
 */
function ledgerTotals(key: RawBuilder<unknown>, where: RawBuilder<unknown>, end: RawBuilder<unknown>) {
  // Each entry's transaction by its key (a subquery per entry): a join would let the planner, guessing an
  // account's entries from the average of a skewed few, scan every ledger transaction instead.
  return sql`SELECT ${key} AS key, sum(x.total) AS total FROM ledger_accounts a
    CROSS JOIN LATERAL (
      SELECT sum(e.amount) AS total FROM ledger_entries e
      WHERE ${ownedBy('e.account_id', sql.ref('a.id'))}
        AND (SELECT t.status = 'posted' AND t.created_at < ${end} FROM ledger_transactions t
             WHERE t.id = e.transaction_id)
    ) x
    WHERE ${where} AND x.total IS NOT NULL
    GROUP BY 1`;
}

/** Two `key, total` queries compared key by key; a key either side lacks counts as zero there. */
async function compare(
  db: Executor,
  ledger: RawBuilder<unknown>,
  other: RawBuilder<unknown>,
  say: (ledger: string, other: string) => Omit<Finding, 'subject'>,
): Promise<Check> {
  const { rows } = await sql<{ key: string; ledger: string; other: string }>`
    WITH l AS (${ledger}), o AS (${other})
    SELECT coalesce(l.key, o.key) AS key, coalesce(l.total, 0)::text AS ledger, coalesce(o.total, 0)::text AS other
    FROM l FULL JOIN o ON o.key = l.key`.execute(db);
  return {
    checked: rows.length,
    findings: rows
      .filter((r) => r.ledger !== r.other)
      .map((r) => ({ subject: r.key, ...say(r.ledger, r.other) })),
  };
}

async function payoutItems(db: Executor, date: string): Promise<Check> {
  const { rows } = await sql<{ id: string; amount: string; items: string }>`
    SELECT p.id, p.amount::text, coalesce(sum(b.net), 0)::text AS items FROM payouts p
    LEFT JOIN balance_transactions b ON b.payout_id = p.id AND NOT (b.type = 'payout' AND b.source_id = p.id)
    WHERE p.itemized AND p.created_at >= ${date}::date AND p.created_at < ${date}::date + 1
    GROUP BY p.id, p.amount`.execute(db);
  return {
    checked: rows.length,
    findings: rows
      .filter((r) => BigInt(r.amount) !== BigInt(r.items))
      .map((r) => ({ check: 'payout_items', subject: r.id, expected: r.amount, actual: r.items })),
  };
}

async function bankFiles(db: Executor, date: string): Promise<Check> {
  const { rows } = await sql<{
    id: string;
    total: string;
    count: number;
    paid: string;
    payouts: number;
    status: string;
  }>`
    SELECT f.id, f.total::text, f.payout_count AS count, f.status, coalesce(sum(p.amount), 0)::text AS paid,
      count(p.id)::int AS payouts
    FROM bank_files f LEFT JOIN payouts p ON p.bank_file_id = f.id
    WHERE f.created_at >= ${date}::date AND f.created_at < ${date}::date + 1
    GROUP BY f.id`.execute(db);
  const findings: Finding[] = [];
  for (const row of rows) {
    if (BigInt(row.total) !== BigInt(row.paid) || row.count !== row.payouts) {
      findings.push({
        check: 'bank_files',
        subject: row.id,
        expected: `${row.count} payouts, ${row.total}`,
        actual: `${row.payouts} payouts, ${row.paid}`,
      });
    }
    if (row.status !== 'written') {
      findings.push({ check: 'bank_files', subject: row.id, expected: 'written', actual: row.status });
    }
  }
  return { checked: rows.length, findings };
}

async function bankStatements(db: Executor, date: string): Promise<Check> {
  const files = await db
    .selectFrom('bank_inbox_files')
    .select(['file_name', 'status', 'detail', 'unmatched'])
    .where(sql<boolean>`received_at >= ${date}::date AND received_at < ${date}::date + 1`)
    .orderBy('received_at')
    .orderBy('file_name')
    .execute();
  const findings: Finding[] = files.flatMap((file) => [
    ...(file.status === 'rejected'
      ? [
          {
            check: 'bank_statements' as const,
            subject: file.file_name,
            expected: 'applied',
            actual: `rejected: ${file.detail}`,
          },
        ]
      : []),
    ...file.unmatched.map((line) => ({
      check: 'bank_statements' as const,
      subject: file.file_name,
      expected: 'a line that matches a payout',
      actual: JSON.stringify(line),
    })),
  ]);
  return { checked: files.length, findings };
}

/** Payouts in transit now whose arrival date is more than two days before the reconciled day. */
async function latePayouts(db: Executor, date: string): Promise<Check> {
  const { rows } = await sql<{
    id: string;
    arrival_date: string | null;
    bank_file_id: string | null;
    late: boolean;
  }>`
    SELECT id, arrival_date, bank_file_id, arrival_date::date < ${date}::date - 2 AS late FROM payouts
    WHERE status = 'in_transit' AND created_at < ${date}::date + 1 ORDER BY id`.execute(db);
  return {
    checked: rows.length,
    findings: rows
      .filter((r) => r.late)
      .map((r) => ({
        check: 'late_payouts',
        subject: r.id,
        expected: `paid, failed or returned by ${r.arrival_date} + 2 days`,
        actual: `in transit ${r.bank_file_id ? `in bank file ${r.bank_file_id}` : 'on the bank simulator'}`,
      })),
  };
}
