// Money out's reads on a seeded year (docs/scale.md, Money out on a year of data): each read the balance,
// the reports, reconcile, the payout run, the balance transaction and payout item lists and the audit
// trail's time windows make is captured as the code sends it, and Postgres's plan for it (EXPLAIN, on
// tables of tens of thousands of rows, analyzed) must read the big tables by an index: no sequential scan
// of balance_transactions, ledger_transactions, ledger_entries or audit_events, and the index each read
// was given.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payoutItems } from '../../src/pages/console/reads/payouts-reads.ts';
import { listAudit } from '../../src/platform/audit/audit-trail.ts';
import type { Database } from '../../src/platform/db/schema.ts';
import { sumBalanceDays } from '../../src/platform/payouts/balance-days.ts';
import { balancesOf } from '../../src/platform/payouts/balance-transactions.ts';
import { PayoutsService } from '../../src/platform/payouts/payouts-service.ts';
import { reconcile } from '../../src/platform/payouts/reconcile.ts';
import { balanceByDay, listBalanceTransactions, revenueByDay } from '../../src/platform/payouts/reports.ts';
import { Harness } from '../harness/harness.ts';

const BIG = new Set(['balance_transactions', 'ledger_transactions', 'ledger_entries', 'audit_events']);
const ROWS = 60_000;
const DAY = 86_400_000;

let h: Harness;
let pool: pg.Pool;
let logged: Kysely<Database>;
let sent: { sql: string; parameters: readonly unknown[] }[] = [];
const site = { kind: 'site' as const, siteId: 901 };

beforeAll(async () => {
  h = await Harness.start();
  pool = new pg.Pool({ connectionString: h.databaseUrl, max: 2 });
  logged = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === 'query') sent.push({ sql: event.query.sql, parameters: event.query.parameters });
    },
  });
  const now = h.services.clock.now();
  const yearAgo = new Date(now.getTime() - 365 * DAY);
  // A year of one site's movements (captures with their fees, a refund in 50, a chargeback in 100, a
  // payout a day paying them) and a few of other tenants; the ledger's transactions and entries of the
  // site's balance shard; a year of audit records, a tenant's among them.
  await pool.query(
    `INSERT INTO balance_transactions (id, owner, currency, type, source_type, source_id, gross, fee, net,
       created_at, available_at, payout_id)
     SELECT 'btx_' || lpad(g::text, 26, '0'), CASE WHEN g % 20 = 0 THEN 'site:' || (1000 + g % 40) ELSE 'site:901' END,
       'EUR', CASE WHEN g % 100 = 1 THEN 'chargeback' WHEN g % 50 = 2 THEN 'refund' ELSE 'capture' END,
       'payments_transaction', g::text, 1000, 30, 970, t, t + interval '2 days',
       CASE WHEN t < $2::timestamptz - interval '3 days' THEN 'po_' || to_char(t, 'YYYYMMDD') END
     FROM generate_series(1, $1::int) g, LATERAL (SELECT $3::timestamptz + g * ($4::bigint * interval '1 millisecond') AS t) x`,
    [ROWS, now, yearAgo, Math.floor((365 * DAY) / ROWS)],
  );
  const account = await pool.query<{ id: string }>(
    `INSERT INTO ledger_accounts (id, owner_type, owner_id, asset, purpose, is_bounded, created_at)
     VALUES ('lac_plans_site', 'payments_site', '901', 'EUR', 'balance', true, now()) RETURNING id`,
  );
  await pool.query(
    `INSERT INTO ledger_transactions (id, operation_id, request_hash, kind, status, asset, metadata, created_at)
     SELECT 'ltx_' || lpad(g::text, 26, '0'), 'plans:' || g, md5(g::text), 'transfer', 'posted', 'EUR', '{}',
       $2::timestamptz + g * ($3::bigint * interval '1 millisecond')
     FROM generate_series(1, $1::int) g`,
    [ROWS, yearAgo, Math.floor((365 * DAY) / ROWS)],
  );
  // The other leg of each on one of 500 other accounts, as a platform's entries spread over many.
  await pool.query(
    `INSERT INTO ledger_accounts (id, owner_type, owner_id, asset, purpose, is_bounded, created_at)
     SELECT 'lac_plans_' || n, 'crypto_store', 'plans-' || n, 'EUR', 'settlement', false, now()
     FROM generate_series(1, 500) n`,
  );
  await pool.query(
    `INSERT INTO ledger_entries (transaction_id, account_id, asset, amount)
     SELECT 'ltx_' || lpad(g::text, 26, '0'), leg.account, 'EUR', leg.amount
     FROM generate_series(1, $1::int) g,
       LATERAL (VALUES ($2::text, 970::numeric), ('lac_plans_' || (1 + g % 500), -970::numeric)) leg (account, amount)`,
    [ROWS, account.rows[0]?.id],
  );
  await pool.query('ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only');
  await pool.query(
    `INSERT INTO audit_events (seq, at, actor_kind, actor, action, tenant_kind, tenant_id, detail, outcome, prev_hash, hash)
     SELECT coalesce((SELECT max(seq) FROM audit_events), 0) + g,
       $2::timestamptz + g * ($3::bigint * interval '1 millisecond'), 'admin', 'plans', 'payout.created',
       CASE WHEN g % 10 = 0 THEN 'merchant' END, CASE WHEN g % 10 = 0 THEN '77' END, '{}', 'succeeded', '', ''
     FROM generate_series(1, $1::int) g`,
    [ROWS, yearAgo, Math.floor((365 * DAY) / ROWS)],
  );
  await pool.query('ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only');
  // The balance-days sweep's catch-up, as its runs do over a dozen rounds.
  while ((await sumBalanceDays(logged, now)) > 0);
  await pool.query('VACUUM ANALYZE');
}, 120_000);

afterAll(async () => {
  await logged.destroy();
  await h.close();
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** Every statement `read` sends, with the scans of Postgres's plan for it. */
async function plansOf(read: () => Promise<unknown>): Promise<{ sql: string; scans: string[] }[]> {
  sent = [];
  await read();
  const plans = [];
  for (const statement of sent) {
    if (!/^\s*(select|with)/i.test(statement.sql)) continue;
    const { rows } = await pool.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      `EXPLAIN (FORMAT JSON) ${statement.sql}`,
      [...statement.parameters],
    );
    const scans: string[] = [];
    const walk = (node: PlanNode) => {
      if (node['Relation Name'] || node['Index Name']) {
        scans.push(`${node['Node Type']} ${node['Index Name'] ?? node['Relation Name']}`);
      }
      for (const child of node.Plans ?? []) walk(child);
    };
    walk(rows[0]?.['QUERY PLAN'][0]?.Plan as PlanNode);
    plans.push({ sql: statement.sql, scans });
  }
  return plans;
}

/** No statement of the read scans a big table whole, and together they use every index named. */
async function expectIndexed(read: () => Promise<unknown>, indexes: string[]): Promise<void> {
  const plans = await plansOf(read);
  expect(plans.length).toBeGreaterThan(0);
  for (const plan of plans) {
    const whole = plan.scans.filter((s) => s.startsWith('Seq Scan') && BIG.has(s.split(' ').at(-1) ?? ''));
    expect(whole, plan.sql).toEqual([]);
  }
  const used = plans.flatMap((p) => p.scans).join('\n');
  for (const index of indexes) expect(used, JSON.stringify(plans, null, 1)).toContain(index);
}

describe('money out’s reads on a seeded year', () => {
  const today = () => h.services.clock.now().toISOString().slice(0, 10);
  const daysAgo = (n: number) =>
    new Date(h.services.clock.now().getTime() - n * DAY).toISOString().slice(0, 10);

  it('the balance: the currencies from the ledger’s accounts, what is pending from the unpaid index', async () => {
    await expectIndexed(
      () => balancesOf(logged, h.services.ledger, site, h.services.clock.now()),
      ['ledger_accounts_owner_type_owner_id_asset_purpose_key'],
    );
  });

  it('the balance by day over a year and a month, and revenue over a year: summed days plus the live ones', async () => {
    await expectIndexed(() => balanceByDay(logged, site, daysAgo(365), today()), ['balance_days']);
    await expectIndexed(() => balanceByDay(logged, site, daysAgo(30), today()), ['balance_days']);
    await expectIndexed(
      () => revenueByDay(logged, daysAgo(365), today()),
      ['balance_days', 'balance_transactions_created'],
    );
  });

  it('reconcile a day: its own mark, or the newest before it and the days since by time', async () => {
    await reconcile(logged, today(), { now: h.services.clock.now() });
    await expectIndexed(
      () => reconcile(logged, today(), { now: h.services.clock.now() }),
      ['ledger_transactions_created_brin', 'balance_transactions_created'],
    );
    // A day proved once is answered from its mark.
    await expectIndexed(
      () => reconcile(logged, daysAgo(200), { now: h.services.clock.now() }),
      ['reconcile_marks'],
    );
  });

  it('the payout run’s candidates: a skip scan of the unpaid index', async () => {
    const payouts = new PayoutsService({
      ...h.services,
      terms: h.services.moneyOut.terms,
      holds: h.services.compliance.holds,
      profiles: h.services.compliance.profiles,
      db: logged,
    });
    await expectIndexed(() => payouts.runDue(), ['balance_transactions_unpaid']);
  });

  it('lists: balance transactions of a rare type, a payout’s items, the audit trail by time alone and within a tenant', async () => {
    await expectIndexed(
      () => listBalanceTransactions(logged, site, { type: 'chargeback' }, { limit: 25 }),
      ['balance_transactions_owner_type'],
    );
    const payoutId = `po_${daysAgo(200).replace(/-/g, '')}`;
    await expectIndexed(() => payoutItems(logged, payoutId, undefined), ['balance_transactions_payout']);
    const window = { from: new Date(`${daysAgo(200)}T00:00:00Z`), to: new Date(`${daysAgo(199)}T00:00:00Z`) };
    await expectIndexed(() => listAudit(logged, { ...window, limit: 50 }), ['audit_events_at']);
    await expectIndexed(
      () => listAudit(logged, { ...window, tenant: { kind: 'merchant', id: '77' }, limit: 50 }),
      ['audit_events_tenant_at'],
    );
  });
});
