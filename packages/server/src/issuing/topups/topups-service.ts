import { sql } from 'kysely';
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import type { CapabilityTokens } from '../../platform/crypto/capability-tokens.ts';
import { randomAlphanumeric } from '../../platform/crypto/hashing.ts';
import type { Db, Executor, Tx } from '../../platform/db/database.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import { newId } from '../../platform/ids.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import { type ClientAmount, formatAmount } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { RiskEngine } from '../../platform/risk/risk-engine.ts';
import { publishIssuingEvent } from '../events/publish-issuing-event.ts';
import type { CustomerRef } from '../kyc/kyc-service.ts';
import type { TopupLimits } from './topup-limits.ts';
import type { TopupMonitoring } from './topup-monitoring.ts';
import { TopupRisk, topupRefusal } from './topup-risk.ts';

import {
  BANK_TRANSFER_TTL_SECONDS,
  type NewTopup,
  type Topup,
  type TopupPatch,
  type TopupRow,
  type TopupUsage,
} from './topup-types.ts';

export * from './topup-types.ts';

export interface TopupsDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  outbox: Outbox;
  ledger: Ledger;
  publicUrl: string;
  /** Per currency (topup-limits.ts); a currency without an entry is not offered for topups */
  limits: Readonly<Record<string, TopupLimits>>;
  capabilities: CapabilityTokens;
  /** The rules at issuing.topup (topup-risk.ts) */
  risk: RiskEngine;
  /** Completed topups judged by the monitoring scenarios (topup-monitoring.ts) */
  monitoring: TopupMonitoring;
}

export class TopupsService {
  /** A fiat topup's hosted page: its address is its capability (never stored) */
  private readonly pageUrl: (topupId: string) => string;

  private readonly risk: TopupRisk;

  constructor(private readonly deps: TopupsDeps) {
    this.risk = new TopupRisk(deps.risk);
    this.pageUrl = (id) =>
      `${deps.publicUrl}/hosted/issuing/topups/${deps.capabilities.issue('topup-page', id)}`;
  }

  /** The topup a hosted page's token was issued for. */
  topupOfPageToken(token: string): string | undefined {
    return this.deps.capabilities.open('topup-page', token);
  }

  /** Creates bank-transfer instructions (also payable by card on the hosted page), within the limits. */
  async createFiat(
    customer: CustomerRef,
    input: { accountId: string; amount: ClientAmount },
  ): Promise<Topup> {
    return this.create(customer, {
      ...input,
      kind: 'fiat',
      method: 'bank_transfer',
      ttlSeconds: BANK_TRANSFER_TTL_SECONDS,
    });
  }

  /**
   * A new topup, as the risk rules decide: a declined one is refused (403) after its decision is kept,
   * in the transaction that would have written it.
   */
  async create(customer: CustomerRef, input: NewTopup): Promise<Topup> {
    const made = await this.deps.transact((tx) => this.open(tx, customer, input));
    if (made === 'declined') throw topupRefusal();
    return made;
  }

  /** A new topup of an open account of the customer, its amount reserved against the limits. */
  private async open(tx: Tx, customer: CustomerRef, input: NewTopup): Promise<Topup | 'declined'> {
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
    const amount = input.amount.in(asset);
    // Serialise this customer's topups so two concurrent ones cannot both squeeze under the limit.
    await tx
      .selectFrom('issuing_customers')
      .select('id')
      .where('id', '=', customer.customerId)
      .forUpdate()
      .execute();
    if (!this.deps.limits[asset.code]) {
      throw new DomainError(
        'invalid_state',
        `topups in ${asset.code} are not offered (no topup limits are set for it)`,
        {
          details: { currency: asset.code },
        },
      );
    }
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
    const holder = await tx
      .selectFrom('issuing_customers as c')
      .leftJoin('issuing_kyc as k', 'k.customer_id', 'c.id')
      .select(['c.created_at', sql<string>`coalesce(k.steps->'residence'->>'country', '')`.as('country')])
      .where('c.id', '=', customer.customerId)
      .executeTakeFirstOrThrow();
    const verdict = await this.risk.decide(
      tx,
      this.risk.signal({
        customer,
        accountId: account.id,
        method: input.method,
        amount,
        currency: asset.code,
        customerSince: holder.created_at,
        customerCountry: holder.country,
        at: now,
      }),
      topupId,
    );
    if (verdict?.action === 'decline') return 'declined';
    const extra = input.extra ? await input.extra(tx, { currency: asset.code, asset, amount, topupId }) : {};
    await tx
      .insertInto('issuing_topups')
      .values({
        id: topupId,
        customer_id: customer.customerId,
        partner_id: customer.partnerId,
        account_id: account.id,
        kind: input.kind,
        method: input.method,
        status: 'pending',
        currency: asset.code,
        amount: amount.toString(),
        reference: `TSR-${randomAlphanumeric(10).toUpperCase()}`,
        expires_at: addSeconds(now, input.ttlSeconds),
        created_at: now,
        risk_challenge: verdict?.action === 'challenge',
        ...extra,
      })
      .execute();
    await publishIssuingEvent(this.deps.outbox, tx, {
      ...customer,
      eventType: 'topupCreated',
      data: { topupId },
    });
    return this.find(tx, customer, topupId);
  }

  /**
   * Credits a paid topup to its account from the paying rail's clearing account, and completes it.
   * `amount` is what the account receives (crypto: the converted value less the fee).
   */
  async credit(
    tx: Tx,
    topup: TopupRow,
    source: { ownerType: string; ownerId: string },
    amount: bigint,
    patch: TopupPatch = {},
  ): Promise<void> {
    await this.moveToAccount(tx, topup, source, amount, `issuing-topup:${topup.id}`);
    await this.update(tx, topup, {
      ...patch,
      status: 'completed',
      credited_amount: amount,
      completed_at: this.deps.clock.now(),
    });
    await this.deps.monitoring.completed(tx, topup);
  }

  /** Credits the topup's account from the paying rail's clearing account (nothing when amount is 0). */
  async moveToAccount(
    tx: Tx,
    topup: Pick<TopupRow, 'id' | 'account_id' | 'currency'>,
    source: { ownerType: string; ownerId: string },
    amount: bigint,
    operationId: string,
  ): Promise<void> {
    if (amount <= 0n) return;
    const account = await tx
      .selectFrom('issuing_accounts')
      .select('ledger_account_id')
      .where('id', '=', topup.account_id)
      .executeTakeFirstOrThrow();
    const clearing = await this.deps.ledger.openAccount(tx, {
      ...source,
      asset: topup.currency,
      purpose: 'clearing',
      isBounded: false,
    });
    await this.deps.ledger.transfer(tx, {
      operationId,
      legs: [
        { accountId: clearing.id, amount: -amount },
        { accountId: account.ledger_account_id, amount },
      ],
      metadata: { topupId: topup.id },
    });
  }

  /** Changes a topup and tells the partner (topupStatusChanged). */
  async update(tx: Tx, topup: Pick<TopupRow, 'id' | 'customer_id' | 'partner_id'>, patch: TopupPatch) {
    await tx.updateTable('issuing_topups').set(patch).where('id', '=', topup.id).execute();
    await publishIssuingEvent(this.deps.outbox, tx, {
      customerId: topup.customer_id,
      partnerId: topup.partner_id,
      eventType: 'topupStatusChanged',
      data: { topupId: topup.id },
    });
  }

  /** Locks the topup found by its id, its hosted page's token, or its latest card attempt's reference. */
  async lock(tx: Tx, by: 'id' | 'network_reference', value: string) {
    return tx.selectFrom('issuing_topups').selectAll().where(by, '=', value).forUpdate().executeTakeFirst();
  }

  /** The bank reports the transfer arrived: the account is credited; a repeat changes nothing. */
  async complete(topupId: string): Promise<Topup> {
    return this.deps.transact(async (tx) => {
      const topup = await this.lock(tx, 'id', topupId);
      if (!topup) throw notFound('topup');
      const customer = { customerId: topup.customer_id, partnerId: topup.partner_id };
      if (topup.status === 'completed') return this.find(tx, customer, topupId);
      if (topup.status !== 'pending' || topup.method !== 'bank_transfer')
        throw new DomainError('invalid_state', `the topup is ${topup.status} (${topup.method})`, {
          details: { status: topup.status },
        });
      await this.credit(
        tx,
        topup,
        { ownerType: 'issuing_bank', ownerId: 'client-funds' },
        BigInt(topup.amount),
      );
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
      const topup = await this.lock(tx, 'id', row.id);
      if (topup?.status !== 'pending') return false;
      await this.update(tx, topup, { status: 'expired' });
      return true;
    });
  }

  /** The topup behind a hosted page's token (the page is the only place it is shown). */
  async byPaymentToken(token: string): Promise<Topup | undefined> {
    const id = this.topupOfPageToken(token);
    if (!id) return undefined;
    const row = await this.deps.db
      .selectFrom('issuing_topups')
      .selectAll()
      .where('id', '=', id)
      .where('kind', '=', 'fiat')
      .executeTakeFirst();
    return row ? toTopup(row, this.pageUrl) : undefined;
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
    return rows.map((row) => toTopup(row, this.pageUrl));
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
    const limits = this.deps.limits[currency] ?? { daily: 0n, monthly: 0n };
    return {
      currency,
      daily: period(limits.daily, String(sums.daily)),
      monthly: period(limits.monthly, String(sums.monthly)),
    };
  }

  async find(db: Executor, customer: CustomerRef, topupId: string): Promise<Topup> {
    const row = await db
      .selectFrom('issuing_topups')
      .selectAll()
      .where('id', '=', topupId)
      .where('customer_id', '=', customer.customerId)
      .executeTakeFirst();
    if (!row) throw notFound('topup');
    return toTopup(row, this.pageUrl);
  }
}

export function toTopup(row: TopupRow, pageUrl: (topupId: string) => string): Topup {
  const crypto =
    row.kind === 'crypto' && row.crypto_asset && row.crypto_network && row.deposit_address
      ? {
          currency: row.crypto_asset,
          network: row.crypto_network,
          amount: BigInt(row.crypto_amount ?? 0),
          depositAddress: row.deposit_address,
          rateE18: BigInt(row.rate_e18 ?? 0),
          fee: BigInt(row.fee ?? 0),
          received: row.crypto_received === null ? null : BigInt(row.crypto_received),
          confirmations: row.confirmations ?? 0,
          confirmationsRequired: row.confirmations_required ?? 0,
        }
      : null;
  return {
    topupId: row.id,
    accountId: row.account_id,
    kind: row.kind,
    method: row.method,
    status: row.status,
    currency: row.currency,
    amount: BigInt(row.amount),
    reference: row.reference,
    paymentUrl: row.kind === 'fiat' ? pageUrl(row.id) : null,
    lastDecline: row.last_decline,
    crypto,
    creditedAmount: row.credited_amount === null ? null : BigInt(row.credited_amount),
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  };
}
