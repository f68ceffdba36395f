// bench:scale's money out (docs/scale.md, Money out on a year of data): the busy site paid out through the
// API once, a second merchant on a manual schedule with a few captures, then a year of money history
// seeded in SQL from those real rows: the busy site's balance transactions (a capture with its fee per
// payments order, a refund in 50, a chargeback in 100, a daily payout paying each day's), the manual
// site's backlog of unpaid captures (its ledger moved to match), a crypto store's settlements with their
// fees, and the audit trail's records, hash-chained as the server chains them.
import type pg from 'pg';
import { GENESIS, hashOf } from '../packages/server/src/platform/audit/audit-trail.ts';
import { openDatabase } from '../packages/server/src/platform/db/database.ts';
import { sumBalanceDays } from '../packages/server/src/platform/payouts/balance-days.ts';
import { reconcile } from '../packages/server/src/platform/payouts/reconcile.ts';
import type { TesseraServer } from './servers.ts';

export interface MoneyOutScene {
  /** The busy site's payout made through the API (its page and report are read) */
  payoutId: string;
  backlog: { merchantId: number; siteId: number; apiKey: string };
}

const IBAN = { iban: 'DE89370400440532013000', holderName: 'Scale Shop' };

export async function makeMoneyOutScene(
  tessera: TesseraServer,
  busy: { merchantId: number; siteId: number; apiKey: string },
): Promise<MoneyOutScene> {
  const { call, admin } = tessera;
  await call('PUT', `/admin/merchants/${busy.merchantId}/sites/${busy.siteId}/bank-account`, admin, IBAN);
  const payout = await call<{ data: { id: string } }>(
    'POST',
    '/payments/payout',
    { authorization: `Bearer ${busy.apiKey}` },
    { siteId: busy.siteId, currency: 'EUR' },
  );
  const merchant = await call<{ id: number; apiKey: string; sites: { id: number }[] }>(
    'POST',
    '/admin/merchants',
    admin,
    { name: 'Backlog merchant', sites: [{ name: 'Backlog site' }] },
  );
  const siteId = merchant.sites[0]?.id as number;
  await call('PUT', `/admin/merchants/${merchant.id}/sites/${siteId}/payout-schedule`, admin, {
    interval: 'manual',
    delayDays: 0,
  });
  await call('PUT', `/admin/merchants/${merchant.id}/sites/${siteId}/bank-account`, admin, IBAN);
  const auth = { authorization: `Bearer ${merchant.apiKey}` };
  const customer = await call<{ data: { id: number } }>('POST', '/payments/customer', auth, {
    identifier: 'backlog',
    email: 'backlog@example.com',
  });
  const expiry = `12/${String((new Date().getUTCFullYear() + 3) % 100).padStart(2, '0')}`;
  for (let i = 0; i < 5; i++) {
    const res = await fetch(`${tessera.base}/payments/order`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        amount: `${20 + i}.00`,
        currency: 'EUR',
        orderType: 'purchase',
        customerId: String(customer.data.id),
        cardNumber: '4111111111111111',
        cardExpiryDate: expiry,
        cardCvv: '123',
        cardHolderName: 'Backlog Buyer',
        cardHolderCountry: 'RO',
      }).toString(),
    });
    if (res.status !== 201) throw new Error(`backlog order: ${res.status} ${await res.text()}`);
  }
  return { payoutId: payout.data.id, backlog: { merchantId: merchant.id, siteId, apiKey: merchant.apiKey } };
}

/** The year's money history; answers the rows written per table and the catch-ups' seconds. */
export async function seedMoneyOut(
  pool: pg.Pool,
  scene: { busyMerchantId: number; busySiteId: number; storeId: string; moneyOut: MoneyOutScene },
  orders: number,
): Promise<Record<string, number>> {
  const now = new Date();
  const start = new Date(now.getTime() - 366 * 86_400_000);
  const step = Math.floor((365 * 86_400_000) / orders);
  const rows: Record<string, number> = {};
  // A time-ordered id as the server makes them (platform/ids.ts): prefix, 10 Crockford digits of the time.
  await pool.query(`CREATE OR REPLACE FUNCTION bench_id(prefix text, at timestamptz, n bigint) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$
      SELECT prefix || '_' || (SELECT string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ',
        (((extract(epoch FROM at) * 1000)::bigint >> (5 * (9 - i))) & 31)::int + 1, 1), '' ORDER BY i)
        FROM generate_series(0, 9) i) || lpad(n::text, 16, '0') $$`);
  const busy = `site:${scene.busySiteId}`;
  // Each order's capture (its fee), a refund in 50 and a chargeback with its fee in 100; what is older
  // than two days is paid by that day's payout.
  await pool.query(
    `INSERT INTO balance_transactions (id, owner, currency, type, source_type, source_id, gross, fee, net,
       created_at, available_at, payout_id)
     SELECT bench_id('btx', t, g), $1, 'EUR', k.type, 'payments_transaction', 'year-' || g, k.gross, k.fee,
       k.gross - k.fee, t, t + interval '2 days',
       CASE WHEN t < $3::timestamptz - interval '3 days' THEN 'po_year_' || to_char(t, 'YYYYMMDD') END
     FROM generate_series(1, $2::int) g,
       LATERAL (SELECT $4::timestamptz + g * ($5::bigint * interval '1 millisecond') AS t) x,
       LATERAL (SELECT CASE WHEN g % 100 = 0 THEN 'chargeback' WHEN g % 50 = 0 THEN 'refund' ELSE 'capture' END AS type,
                       CASE WHEN g % 50 = 0 THEN -1090 ELSE 1090 END AS gross,
                       CASE WHEN g % 100 = 0 THEN 1500 WHEN g % 50 = 0 THEN 0 ELSE 40 END AS fee) k`,
    [busy, orders, now, start, step],
  );
  rows.balance_transactions = orders;
  // The daily payouts, copied from the one made through the API, with their own lines.
  const payouts = await pool.query(
    `INSERT INTO payouts (id, owner, currency, amount, status, itemized, iban_enc, iban_masked, bic, holder_name,
       arrival_date, failure_code, bank_file_id, scheduled_for, created_at, updated_at)
     SELECT b.payout_id, p.owner, 'EUR', sum(b.net), 'paid', true, p.iban_enc, p.iban_masked, p.bic, p.holder_name,
       to_char(min(b.created_at) + interval '3 days', 'YYYY-MM-DD'), NULL, NULL,
       to_char(min(b.created_at) + interval '2 days', 'YYYY-MM-DD'),
       date_trunc('day', min(b.created_at)) + interval '2 days 1 hour',
       date_trunc('day', min(b.created_at)) + interval '3 days'
     FROM balance_transactions b, payouts p
     WHERE b.owner = $1 AND b.payout_id LIKE 'po_year_%' AND p.id = $2
     GROUP BY b.payout_id, p.owner, p.iban_enc, p.iban_masked, p.bic, p.holder_name
     HAVING sum(b.net) > 0`,
    [busy, scene.moneyOut.payoutId],
  );
  await pool.query(
    `INSERT INTO balance_transactions (id, owner, currency, type, source_type, source_id, gross, fee, net,
       created_at, available_at, payout_id)
     SELECT bench_id('btx', created_at, 0), owner, 'EUR', 'payout', 'payout', id, -amount, 0, -amount,
       created_at, created_at, id
     FROM payouts WHERE id LIKE 'po_year_%'`,
  );
  rows.payouts = payouts.rowCount ?? 0;
  // The manual site's backlog: a quarter as many unpaid captures, its ledger credited to match.
  const backlog = Math.floor(orders / 4);
  const backlogOwner = `site:${scene.moneyOut.backlog.siteId}`;
  await pool.query(
    `INSERT INTO balance_transactions (id, owner, currency, type, source_type, source_id, gross, fee, net,
       created_at, available_at, payout_id)
     SELECT bench_id('btx', t, g), $1, 'EUR', 'capture', 'payments_transaction', 'backlog-' || g, 1000, 0, 1000, t, t,
       NULL
     FROM generate_series(1, $2::int) g,
       LATERAL (SELECT $3::timestamptz + g * ($4::bigint * interval '1 millisecond') AS t) x`,
    [backlogOwner, backlog, start, Math.floor((365 * 86_400_000) / backlog)],
  );
  const account = await pool.query<{ id: string }>(
    `SELECT id FROM ledger_accounts WHERE owner_type = 'payments_site' AND owner_id = $1 AND asset = 'EUR'
       AND purpose = 'balance'`,
    [String(scene.moneyOut.backlog.siteId)],
  );
  await pool.query(
    `INSERT INTO ledger_accounts (id, owner_type, owner_id, asset, purpose, is_bounded, created_at)
     VALUES ('lac_bench_backlog', 'bench', 'backlog', 'EUR', 'funding', false, $1)`,
    [start],
  );
  await pool.query(
    `INSERT INTO ledger_transactions (id, operation_id, request_hash, kind, status, asset, metadata, created_at)
     VALUES ('ltx_bench_backlog', 'bench-backlog', md5('backlog'), 'transfer', 'posted', 'EUR', '{}', $1)`,
    [start],
  );
  await pool.query(
    `INSERT INTO ledger_entries (transaction_id, account_id, asset, amount)
     VALUES ('ltx_bench_backlog', $1, 'EUR', $2::numeric), ('ltx_bench_backlog', 'lac_bench_backlog', 'EUR', -$2::numeric)`,
    [account.rows[0]?.id, 1000 * backlog],
  );
  await pool.query('UPDATE ledger_accounts SET posted = posted + $2::numeric WHERE id = $1', [
    account.rows[0]?.id,
    1000 * backlog,
  ]);
  await pool.query(`UPDATE ledger_accounts SET posted = -$1::numeric WHERE id = 'lac_bench_backlog'`, [
    1000 * backlog,
  ]);
  rows.backlog_items = backlog;
  // The crypto store's settlements: a quarter as many, each with its fee line.
  const settlements = Math.floor(orders / 4);
  await pool.query(
    `INSERT INTO balance_transactions (id, owner, currency, type, source_type, source_id, gross, fee, net,
       created_at, available_at, payout_id)
     SELECT bench_id('btx', t, g * 2 + k.n), $1, 'EUR', k.type, 'crypto_payment', 'settle-' || g, k.gross, k.fee,
       k.gross - k.fee, t, t, NULL
     FROM generate_series(1, $2::int) g,
       LATERAL (SELECT $3::timestamptz + g * ($4::bigint * interval '1 millisecond') AS t) x,
       LATERAL (VALUES (0, 'capture', 2500, 0), (1, 'fee', 0, 25)) k (n, type, gross, fee)`,
    [`store:${scene.storeId}`, settlements, start, Math.floor((365 * 86_400_000) / settlements)],
  );
  rows.store_settlements = settlements;
  await pool.query('DROP FUNCTION bench_id(text, timestamptz, bigint)');
  rows.audit_events = await seedAudit(pool, Math.floor(orders / 2), start, step * 2, scene.busyMerchantId);
  // The sweeps' catch-up (balance days) and the first reconcile (it proves each day once), as a year of
  // their runs leaves them; timed.
  const handle = openDatabase(pool.options.connectionString ?? '', { max: 2 });
  try {
    // The rows are back-dated, which no real write is: the days already summed (today's sandbox) are
    // emptied and summed again from the first, as the sweep's runs do after migration 0052.
    await pool.query(
      'DELETE FROM balance_days; DELETE FROM balance_days_summed; DELETE FROM reconcile_marks',
    );
    let started = performance.now();
    while ((await sumBalanceDays(handle.db, now)) > 0);
    rows.balance_days_catch_up_ms = Math.round(performance.now() - started);
    started = performance.now();
    await reconcile(handle.db, now.toISOString().slice(0, 10), { now });
    rows.first_reconcile_ms = Math.round(performance.now() - started);
  } finally {
    await handle.close();
  }
  return rows;
}

/** The audit trail's records, a tenth of them the busy merchant's, chained as appendAudit chains them. */
async function seedAudit(
  pool: pg.Pool,
  count: number,
  start: Date,
  stepMs: number,
  merchantId: number,
): Promise<number> {
  const last = await pool.query<{ seq: string; hash: string }>(
    'SELECT seq::text, hash FROM audit_events ORDER BY audit_events.seq DESC LIMIT 1',
  );
  let seq = Number(last.rows[0]?.seq ?? 0);
  let prevHash = last.rows[0]?.hash ?? GENESIS;
  await pool.query('ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only');
  try {
    for (let done = 0; done < count; ) {
      const batch = Math.min(5_000, count - done);
      const columns: unknown[][] = Array.from({ length: 9 }, () => []);
      for (let i = 0; i < batch; i++) {
        seq++;
        const entry = {
          at: new Date(start.getTime() + (done + i) * stepMs),
          actorKind: 'console_user',
          actor: 'finance@scale.example',
          source: '203.0.113.7',
          action: 'payout.created',
          objectId: `po_audit_${seq}`,
          tenant: seq % 10 === 0 ? { kind: 'merchant', id: String(merchantId) } : null,
          detail: { route: 'POST /console/money/payouts/new' },
          outcome: 'succeeded' as const,
          status: 303,
          requestId: null,
        };
        const hash = hashOf(seq, prevHash, entry);
        const values = [
          seq,
          entry.at,
          entry.objectId,
          entry.tenant?.kind ?? null,
          entry.tenant?.id ?? null,
          JSON.stringify(entry.detail),
          prevHash,
          hash,
          entry.status,
        ];
        for (const [k, v] of values.entries()) columns[k]?.push(v);
        prevHash = hash;
      }
      await pool.query(
        `INSERT INTO audit_events (seq, at, actor_kind, actor, source, action, object_id, tenant_kind, tenant_id,
           detail, outcome, status, request_id, prev_hash, hash)
         SELECT s, a, 'console_user', 'finance@scale.example', '203.0.113.7', 'payout.created', o, tk, ti, d::jsonb,
           'succeeded', st, NULL, p, h
         FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
           $8::text[], $9::int[]) AS u (s, a, o, tk, ti, d, p, h, st)`,
        columns,
      );
      done += batch;
    }
  } finally {
    await pool.query('ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only');
  }
  return count;
}
