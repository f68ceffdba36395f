// Payouts (docs/payouts.md, Payouts): the scheduled run and payouts on demand. A payout takes money out of
// the tenant's balance into the platform's payouts-in-transit account and records which balance
// transactions it pays; the bank rail carries it on (payout-lifecycle.ts). Each payout is made in one
// database transaction, under a lock per tenant and currency, so two runs never pay the same money.
import { sql } from 'kysely';
import type { Clock } from '../clock/clock.ts';
import type { Db, Executor, Tx } from '../db/database.ts';
import type { Transact } from '../db/transact.ts';
import { DomainError } from '../errors/domain-error.ts';
import type { Outbox } from '../events/outbox.ts';
import { newId } from '../ids.ts';
import type { Ledger } from '../ledger/ledger.ts';
import { formatAmountIn, parseAmountField } from '../money/amount.ts';
import { findAsset } from '../money/assets.ts';
import { balanceAccounts, payoutAccounts } from './balance-accounts.ts';
import { balanceOf, balanceTransaction, insertBalanceTransactions } from './balance-transactions.ts';
import { publishPayoutEvent } from './payout-events.ts';
import { type PayoutRow, payoutView } from './payout-view.ts';
import {
  type Owner,
  ownerKey,
  type PayoutSchedule,
  parseOwnerKey,
  type TermsStore,
  WEEKDAYS,
} from './terms.ts';

export interface PayoutsDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  ledger: Ledger;
  outbox: Outbox;
  terms: TermsStore;
}

export class PayoutsService {
  constructor(private readonly deps: PayoutsDeps) {}

  /**
   * A payout on demand. Without an amount it pays everything available (itemized, like a scheduled
   * payout); with one, that amount, never more than is available (not itemized: the next itemized
   * payout's report lists it as a line of its own).
   */
  async payNow(owner: Owner, input: { currency: string; amount?: string }): Promise<PayoutRow> {
    const asset = findAsset(input.currency);
    if (!asset)
      throw new DomainError('validation_failed', 'currency is not a known currency', { field: 'currency' });
    return this.deps.transact(async (tx) => {
      await this.lockBalance(tx, owner, asset.code);
      if (input.amount === undefined) {
        const payout = await this.payItemized(tx, owner, asset.code, { minimum: 1n, scheduledFor: null });
        if (!payout) {
          throw new DomainError('validation_failed', 'there is nothing available to pay out', {
            field: 'amount',
            details: { available: await this.availableText(tx, owner, asset.code) },
          });
        }
        return payout;
      }
      const amount = parseAmountField(input.amount, asset);
      const { available } = await balanceOf(tx, this.deps.ledger, owner, asset.code, this.deps.clock.now());
      if (amount > available) {
        throw new DomainError(
          'validation_failed',
          `the amount exceeds the available balance (${formatAmountIn(available < 0n ? 0n : available, asset.code)} ${asset.code})`,
          { field: 'amount', details: { available: formatAmountIn(available, asset.code) } },
        );
      }
      return this.makePayout(tx, owner, asset.code, amount, { itemized: false, scheduledFor: null });
    });
  }

  /**
   * The scheduled run: a tenant is paid once a day (UTC) in each currency when its schedule pays that day,
   * its available money comes to its minimum and it has a bank account. A look that pays nothing is
   * remembered with what it saw (the schedule's and bank account's change times, the available total and
   * count), so the sweep does not read an unchanged tenant again that day; a change to any of them, or an
   * explicit run (`POST /admin/payout-runs`, `tessera payout-run`), looks again at once. What becomes
   * available after the day's payout waits for the next day's. Answers the payouts made.
   */
  async runDue(options: { explicit?: boolean } = {}): Promise<PayoutRow[]> {
    const now = this.deps.clock.now();
    const today = now.toISOString().slice(0, 10);
    const explicit = options.explicit === true;
    const { rows: candidates } = await sql<{ owner: string; currency: string; seen: string }>`
      WITH due AS (
        SELECT b.owner, b.currency, sum(b.net) AS total, count(*) AS n FROM balance_transactions b
        WHERE b.payout_id IS NULL AND b.available_at <= ${now}
        GROUP BY b.owner, b.currency
      ), looking AS (
        SELECT due.owner, due.currency,
               concat_ws('|', coalesce(s.updated_at::text, '-'), coalesce(a.updated_at::text, '-'), due.total, due.n) AS seen
        FROM due
        LEFT JOIN payout_schedules s ON s.owner = due.owner
        LEFT JOIN bank_accounts a ON a.owner = due.owner
      )
      SELECT l.owner, l.currency, l.seen FROM looking l
      WHERE NOT EXISTS (SELECT 1 FROM payout_run_days d
                        WHERE d.owner = l.owner AND d.currency = l.currency AND d.day = ${today}
                          AND (d.paid OR (NOT ${explicit}::boolean AND d.seen = l.seen)))
      ORDER BY 1, 2`.execute(this.deps.db);
    const made: PayoutRow[] = [];
    for (const { owner: key, currency, seen } of candidates) {
      const owner = parseOwnerKey(key);
      const { schedule } = await this.deps.terms.get(this.deps.db, owner);
      const payout = await this.deps.transact(async (tx) => {
        await this.lockBalance(tx, owner, currency);
        // Under the lock, the day's scheduled payout is the truth the memo only caches: another process
        // (or an earlier round whose memo was lost) may have made it.
        const paidToday = await tx
          .selectFrom('payouts')
          .select('id')
          .where('owner', '=', key)
          .where('currency', '=', currency)
          .where('scheduled_for', '=', today)
          .executeTakeFirst();
        const payout =
          !paidToday && paysOn(schedule, now)
            ? await this.payItemized(tx, owner, currency, {
                minimum: minimumOf(schedule, currency),
                scheduledFor: today,
              })
            : undefined;
        const look = { paid: paidToday !== undefined || payout !== undefined, seen };
        await tx
          .insertInto('payout_run_days')
          .values({ owner: key, currency, day: today, ...look })
          .onConflict((oc) => oc.columns(['owner', 'currency', 'day']).doUpdateSet(look))
          .execute();
        return payout;
      });
      if (payout) made.push(payout);
    }
    // The days looked at are only needed for today: a week is kept for the curious.
    await this.deps.db
      .deleteFrom('payout_run_days')
      .where('day', '<', new Date(now.getTime() - 7 * 86_400_000).toISOString().slice(0, 10))
      .execute();
    return made;
  }

  /** Newest first, keyset on id. */
  async list(
    db: Executor,
    owner: Owner,
    page: { limit: number; before?: string | undefined },
  ): Promise<PayoutRow[]> {
    let query = db.selectFrom('payouts').selectAll().where('owner', '=', ownerKey(owner));
    if (page.before) query = query.where('id', '<', page.before);
    return query.orderBy('id', 'desc').limit(page.limit).execute();
  }

  /** Serializes everything that takes money out of one tenant's balance in one currency. */
  private async lockBalance(tx: Tx, owner: Owner, currency: string): Promise<void> {
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`payout:${ownerKey(owner)}:${currency}`}, 0))`.execute(
      tx,
    );
  }

  /** Pays every available balance transaction no payout has paid yet, when they come to the minimum. */
  private async payItemized(
    tx: Tx,
    owner: Owner,
    currency: string,
    options: { minimum: bigint; scheduledFor: string | null },
  ): Promise<PayoutRow | undefined> {
    const { rows } = await sql<{ ids: string[] | null; total: string | null }>`
      SELECT array_agg(id) AS ids, sum(net)::text AS total FROM balance_transactions
      WHERE owner = ${ownerKey(owner)} AND currency = ${currency} AND payout_id IS NULL
        AND available_at <= ${this.deps.clock.now()}`.execute(tx);
    const total = BigInt(rows[0]?.total ?? 0);
    if (total < options.minimum || total <= 0n) return undefined;
    const hasAccount = await tx
      .selectFrom('bank_accounts')
      .select('owner')
      .where('owner', '=', ownerKey(owner))
      .executeTakeFirst();
    if (!hasAccount && options.scheduledFor) return undefined;
    const payout = await this.makePayout(tx, owner, currency, total, {
      itemized: true,
      scheduledFor: options.scheduledFor,
    });
    await tx
      .updateTable('balance_transactions')
      .set({ payout_id: payout.id })
      .where('id', '=', sql<string>`ANY(${rows[0]?.ids ?? []}::text[])`)
      .execute();
    return payout;
  }

  private async makePayout(
    tx: Tx,
    owner: Owner,
    currency: string,
    amount: bigint,
    options: { itemized: boolean; scheduledFor: string | null },
  ): Promise<PayoutRow> {
    const account = await tx
      .selectFrom('bank_accounts')
      .selectAll()
      .where('owner', '=', ownerKey(owner))
      .executeTakeFirst();
    if (!account) {
      throw new DomainError('invalid_state', 'set a bank account before paying out', {
        details: { reason: 'no_bank_account' },
      });
    }
    const now = this.deps.clock.now();
    const id = newId('payout', now.getTime());
    const { inTransit } = await payoutAccounts(this.deps.ledger, tx, currency);
    await this.deps.ledger.transferFromShards(tx, {
      operationId: `payout:${id}`,
      debits: [{ shards: await balanceAccounts(this.deps.ledger, tx, owner, currency), amount }],
      credits: [{ accountId: inTransit, amount }],
      metadata: { payoutId: id },
    });
    const payout = await tx
      .insertInto('payouts')
      .values({
        id,
        owner: ownerKey(owner),
        currency,
        amount: amount.toString(),
        status: 'pending',
        itemized: options.itemized,
        iban_enc: account.iban_enc,
        iban_masked: account.iban_masked,
        bic: account.bic,
        holder_name: account.holder_name,
        arrival_date: null,
        failure_code: null,
        bank_file_id: null,
        scheduled_for: options.scheduledFor,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const row = balanceTransaction({
      owner,
      currency,
      type: 'payout',
      source: { type: 'payout', id },
      gross: -amount,
      at: now,
    });
    // An itemized payout pays its own line; one by hand is paid (listed) by the next itemized payout.
    await insertBalanceTransactions(tx, [{ ...row, payout_id: options.itemized ? id : null }]);
    await publishPayoutEvent(this.deps.outbox, tx, 'payout.created', payoutView(payout));
    return payout;
  }

  private async availableText(db: Executor, owner: Owner, currency: string): Promise<string> {
    const { available } = await balanceOf(db, this.deps.ledger, owner, currency, this.deps.clock.now());
    return formatAmountIn(available, currency);
  }
}

/** Whether the schedule pays on this (UTC) day. */
export function paysOn(schedule: PayoutSchedule, at: Date): boolean {
  switch (schedule.interval) {
    case 'daily':
      return true;
    case 'weekly':
      return WEEKDAYS[(at.getUTCDay() + 6) % 7] === schedule.weeklyAnchor;
    case 'monthly': {
      const lastDay = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 0)).getUTCDate();
      return at.getUTCDate() === Math.min(schedule.monthlyAnchor, lastDay);
    }
    case 'manual':
      return false;
  }
}

function minimumOf(schedule: PayoutSchedule, currency: string): bigint {
  const asset = findAsset(currency);
  if (!asset) return 1n;
  const [whole = '0', fraction = ''] = schedule.minimum.split('.');
  const minor = BigInt(whole + fraction.slice(0, asset.exponent).padEnd(asset.exponent, '0'));
  return minor > 0n ? minor : 1n;
}
