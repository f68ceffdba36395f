// An account's monthly statement (docs/payouts.md, Issuing statements): every posted movement of the
// account's ledger balance in a UTC month, oldest first, with its running balance between the opening and
// the closing balance: card payments as they cleared, credits, topups (net of a crypto topup's fee, which
// the topup shows). CSV, RFC 4180, stable columns. Holds not yet cleared are not on it: they are not
// movements of the balance yet.
import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.ts';
import { ownedBy } from '../../platform/db/owner-hash.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';
import { reportMonth, toCsv } from '../../platform/payouts/reports.ts';

const KINDS: [prefix: string, description: string][] = [
  ['issuing-clear:', 'card payment'],
  ['issuing-auth:', 'card payment'],
  ['issuing-credit:', 'card refund'],
  ['issuing-topup:', 'topup'],
];

export async function accountStatement(
  db: Executor,
  account: { accountId: string; ledgerAccountId: string; currency: string },
  month: string,
): Promise<string> {
  if (!reportMonth.safeParse(month).success) {
    throw new DomainError('validation_failed', 'month must be YYYY-MM, from 1970-01 on', { field: 'month' });
  }
  const start = `${month}-01`;
  const money = (minor: bigint) => formatAmountIn(minor, account.currency);
  const { rows: opening } = await sql<{ total: string | null }>`
    SELECT sum(e.amount)::text AS total FROM ledger_entries e
    JOIN ledger_transactions t ON t.id = e.transaction_id
    WHERE ${ownedBy('e.account_id', account.ledgerAccountId)} AND t.status = 'posted'
      AND t.created_at < ${start}::date`.execute(db);
  const { rows } = await sql<{
    created_at: Date;
    operation_id: string;
    amount: string;
    merchant: string | null;
  }>`
    SELECT t.created_at, t.operation_id, e.amount::text, it.merchant
    FROM ledger_entries e
    JOIN ledger_transactions t ON t.id = e.transaction_id
    LEFT JOIN issuing_transactions it
      ON it.id::text = substring(t.operation_id FROM '^issuing-(?:clear|credit|auth):(.*)$')
    WHERE ${ownedBy('e.account_id', account.ledgerAccountId)} AND t.status = 'posted'
      AND t.created_at >= ${start}::date AND t.created_at < (${start}::date + interval '1 month')
    ORDER BY t.created_at, t.id`.execute(db);
  let balance = BigInt(opening[0]?.total ?? 0);
  const lines: string[][] = [['', '', 'opening balance', '', '', money(balance)]];
  for (const row of rows) {
    const amount = BigInt(row.amount);
    balance += amount;
    const [prefix, description] = KINDS.find(([p]) => row.operation_id.startsWith(p)) ?? ['', 'adjustment'];
    lines.push([
      row.created_at.toISOString(),
      prefix ? row.operation_id.slice(prefix.length) : row.operation_id,
      description,
      row.merchant ?? '',
      money(amount),
      money(balance),
    ]);
  }
  lines.push(['', '', 'closing balance', '', '', money(balance)]);
  return toCsv(['date', 'reference', 'description', 'merchant', 'amount', 'balance'], lines);
}
