// A staged posting written as the rows ledger_post would write, without the function (docs/architecture.md,
// Ledger: Postings inside a one-statement write). Most postings of the one-statement write paths need
// neither a fold of waiting credits nor a refusal: a capture credits a site's balance from the network's
// unbounded receivable, a card authorization holds on one card account. For those, PL/pgSQL's reads of
// every account cost Postgres about as much as the rows themselves. When the debited account does need
// the function (its credits must be folded, its funds are short, or it is not what the posting took it
// for), the same statement leaves the rows unwritten and ledger_post_strict posts or refuses as always.
import type { StatementBatch, StatementPart } from '../db/statement-batch.ts';
import type { BalanceChange, PostOperation } from './ledger-types.ts';

/** What never changes of a ledger account: its asset and whether it is bounded */
export interface AccountFacts {
  asset: string;
  isBounded: boolean;
}

/** How a staged posting is written as rows */
interface RowsPlan {
  asset: string;
  /** The bounded accounts only credited: each takes a waiting credit */
  bounded: Set<string>;
  /** The one bounded account changed by more than a credit, updated in the statement */
  debited: string | undefined;
}

/**
 * Whether a staged posting can be written as rows: a transfer or a new hold (not the posting of one) of
 * one asset, whose accounts' facts are known (`facts`: accounts the ledger opened or found, committed;
 * an account never changes asset or bound and is never deleted), but for at most one bounded account
 * changed by more than a credit (a debit, a hold on it). A credit to a bounded account cannot break its
 * bound, so it waits in ledger_account_credits; an unbounded account takes a delta; neither needs a lock.
 * The one other account, `debited`, is checked by the statement itself (UPDATE_COVERED), so it may be one
 * whose facts are not known (a card's account opened by another process). Undefined: the function writes.
 */
export function planRows(op: PostOperation, facts: ReadonlyMap<string, AccountFacts>): RowsPlan | undefined {
  if (op.holdId) return undefined;
  let asset: string | undefined;
  let debited: string | undefined;
  const bounded = new Set<string>();
  for (const [accountId, change] of op.changes) {
    const known = facts.get(accountId);
    const isCredit = change.posted >= 0n && change.pendingDebits === 0n && change.pendingCredits >= 0n;
    if (known) {
      asset ??= known.asset;
      if (known.asset !== asset) return undefined;
      if (!known.isBounded) continue;
      if (isCredit) {
        bounded.add(accountId);
        continue;
      }
    } else if (isCredit) {
      // Where a credit goes (a waiting credit, a delta) depends on the account's bound, which is not known.
      return undefined;
    }
    if (debited !== undefined) return undefined;
    debited = accountId;
  }
  return asset === undefined ? undefined : { asset, bounded, debited };
}

// The debited account's row changed where it alone covers the change: the check ledger_post makes before
// it folds waiting credits. The update takes the row's lock, and checks the row again after waiting for
// another holder of it.
const UPDATE_COVERED = `
  UPDATE ledger_accounts a SET posted = a.posted + $2, pending_debits = a.pending_debits + $3,
    pending_credits = a.pending_credits + $4
  WHERE a.id = $1 AND a.asset = $5 AND a.is_bounded AND a.posted + $2 >= 0
    AND a.posted + $2 - a.pending_debits - $3 >= 0 AND a.pending_credits + $4 >= 0
  RETURNING a.id`;

/**
 * The posting's parts: the debited account's update (if any), then the transaction, its entries, a
 * waiting credit per bounded account credited and a delta per unbounded account — each written only where
 * the update was made — and `strict` (ledger_post_strict) where it was not. Parts of a batch do not read
 * each other's writes; these read the update's answer (its RETURNING rows), which is not a table. The
 * operation id is new (a staged posting belongs to a new object), so a reused one is refused by the
 * transaction's unique operation id, and then nothing of the statement is written.
 */
export function stageRows(
  batch: StatementBatch,
  posting: { id: string; op: PostOperation; plan: RowsPlan; now: Date; strict: StatementPart },
): void {
  const { id, op, plan, now, strict } = posting;
  // Without a debited account every row is written; with one, only where its update was made.
  let covered: string | undefined;
  if (plan.debited) {
    const change = op.changes.get(plan.debited) as BalanceChange;
    const update = batch.add({
      sql: UPDATE_COVERED,
      parameters: [
        plan.debited,
        change.posted.toString(),
        change.pendingDebits.toString(),
        change.pendingCredits.toString(),
        plan.asset,
      ],
    });
    covered = `EXISTS (SELECT 1 FROM p${update})`;
  }
  const when = covered ? ` WHERE ${covered}` : '';
  const transaction = batch.add({
    sql: `INSERT INTO ledger_transactions (id, operation_id, request_hash, kind, status, asset, expires_at, metadata, created_at)
      SELECT $1, $2, $3, $4, $5, $6, $7::timestamptz, $8::jsonb, $9::timestamptz${when}`,
    parameters: [
      id,
      op.operationId,
      op.requestHash,
      op.kind,
      op.status,
      plan.asset,
      op.expiresAt ?? null,
      JSON.stringify(op.metadata ?? {}),
      now,
    ],
  });
  const entries = batch.add({
    sql: `INSERT INTO ledger_entries (transaction_id, account_id, asset, amount)
      SELECT $1, l.account_id, $2, l.amount FROM unnest($3::text[], $4::numeric[]) AS l (account_id, amount)${when}`,
    parameters: [id, plan.asset, op.legs.map((l) => l.accountId), op.legs.map((l) => l.amount.toString())],
  });
  const others = [...op.changes].filter(([accountId]) => accountId !== plan.debited);
  const credited = others.filter(([accountId]) => plan.bounded.has(accountId));
  const unbounded = others.filter(([accountId]) => !plan.bounded.has(accountId));
  const column = (rows: [string, BalanceChange][], pick: (c: BalanceChange) => bigint) =>
    rows.map(([, change]) => pick(change).toString());
  // One bounded account credited (a capture's site, a transfer's payee) is one row of scalar parameters:
  // no arrays for Postgres to convert and unnest (about 6 % of the statement's instructions).
  if (credited.length === 1) {
    const [[accountId, change]] = credited as [[string, BalanceChange]];
    batch.add({
      sql: `INSERT INTO ledger_account_credits (account_id, posted, pending_credits)
        SELECT $1, $2::numeric, $3::numeric${when}`,
      parameters: [accountId, change.posted.toString(), change.pendingCredits.toString()],
    });
  } else if (credited.length > 0) {
    batch.add({
      sql: `INSERT INTO ledger_account_credits (account_id, posted, pending_credits)
        SELECT * FROM unnest($1::text[], $2::numeric[], $3::numeric[])${when}`,
      parameters: [
        credited.map(([accountId]) => accountId),
        column(credited, (c) => c.posted),
        column(credited, (c) => c.pendingCredits),
      ],
    });
  }
  if (unbounded.length > 0) {
    batch.add({
      sql: `INSERT INTO ledger_account_deltas (account_id, posted, pending_debits, pending_credits)
        SELECT * FROM unnest($1::text[], $2::numeric[], $3::numeric[], $4::numeric[])${when}`,
      parameters: [
        unbounded.map(([accountId]) => accountId),
        column(unbounded, (c) => c.posted),
        column(unbounded, (c) => c.pendingDebits),
        column(unbounded, (c) => c.pendingCredits),
      ],
    });
  }
  if (!covered) return;
  // The fallback takes what the rows above were given as their parameters (ledger_post's arguments 1–5
  // and 7–9 are the transaction's, 14–15 the entries' legs; Ledger.parameters has the order): Postgres
  // converts every parameter of the statement on every execution, the fallback's too, though it rarely runs.
  const from = (part: number, position: number) => batch.shared(part, position);
  const [, , , , , holdId, , , , accountIds, posted, pendingDebits, pendingCredits] = strict.parameters;
  batch.add({
    ...strict,
    sql: `${strict.sql} WHERE NOT ${covered}`,
    parameters: [
      ...[1, 2, 3, 4, 5].map((position) => from(transaction, position)),
      holdId,
      ...[7, 8, 9].map((position) => from(transaction, position)),
      accountIds,
      posted,
      pendingDebits,
      pendingCredits,
      from(entries, 3),
      from(entries, 4),
    ],
  });
}
