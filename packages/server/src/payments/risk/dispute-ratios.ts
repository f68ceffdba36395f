// Dispute monitoring (docs/risk.md, Monitoring): each merchant's disputes received this calendar month
// (UTC, the platform's clock) against its payments settled this month, all disputes and fraud ones apart,
// by count and by amount, as the card schemes' monitoring programs count them (Visa's VAMP: disputes and
// fraud of a month over its settled transactions; Mastercard's ECP: chargebacks of a month over its
// transactions). Read when Prometheus scrapes, at most once a minute unless a dispute arrived: the disputes by
// their creation index,
// the payments from the overview's daily rollup for the days it holds and live for the rest.
import { sql } from 'kysely';
import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Db } from '../../platform/db/database.ts';
import { FRAUD_CODES } from './dispute-labels.ts';

/**
 * The card schemes' monitoring levels a merchant's month is held to (docs/risk.md, Monitoring): Mastercard's
 * Excessive Chargeback Program warns at 1 % and 100 chargebacks and fines at 1.5 % and 100; Visa's VAMP
 * names a merchant excessive at 1.5 % (from April 2026) over 1,500 disputes and fraud reports; Mastercard's
 * Excessive Fraud Merchant looks at fraud by amount, 0.5 % of sales. The alert (ops/prometheus/alerts.yml)
 * fires at the first fining level.
 */
export const SCHEME_LEVELS = [
  { program: 'Mastercard ECP, monitored', basis: 'count', kind: 'all', ratio: 0.01, atLeast: 100 },
  { program: 'Mastercard ECP, excessive', basis: 'count', kind: 'all', ratio: 0.015, atLeast: 100 },
  { program: 'Visa VAMP, excessive', basis: 'count', kind: 'all', ratio: 0.015, atLeast: 1_501 },
  { program: 'Mastercard EFM (fraud by amount)', basis: 'amount', kind: 'fraud', ratio: 0.005, atLeast: 1 },
] as const;

/** The levels a merchant's month reaches: by count over all its payments, by amount in any currency. */
export function levelsReached(m: MerchantDisputes): string[] {
  return SCHEME_LEVELS.filter((level) => {
    if (level.basis === 'count')
      return m.disputes >= level.atLeast && ratio(m.disputes, m.payments) >= level.ratio;
    return m.amounts.some((a) => a.fraud > 0n && ratio(a.fraud, a.settled) >= level.ratio);
  }).map((level) => level.program);
}

/** Merchants exported, the highest ratios first: a bounded number of series however many merchants */
export const MONITORED_MERCHANTS = 200;
const REFRESH_MS = 60_000;

export interface MerchantDisputes {
  merchantId: number;
  disputes: number;
  fraudDisputes: number;
  /** Payments settled this month */
  payments: number;
  /** Per currency: disputed and settled amounts, minor units */
  amounts: { currency: string; disputed: bigint; fraud: bigint; settled: bigint }[];
}

/** This month's disputes and payments of the merchants that have disputes, the highest count ratio first. */
export async function monthDisputes(db: Db, now: Date, merchantId?: number): Promise<MerchantDisputes[]> {
  // One merchant's month (its console page) reads its own disputes by their merchant index, not everyone's.
  const ofMerchant = merchantId === undefined ? sql`` : sql`AND merchant_id = ${merchantId}`;
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const { rows } = await sql<{
    merchant_id: number;
    currency: string;
    disputes: string;
    fraud: string;
    disputed: string;
    fraud_amount: string;
    payments: string;
    settled: string;
  }>`
    WITH d AS (
      SELECT merchant_id, currency, count(*) AS disputes,
        count(*) FILTER (WHERE reason_code = ANY(${[...FRAUD_CODES]})) AS fraud,
        sum(amount) AS disputed,
        coalesce(sum(amount) FILTER (WHERE reason_code = ANY(${[...FRAUD_CODES]})), 0) AS fraud_amount
      FROM payments_disputes WHERE created_at >= ${from} AND created_at <= ${now} ${ofMerchant}
      GROUP BY 1, 2
    ), held AS (
      -- the month's days the rollup holds; the payments of the days after them are counted live
      SELECT coalesce(max(day) + 1, ${from.toISOString().slice(0, 10)}::date) AS live_from
      FROM console_daily_figures_days WHERE day >= ${from.toISOString().slice(0, 10)}::date
    ), p AS (
      SELECT f.tenant_id::int AS merchant_id, f.currency, sum(f.count) AS payments, sum(f.volume) AS settled
      FROM console_daily_figures f, held
      WHERE f.api = 'payments' AND f.day >= ${from.toISOString().slice(0, 10)}::date AND f.day < held.live_from
        AND f.tenant_id IN (SELECT merchant_id::text FROM d)
      GROUP BY 1, 2
      UNION ALL
      SELECT t.merchant_id, t.currency, count(*), sum(t.captured_amount)
      FROM payments_transactions t, held
      WHERE t.type = 'deposit' AND t.status IN ('complete-ok', 'refund-ok')
        AND t.created_at >= held.live_from::timestamp AT TIME ZONE 'UTC' AND t.created_at <= ${now}
        AND t.merchant_id IN (SELECT merchant_id FROM d)
      GROUP BY 1, 2
    )
    SELECT d.merchant_id, d.currency, d.disputes::text, d.fraud::text, d.disputed::text, d.fraud_amount::text,
      coalesce((SELECT sum(payments) FROM p WHERE p.merchant_id = d.merchant_id), 0)::text AS payments,
      coalesce((SELECT sum(settled) FROM p WHERE p.merchant_id = d.merchant_id AND p.currency = d.currency), 0)::text
        AS settled
    FROM d`.execute(db);
  const byMerchant = new Map<number, MerchantDisputes>();
  for (const r of rows) {
    const m = byMerchant.get(r.merchant_id) ?? {
      merchantId: r.merchant_id,
      disputes: 0,
      fraudDisputes: 0,
      payments: Number(r.payments),
      amounts: [],
    };
    m.disputes += Number(r.disputes);
    m.fraudDisputes += Number(r.fraud);
    m.amounts.push({
      currency: r.currency,
      disputed: BigInt(r.disputed),
      fraud: BigInt(r.fraud_amount),
      settled: BigInt(r.settled),
    });
    byMerchant.set(r.merchant_id, m);
  }
  return [...byMerchant.values()].sort(
    (a, b) => ratio(b.disputes, b.payments) - ratio(a.disputes, a.payments),
  );
}

/** A ratio of counts or amounts; disputes with no payment this month count as 1 (all of them disputed) */
export const ratio = (part: number | bigint, whole: number | bigint) =>
  Number(whole) === 0 ? (Number(part) > 0 ? 1 : 0) : Number(part) / Number(whole);

/** The gauges, read from the database when scraped (at most once a minute). */
export function registerDisputeMetrics(registry: Registry, sources: { db: Db; clock: Clock }): void {
  // Read again a minute after the last read, or at once when a dispute arrived since (its newest id moved).
  let last: { at: number; newest: string | null; read: Promise<MerchantDisputes[]> } | undefined;
  const current = async () => {
    const newest = await sql<{ newest: string | null }>`SELECT max(id)::text AS newest FROM payments_disputes`
      .execute(sources.db)
      .then((r) => r.rows[0]?.newest ?? null)
      .catch(() => last?.newest ?? null);
    if (!last || last.newest !== newest || Date.now() - last.at >= REFRESH_MS) {
      last = { at: Date.now(), newest, read: monthDisputes(sources.db, sources.clock.now()).catch(() => []) };
    }
    return last.read;
  };
  new Gauge({
    name: 'tessera_merchant_disputes',
    help: 'Disputes a merchant received this calendar month (UTC): all, and fraud ones',
    labelNames: ['merchant', 'kind'],
    registers: [registry],
    async collect() {
      const merchants = (await current()).slice(0, MONITORED_MERCHANTS);
      this.reset();
      // A sample before the first dispute, so a rule reading it is never empty on a fresh server
      for (const kind of ['all', 'fraud']) this.set({ merchant: '', kind }, 0);
      for (const m of merchants) {
        this.set({ merchant: String(m.merchantId), kind: 'all' }, m.disputes);
        this.set({ merchant: String(m.merchantId), kind: 'fraud' }, m.fraudDisputes);
      }
    },
  });
  new Gauge({
    name: 'tessera_merchant_dispute_ratio',
    help: 'A merchant’s disputes this month over its payments settled this month, by count and by amount (per currency)',
    labelNames: ['merchant', 'kind', 'basis', 'currency'],
    registers: [registry],
    async collect() {
      const merchants = (await current()).slice(0, MONITORED_MERCHANTS);
      this.reset();
      for (const kind of ['all', 'fraud']) this.set({ merchant: '', kind, basis: 'count', currency: '' }, 0);
      for (const m of merchants) {
        const merchant = String(m.merchantId);
        this.set({ merchant, kind: 'all', basis: 'count', currency: '' }, ratio(m.disputes, m.payments));
        this.set(
          { merchant, kind: 'fraud', basis: 'count', currency: '' },
          ratio(m.fraudDisputes, m.payments),
        );
        for (const a of m.amounts) {
          this.set(
            { merchant, kind: 'all', basis: 'amount', currency: a.currency },
            ratio(a.disputed, a.settled),
          );
          this.set(
            { merchant, kind: 'fraud', basis: 'amount', currency: a.currency },
            ratio(a.fraud, a.settled),
          );
        }
      }
    },
  });
}
