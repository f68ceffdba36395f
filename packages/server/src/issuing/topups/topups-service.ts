// Fiat topups of the card issuing API (spec/card-issuing.md, Topups): a bank transfer with a unique
// reference; when the bank rail reports it (sandbox: POST /sandbox/issuing/topups/{topupId}/complete)
// the account is credited through the ledger. Daily and monthly limits count pending and completed
// topups. topupCreated and topupStatusChanged go out with each step.
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import { randomAlphanumeric } from '../../platform/crypto/hashing.ts';
import type { Db, Executor } from '../../platform/db/database.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import { newId } from '../../platform/ids.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import { formatAmount, parseAmountField } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import { publishIssuingEvent } from '../events/publish-issuing-event.ts';
import type { CustomerRef } from '../kyc/kyc-service.ts';

/** Topup limits per customer and currency, in major units (defaults: 5,000 a day, 20,000 a month) */
export const TOPUP_LIMITS_MAJOR = { daily: 5_000n, monthly: 20_000n };
/** How long bank-transfer instructions stay valid (default: 7 days) */
export const BANK_TRANSFER_TTL_SECONDS = 7 * 24 * 3600;
/** The sandbox bank's account the customer transfers to */
export const SANDBOX_BANK = {
  beneficiary: 'Tessera Sandbox Client Funds',
  iban: 'RO49AAAA1B31007593840000',
  bic: 'TSRARO22',
};

export interface Topup {
  topupId: string;
  accountId: string;
  kind: 'fiat';
  method: 'bank_transfer';
  status: 'pending' | 'completed' | 'expired';
  currency: string;
  amount: bigint;
  reference: string;
  expiresAt: Date;
  createdAt: Date;
  completedAt: Date | null;
}

export interface TopupUsage {
  currency: string;
  daily: { limit: bigint; used: bigint; remaining: bigint };
  monthly: { limit: bigint; used: bigint; remaining: bigint };
}

export interface TopupsDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  outbox: Outbox;
  ledger: Ledger;
}

export class TopupsService {
  constructor(private readonly deps: TopupsDeps) {}

  /** Creates bank-transfer instructions for an open account, within the customer's limits. */
  async createFiat(
    customer: CustomerRef,
    input: { accountId: string; amount: string | number },
  ): Promise<Topup> {
    return this.deps.transact(async (tx) => {
      const account = await tx
        .selectFrom('issuing_accounts')
        .select(['id', 'currency', 'status'])
        .where('id', '=', input.accountId)
        .where('customer_id', '=', customer.customerId)
        .executeTakeFirst();
      if (!account) throw notFound('account');
      if (account.status !== 'open')
        throw new DomainError('invalid_state', 'the account is closed', { details: { status: 'closed' } });
      const asset = findAsset(account.currency);
      if (!asset) throw new Error(`unknown asset ${account.currency}`);
      const amount = parseAmountField(input.amount, asset);
      // Serialise this customer's topups so two concurrent ones cannot both squeeze under the limit.
      await tx
        .selectFrom('issuing_customers')
        .select('id')
        .where('id', '=', customer.customerId)
        .forUpdate()
        .execute();
      const usage = await this.usageOf(tx, customer, asset.code);
      for (const period of ['daily', 'monthly'] as const) {
        if (amount > usage[period].remaining) {
          throw new DomainError('limit_exceeded', `the ${period} topup limit would be exceeded`, {
            field: 'amount',
            details: {
              period,
              limit: formatAmount(usage[period].limit, asset),
              remaining: formatAmount(usage[period].remaining, asset),
            },
          });
        }
      }
      const now = this.deps.clock.now();
      const topupId = newId('topup');
      await tx
        .insertInto('issuing_topups')
        .values({
          id: topupId,
          customer_id: customer.customerId,
          partner_id: customer.partnerId,
          account_id: account.id,
          kind: 'fiat',
          method: 'bank_transfer',
          status: 'pending',
          currency: asset.code,
          amount: amount.toString(),
          reference: `TSR-${randomAlphanumeric(10).toUpperCase()}`,
          expires_at: addSeconds(now, BANK_TRANSFER_TTL_SECONDS),
          created_at: now,
        })
        .execute();
      await publishIssuingEvent(this.deps.outbox, tx, {
        ...customer,
        eventType: 'topupCreated',
        data: { topupId },
      });
      return this.find(tx, customer, topupId);
    });
  }

  /** The bank reports the transfer arrived: the account is credited; a repeat changes nothing. */
  async complete(topupId: string): Promise<Topup> {
    return this.deps.transact(async (tx) => {
      const topup = await tx
        .selectFrom('issuing_topups')
        .selectAll()
        .where('id', '=', topupId)
        .forUpdate()
        .executeTakeFirst();
      if (!topup) throw notFound('topup');
      const customer = { customerId: topup.customer_id, partnerId: topup.partner_id };
      if (topup.status === 'completed') return this.find(tx, customer, topupId);
      if (topup.status !== 'pending')
        throw new DomainError('invalid_state', `the topup is ${topup.status}`, {
          details: { status: topup.status },
        });
      const account = await tx
        .selectFrom('issuing_accounts')
        .select('ledger_account_id')
        .where('id', '=', topup.account_id)
        .executeTakeFirstOrThrow();
      const bank = await this.deps.ledger.openAccount(tx, {
        ownerType: 'issuing_bank',
        ownerId: 'client-funds',
        asset: topup.currency,
        purpose: 'clearing',
        isBounded: false,
      });
      const amount = BigInt(topup.amount);
      await this.deps.ledger.transfer(tx, {
        operationId: `issuing-topup:${topup.id}`,
        legs: [
          { accountId: bank.id, amount: -amount },
          { accountId: account.ledger_account_id, amount },
        ],
        metadata: { topupId: topup.id },
      });
      await tx
        .updateTable('issuing_topups')
        .set({ status: 'completed', completed_at: this.deps.clock.now() })
        .where('id', '=', topup.id)
        .execute();
      await publishIssuingEvent(this.deps.outbox, tx, {
        ...customer,
        eventType: 'topupStatusChanged',
        data: { topupId: topup.id },
      });
      return this.find(tx, customer, topupId);
    });
  }

  /** Sweep: instructions nobody paid expire and stop counting against the limits. */
  async expireDue(): Promise<number> {
    const due = await this.deps.db
      .selectFrom('issuing_topups')
      .select(['id', 'customer_id', 'partner_id'])
      .where('status', '=', 'pending')
      .where('expires_at', '<=', this.deps.clock.now())
      .limit(200)
      .execute();
    return transactEach(this.deps.transact, due, async (tx, row) => {
      const updated = await tx
        .updateTable('issuing_topups')
        .set({ status: 'expired' })
        .where('id', '=', row.id)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      if (updated.numUpdatedRows === 0n) return false;
      await publishIssuingEvent(this.deps.outbox, tx, {
        customerId: row.customer_id,
        partnerId: row.partner_id,
        eventType: 'topupStatusChanged',
        data: { topupId: row.id },
      });
      return true;
    });
  }

  async get(customer: CustomerRef, topupId: string): Promise<Topup> {
    return this.find(this.deps.db, customer, topupId);
  }

  async list(customer: CustomerRef): Promise<Topup[]> {
    const rows = await this.deps.db
      .selectFrom('issuing_topups')
      .selectAll()
      .where('customer_id', '=', customer.customerId)
      .orderBy('seq', 'desc')
      .execute();
    return rows.map(toTopup);
  }

  /** Limits and what is used of them today (UTC) and this month, per currency. */
  async usage(customer: CustomerRef, currency: string): Promise<TopupUsage> {
    const asset = findAsset(currency);
    if (asset?.kind !== 'fiat')
      throw new DomainError('validation_failed', 'currency must be an ISO 4217 fiat currency code', {
        field: 'currency',
      });
    return this.usageOf(this.deps.db, customer, asset.code);
  }

  private async usageOf(db: Executor, customer: CustomerRef, currency: string): Promise<TopupUsage> {
    const asset = findAsset(currency);
    if (!asset) throw new Error(`unknown asset ${currency}`);
    const now = this.deps.clock.now();
    const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const sums = await db
      .selectFrom('issuing_topups')
      .select((eb) => [
        eb.fn
          .coalesce(eb.fn.sum<string>('amount').filterWhere('created_at', '>=', dayStart), eb.val('0'))
          .as('daily'),
        eb.fn.coalesce(eb.fn.sum<string>('amount'), eb.val('0')).as('monthly'),
      ])
      .where('customer_id', '=', customer.customerId)
      .where('currency', '=', currency)
      .where('status', '<>', 'expired')
      .where('created_at', '>=', monthStart)
      .executeTakeFirstOrThrow();
    const scale = 10n ** BigInt(asset.exponent);
    const period = (limitMajor: bigint, used: string) => {
      const limit = limitMajor * scale;
      const usedMinor = BigInt(used);
      return { limit, used: usedMinor, remaining: limit > usedMinor ? limit - usedMinor : 0n };
    };
    return {
      currency,
      daily: period(TOPUP_LIMITS_MAJOR.daily, String(sums.daily)),
      monthly: period(TOPUP_LIMITS_MAJOR.monthly, String(sums.monthly)),
    };
  }

  private async find(db: Executor, customer: CustomerRef, topupId: string): Promise<Topup> {
    const row = await db
      .selectFrom('issuing_topups')
      .selectAll()
      .where('id', '=', topupId)
      .where('customer_id', '=', customer.customerId)
      .executeTakeFirst();
    if (!row) throw notFound('topup');
    return toTopup(row);
  }
}

function toTopup(row: {
  id: string;
  account_id: string;
  kind: 'fiat';
  method: 'bank_transfer';
  status: 'pending' | 'completed' | 'expired';
  currency: string;
  amount: string;
  reference: string;
  expires_at: Date;
  created_at: Date;
  completed_at: Date | null;
}): Topup {
  return {
    topupId: row.id,
    accountId: row.account_id,
    kind: row.kind,
    method: row.method,
    status: row.status,
    currency: row.currency,
    amount: BigInt(row.amount),
    reference: row.reference,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  };
}
