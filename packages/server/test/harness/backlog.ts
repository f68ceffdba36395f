// A site's backlog of unpaid balance transactions, written in SQL as a year of a manual schedule leaves
// them (docs/payouts.md, Payouts of a large backlog): `items` captures of 1.00 EUR, available ten days ago,
// and the ledger moved to match (one posting crediting the site's balance from a funding account of the
// test's own), so the ledger's invariants and `reconcile` hold.
import pg from 'pg';

export async function seedBacklog(
  databaseUrl: string,
  siteId: number,
  items: number,
  now: Date,
): Promise<{ total: bigint }> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const at = new Date(now.getTime() - 10 * 86_400_000);
    const total = BigInt(items) * 100n;
    await db.query('BEGIN');
    const site = await db.query<{ id: string }>(
      `SELECT id FROM ledger_accounts WHERE owner_type = 'payments_site' AND owner_id = $1 AND asset = 'EUR'
         AND purpose = 'balance'`,
      [String(siteId)],
    );
    const siteAccount = site.rows[0]?.id;
    if (!siteAccount) throw new Error(`site ${siteId} has no EUR balance account yet: capture first`);
    const funding = await db.query<{ id: string }>(
      `INSERT INTO ledger_accounts (id, owner_type, owner_id, asset, purpose, is_bounded, created_at)
       VALUES ('lac_backlog_' || $1, 'test', 'backlog-' || $1, 'EUR', 'funding', false, $2) RETURNING id`,
      [String(siteId), at],
    );
    await db.query(
      `INSERT INTO ledger_transactions (id, operation_id, request_hash, kind, status, asset, metadata, created_at)
       VALUES ('ltx_backlog_' || $1, 'backlog:' || $1, md5($1), 'transfer', 'posted', 'EUR', '{}', $2)`,
      [String(siteId), at],
    );
    await db.query(
      `INSERT INTO ledger_entries (transaction_id, account_id, asset, amount)
       VALUES ('ltx_backlog_' || $1, $2, 'EUR', $4::numeric), ('ltx_backlog_' || $1, $3, 'EUR', -$4::numeric)`,
      [String(siteId), siteAccount, funding.rows[0]?.id, total.toString()],
    );
    await db.query('UPDATE ledger_accounts SET posted = posted + $2::numeric WHERE id = $1', [
      siteAccount,
      total.toString(),
    ]);
    await db.query('UPDATE ledger_accounts SET posted = posted - $2::numeric WHERE id = $1', [
      funding.rows[0]?.id,
      total.toString(),
    ]);
    await db.query(
      `INSERT INTO balance_transactions (id, owner, currency, type, source_type, source_id, gross, fee, net,
         created_at, available_at, payout_id)
       SELECT 'btx_backlog_' || $1 || '_' || lpad(g::text, 8, '0'), 'site:' || $1, 'EUR', 'capture',
         'payments_transaction', 'backlog-' || g, 100, 0, 100, $3::timestamptz + g * interval '1 millisecond',
         $3::timestamptz + g * interval '1 millisecond', NULL
       FROM generate_series(1, $2::int) g`,
      [String(siteId), items, at],
    );
    await db.query('COMMIT');
    await db.query('ANALYZE balance_transactions');
    return { total };
  } finally {
    await db.end();
  }
}
