// What the operator charges a tenant and when it is paid (docs/payouts.md, Pricing and Payout schedule):
// one fee schedule and one payout schedule per site or store, the configured defaults where none was set.
// Both are tenant settings: read on every capture, so cached like credentials (TenantCache; a trigger
// announces every change, migration 0033).
import { noteChange } from '../audit/audit-changes.ts';
import type { Clock } from '../clock/clock.ts';
import type { Executor } from '../db/database.ts';
import { DomainError } from '../errors/domain-error.ts';
import { findAsset } from '../money/assets.ts';
import type { TenantCache } from '../tenants/tenant-cache.ts';

/** A site ('site:<id>') or a store ('store:<id>'), as bank_accounts and every money-out table key them. */
export type Owner = { kind: 'site'; siteId: number } | { kind: 'store'; storeId: string };

export const ownerKey = (owner: Owner): string =>
  owner.kind === 'site' ? `site:${owner.siteId}` : `store:${owner.storeId}`;

export function parseOwnerKey(key: string): Owner {
  const [kind, id = ''] = key.split(':', 2) as [string, string];
  return kind === 'site' ? { kind: 'site', siteId: Number(id) } : { kind: 'store', storeId: id };
}

export interface FeeRate {
  percentBps: number;
  /** Minor units per currency */
  fixed: Record<string, bigint>;
}

export interface FeeSchedule extends FeeRate {
  /** Overrides by card brand (payments), lower case: 'visa', 'mastercard', 'amex'… */
  brands: Record<string, FeeRate>;
  /** A refund gives back the same share of its capture's fee (default: the fee is kept) */
  refundFees: boolean;
}

export const PAYOUT_INTERVALS = ['daily', 'weekly', 'monthly', 'manual'] as const;
export const WEEKDAYS = [
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
] as const;

export interface PayoutSchedule {
  interval: (typeof PAYOUT_INTERVALS)[number];
  /** The weekday of a weekly schedule */
  weeklyAnchor: (typeof WEEKDAYS)[number];
  /** The day of the month of a monthly schedule (1–31; a shorter month pays on its last day) */
  monthlyAnchor: number;
  /** The least a scheduled payout pays, in major units of the payout's currency ("10.00") */
  minimum: string;
  /** Days after a capture that its money becomes available */
  delayDays: number;
  /** The share of each capture held back, in basis points, and for how many days */
  reserveBps: number;
  reserveDays: number;
}

export interface Terms {
  fees: FeeSchedule;
  schedule: PayoutSchedule;
}

export interface TermsDefaults {
  fees: FeeSchedule;
  schedule: PayoutSchedule;
}

/**
 * The fee on an amount: the percentage rounded half up to the minor unit, plus the fixed part in the
 * amount's currency, never more than the amount itself (a fee cannot make a capture cost the tenant).
 */
export function feeFor(fees: FeeSchedule, amount: bigint, currency: string, brand?: string | null): bigint {
  const rate = (brand && fees.brands[brand.toLowerCase()]) || fees;
  const percent = (amount * BigInt(rate.percentBps) + 5_000n) / 10_000n;
  const fee = percent + (rate.fixed[currency] ?? 0n);
  return fee > amount ? amount : fee;
}

/** A share in basis points of an amount, rounded down (what a reserve holds back). */
export const shareOf = (amount: bigint, bps: number): bigint => (amount * BigInt(bps)) / 10_000n;

export class TermsStore {
  constructor(
    private readonly clock: Clock,
    private readonly cache: TenantCache,
    private readonly defaults: TermsDefaults,
  ) {}

  async get(db: Executor, owner: Owner): Promise<Terms> {
    const key = ownerKey(owner);
    const found = await this.cache.get<Terms>(`terms:${key}`, async () => ({
      value: await this.load(db, key),
    }));
    return found ?? this.defaults;
  }

  private async load(db: Executor, key: string): Promise<Terms> {
    const [fees, schedule] = await Promise.all([
      db.selectFrom('fee_schedules').selectAll().where('owner', '=', key).executeTakeFirst(),
      db.selectFrom('payout_schedules').selectAll().where('owner', '=', key).executeTakeFirst(),
    ]);
    return {
      fees: fees
        ? {
            percentBps: fees.percent_bps,
            fixed: minorUnits(fees.fixed),
            brands: Object.fromEntries(
              Object.entries(fees.brands).map(([brand, rate]) => [
                brand,
                { percentBps: rate.percentBps, fixed: minorUnits(rate.fixed) },
              ]),
            ),
            refundFees: fees.refund_fees,
          }
        : this.defaults.fees,
      schedule: schedule
        ? {
            interval: schedule.interval,
            weeklyAnchor: (schedule.weekly_anchor ?? 'monday') as PayoutSchedule['weeklyAnchor'],
            monthlyAnchor: schedule.monthly_anchor ?? 1,
            minimum: schedule.minimum,
            delayDays: schedule.delay_days,
            reserveBps: schedule.reserve_bps,
            reserveDays: schedule.reserve_days,
          }
        : this.defaults.schedule,
    };
  }

  async putFees(db: Executor, owner: Owner, fees: FeeSchedule): Promise<Terms> {
    const before = await this.load(db, ownerKey(owner));
    const values = {
      percent_bps: fees.percentBps,
      fixed: JSON.stringify(textUnits(fees.fixed)),
      brands: JSON.stringify(
        Object.fromEntries(
          Object.entries(fees.brands).map(([brand, rate]) => [
            brand.toLowerCase(),
            { percentBps: rate.percentBps, fixed: textUnits(rate.fixed) },
          ]),
        ),
      ),
      refund_fees: fees.refundFees,
      updated_at: this.clock.now(),
    };
    await db
      .insertInto('fee_schedules')
      .values({ owner: ownerKey(owner), ...values })
      .onConflict((oc) => oc.column('owner').doUpdateSet(values))
      .execute();
    const after = await this.load(db, ownerKey(owner));
    noteChange(`fees of ${ownerKey(owner)}`, before.fees, after.fees);
    return after;
  }

  async putSchedule(db: Executor, owner: Owner, schedule: PayoutSchedule): Promise<Terms> {
    const before = await this.load(db, ownerKey(owner));
    const values = {
      interval: schedule.interval,
      weekly_anchor: schedule.weeklyAnchor,
      monthly_anchor: schedule.monthlyAnchor,
      minimum: schedule.minimum,
      delay_days: schedule.delayDays,
      reserve_bps: schedule.reserveBps,
      reserve_days: schedule.reserveDays,
      updated_at: this.clock.now(),
    };
    await db
      .insertInto('payout_schedules')
      .values({ owner: ownerKey(owner), ...values })
      .onConflict((oc) => oc.column('owner').doUpdateSet(values))
      .execute();
    const after = await this.load(db, ownerKey(owner));
    noteChange(`payout schedule of ${ownerKey(owner)}`, before.schedule, after.schedule);
    return after;
  }
}

/** "EUR:0.25,USD:0.30" (configuration) or {EUR: "0.25"} (the admin API) as minor units per currency. */
export function parseFixedFees(input: Record<string, string>, field: string): Record<string, bigint> {
  const fixed: Record<string, bigint> = {};
  for (const [code, text] of Object.entries(input)) {
    const asset = findAsset(code.toUpperCase());
    const match = /^(\d{1,9})(?:\.(\d+))?$/.exec(text.trim());
    if (!asset || !match || (match[2]?.length ?? 0) > asset.exponent) {
      throw new DomainError('validation_failed', `${field}.${code} must be an amount in a known currency`, {
        field: `${field}.${code}`,
      });
    }
    fixed[asset.code] = BigInt(`${match[1]}${(match[2] ?? '').padEnd(asset.exponent, '0')}`);
  }
  return fixed;
}

const minorUnits = (fixed: Record<string, string>) =>
  Object.fromEntries(Object.entries(fixed).map(([code, units]) => [code, BigInt(units)]));
const textUnits = (fixed: Record<string, bigint>) =>
  Object.fromEntries(Object.entries(fixed).map(([code, units]) => [code, units.toString()]));
