// `tessera reconcile` (docs/payouts.md, Reconciliation): proves, as of the end of a UTC day, that the
// books agree with themselves and with the bank, and names whatever does not:
//  1. every tenant's ledger balance equals the sum of its balance transactions, per currency;
//  2. every itemized payout made that day pays balance transactions that sum to its amount;
//  3. every bank file written that day totals its payouts, and holds as many;
//  4. every bank file read that day was applied, and every line of it matched a payout;
//  5. the platform's payouts-in-transit account holds exactly the payouts still on their way;
//  6. the platform's fee revenue equals the fees of the balance transactions.
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import { SITE_BALANCE_PURPOSES } from './balance-accounts.ts';

export interface Finding {
  check: 'balances' | 'payout_items' | 'bank_files' | 'bank_statements' | 'payouts_in_transit' | 'revenue';
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

export async function reconcile(db: Executor, date: string): Promise<Reconciliation> {
  const findings: Finding[] = [];
  const checked = {
    balances: 0,
    payout_items: 0,
    bank_files: 0,
    bank_statements: 0,
    payouts_in_transit: 0,
    revenue: 0,
  };

  const balances = await sql<{ owner: string; currency: string; ledger: string; movements: string }>`
    WITH ledger AS (
      SELECT CASE a.owner_type WHEN 'payments_site' THEN 'site:' ELSE 'store:' END || a.owner_id AS owner,
        a.asset AS currency, sum(e.amount) AS total
      FROM ledger_accounts a
      JOIN ledger_entries e ON e.account_id = a.id
      JOIN ledger_transactions t ON t.id = e.transaction_id
      WHERE ((a.owner_type = 'payments_site' AND a.purpose = ANY(${SITE_BALANCE_PURPOSES}::text[]))
          OR (a.owner_type = 'crypto_store' AND a.purpose = 'settlement'))
        AND t.kind IN ('transfer', 'hold_post') AND t.created_at < ${date}::date + 1
      GROUP BY 1, 2
    ), movements AS (
      SELECT owner, currency, sum(net) AS total FROM balance_transactions
      WHERE created_at < ${date}::date + 1 GROUP BY 1, 2
    )
    SELECT coalesce(l.owner, m.owner) AS owner, coalesce(l.currency, m.currency) AS currency,
      coalesce(l.total, 0)::text AS ledger, coalesce(m.total, 0)::text AS movements
    FROM ledger l FULL JOIN movements m ON m.owner = l.owner AND m.currency = l.currency`.execute(db);
  for (const row of balances.rows) {
    checked.balances++;
    if (row.ledger !== row.movements) {
      findings.push({
        check: 'balances',
        subject: `${row.owner} ${row.currency}`,
        expected: `ledger ${row.ledger}`,
        actual: `balance transactions ${row.movements}`,
      });
    }
  }

  const items = await sql<{ id: string; amount: string; items: string }>`
    SELECT p.id, p.amount::text, coalesce(sum(b.net), 0)::text AS items FROM payouts p
    LEFT JOIN balance_transactions b ON b.payout_id = p.id AND NOT (b.type = 'payout' AND b.source_id = p.id)
    WHERE p.itemized AND p.created_at >= ${date}::date AND p.created_at < ${date}::date + 1
    GROUP BY p.id, p.amount`.execute(db);
  for (const row of items.rows) {
    checked.payout_items++;
    if (BigInt(row.amount) !== BigInt(row.items)) {
      findings.push({ check: 'payout_items', subject: row.id, expected: row.amount, actual: row.items });
    }
  }

  const files = await sql<{
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
  for (const row of files.rows) {
    checked.bank_files++;
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

  const statements = await db
    .selectFrom('bank_inbox_files')
    .select(['file_name', 'status', 'detail', 'unmatched'])
    .where(sql<boolean>`received_at >= ${date}::date AND received_at < ${date}::date + 1`)
    .execute();
  for (const file of statements) {
    checked.bank_statements++;
    if (file.status === 'rejected') {
      findings.push({
        check: 'bank_statements',
        subject: file.file_name,
        expected: 'applied',
        actual: `rejected: ${file.detail}`,
      });
    }
    for (const line of file.unmatched) {
      findings.push({
        check: 'bank_statements',
        subject: file.file_name,
        expected: 'a line that matches a payout',
        actual: JSON.stringify(line),
      });
    }
  }

  const inTransit = await sql<{ currency: string; account: string; open: string }>`
    WITH account AS (
      SELECT a.asset AS currency, sum(e.amount) AS total FROM ledger_accounts a
      JOIN ledger_entries e ON e.account_id = a.id
      JOIN ledger_transactions t ON t.id = e.transaction_id
      WHERE a.owner_type = 'platform' AND a.owner_id = 'payouts' AND a.purpose = 'in_transit'
        AND t.created_at < ${date}::date + 1
      GROUP BY 1
    ), open AS (
      SELECT currency, sum(amount) AS total FROM payouts
      WHERE created_at < ${date}::date + 1 AND (status IN ('pending', 'in_transit')
        OR (updated_at >= ${date}::date + 1))
      GROUP BY 1
    )
    SELECT coalesce(a.currency, o.currency) AS currency, coalesce(a.total, 0)::text AS account,
      coalesce(o.total, 0)::text AS open
    FROM account a FULL JOIN open o ON o.currency = a.currency`.execute(db);
  for (const row of inTransit.rows) {
    checked.payouts_in_transit++;
    if (row.account !== row.open) {
      findings.push({
        check: 'payouts_in_transit',
        subject: row.currency,
        expected: `open payouts ${row.open}`,
        actual: `in-transit account ${row.account}`,
      });
    }
  }

  const revenue = await sql<{ currency: string; account: string; fees: string }>`
    WITH account AS (
      SELECT a.asset AS currency, sum(e.amount) AS total FROM ledger_accounts a
      JOIN ledger_entries e ON e.account_id = a.id
      JOIN ledger_transactions t ON t.id = e.transaction_id
      WHERE a.owner_type = 'platform' AND a.owner_id = 'revenue' AND t.created_at < ${date}::date + 1
      GROUP BY 1
    ), fees AS (
      SELECT currency, sum(fee) AS total FROM balance_transactions WHERE created_at < ${date}::date + 1 GROUP BY 1
    )
    SELECT coalesce(a.currency, f.currency) AS currency, coalesce(a.total, 0)::text AS account,
      coalesce(f.total, 0)::text AS fees
    FROM account a FULL JOIN fees f ON f.currency = a.currency`.execute(db);
  for (const row of revenue.rows) {
    checked.revenue++;
    if (row.account !== row.fees) {
      findings.push({
        check: 'revenue',
        subject: row.currency,
        expected: `fees ${row.fees}`,
        actual: `revenue account ${row.account}`,
      });
    }
  }

  return { date, clean: findings.length === 0, checked, findings };
}
