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
  /** A tenant's step of the run threw: logged and counted (tessera_payout_run_failures_total) by the caller */
  onRunFailure?: (failure: RunFailure, error: unknown) => void;
}

/** One tenant's step of a payout run that threw; the next round tries it again. */
export interface RunFailure {
  tenant: string;
  currency: string;
  error: string;
}

/** Items a payout takes in one database transaction: a year's backlog is paid in many short ones. */
export const PAYOUT_BATCH = 10_000;

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
    if (input.amount === undefined) {
      const payout = await this.payItemized(owner, asset.code, { minimum: 1n, scheduledFor: null });
      if (!payout) {
        throw new DomainError('validation_failed', 'there is nothing available to pay out', {
          field: 'amount',
          details: { available: await this.availableText(this.deps.db, owner, asset.code) },
        });
      }
      return payout;
    }
    const amount = parseAmountField(input.amount, asset);
    return this.deps.transact(async (tx) => {
      await this.lockBalance(tx, owner, asset.code);
      // A payout being made in batches has taken its items but not yet its money from the ledger.
      if (await this.assemblyOf(tx, ownerKey(owner), asset.code)) {
        throw new DomainError(
          'invalid_state',
          'a payout of this balance is being made; try again when it is',
          {
            details: { reason: 'payout_in_progress' },
          },
        );
      }
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
   * its available money comes to its minimum and it has a bank account. The candidates are the tenants
   * with unpaid money available (a skip scan of the unpaid index: one probe per tenant and currency, not a
   * read of every unpaid row) and those with a payout being made in batches. A look that pays nothing is
   * remembered with when it looked and the schedule's and bank account's change times, so the sweep looks
   * again the same day only when one of its unpaid rows became available since, one of those changed, or
   * the run is explicit (`POST /admin/payout-runs`, `tessera payout-run`). What becomes available after the
   * day's payout waits for the next day's. Each tenant and currency is its own step: one that throws is
   * reported and tried again next round, and every other tenant is paid.
   */
  async runDue(options: { explicit?: boolean } = {}): Promise<{ made: PayoutRow[]; failed: RunFailure[] }> {
    const now = this.deps.clock.now();
    const today = now.toISOString().slice(0, 10);
    const explicit = options.explicit === true;
    const { rows: candidates } = await sql<{ owner: string; currency: string; seen: string }>`
      WITH RECURSIVE pairs AS (
        (SELECT owner, currency FROM balance_transactions WHERE payout_id IS NULL ORDER BY owner, currency LIMIT 1)
        UNION ALL
        SELECT n.owner, n.currency FROM pairs p CROSS JOIN LATERAL (
          SELECT b.owner, b.currency FROM balance_transactions b
          WHERE b.payout_id IS NULL AND (b.owner, b.currency) > (p.owner, p.currency)
          ORDER BY b.owner, b.currency LIMIT 1) n
      ), looking AS (
        SELECT p.owner, p.currency,
          concat_ws('|', coalesce(s.updated_at::text, '-'), coalesce(a.updated_at::text, '-')) AS seen
        FROM pairs p
        LEFT JOIN payout_schedules s ON s.owner = p.owner
        LEFT JOIN bank_accounts a ON a.owner = p.owner
        WHERE EXISTS (SELECT 1 FROM balance_transactions b WHERE b.owner = p.owner AND b.currency = p.currency
                        AND b.payout_id IS NULL AND b.available_at <= ${now})
      )
      SELECT l.owner, l.currency, l.seen FROM looking l
      WHERE NOT EXISTS (
        SELECT 1 FROM payout_run_days d
        WHERE d.owner = l.owner AND d.currency = l.currency AND d.day = ${today}
          AND (d.paid OR (NOT ${explicit}::boolean AND d.seen = l.seen AND d.looked_at IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM balance_transactions b
                            WHERE b.owner = l.owner AND b.currency = l.currency AND b.payout_id IS NULL
                              AND b.available_at >= d.looked_at AND b.available_at <= ${now}))))
      UNION
      SELECT owner, currency, '' FROM payout_assemblies
      ORDER BY 1, 2`.execute(this.deps.db);
    const made: PayoutRow[] = [];
    const failed: RunFailure[] = [];
    for (const { owner: key, currency, seen } of candidates) {
      try {
        const payout = await this.look(parseOwnerKey(key), currency, seen, now);
        if (payout) made.push(payout);
      } catch (error) {
        const failure = {
          tenant: key,
          currency,
          error: error instanceof Error ? error.message : String(error),
        };
        failed.push(failure);
        this.deps.onRunFailure?.(failure, error);
      }
    }
    // The days looked at are only needed for today: a week is kept for the curious.
    await this.deps.db
      .deleteFrom('payout_run_days')
      .where('day', '<', new Date(now.getTime() - 7 * 86_400_000).toISOString().slice(0, 10))
      .execute();
    return { made, failed };
  }

  /** One tenant and currency of the run: its scheduled payout when due (or the one being made), and the memo. */
  private async look(
    owner: Owner,
    currency: string,
    seen: string,
    now: Date,
  ): Promise<PayoutRow | undefined> {
    const key = ownerKey(owner);
    const today = now.toISOString().slice(0, 10);
    const { schedule } = await this.deps.terms.get(this.deps.db, owner);
    const assembly = await this.assemblyOf(this.deps.db, key, currency);
    // Under the lock (payItemized), the day's scheduled payout is the truth the memo only caches: another
    // process (or an earlier round whose memo was lost) may have made it.
    const paidToday = await this.deps.db
      .selectFrom('payouts')
      .select('id')
      .where('owner', '=', key)
      .where('currency', '=', currency)
      .where('scheduled_for', '=', today)
      .executeTakeFirst();
    const payout =
      assembly || (!paidToday && paysOn(schedule, now))
        ? await this.payItemized(owner, currency, {
            minimum: minimumOf(schedule, currency),
            scheduledFor: assembly ? assembly.scheduled_for : today,
          })
        : undefined;
    const look = {
      paid: paidToday !== undefined || (payout !== undefined && payout.scheduled_for === today),
      seen,
      looked_at: now,
    };
    await this.deps.db
      .insertInto('payout_run_days')
      .values({ owner: key, currency, day: today, ...look })
      .onConflict((oc) => oc.columns(['owner', 'currency', 'day']).doUpdateSet(look))
      .execute();
    return payout;
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

  /**
   * Pays every available balance transaction no payout has paid yet, when they come to the minimum. Up to
   * PAYOUT_BATCH of them in one transaction, as before; a larger backlog in batches of that many, each its
   * own transaction under the tenant's lock: the first records the payout being made (payout_assemblies)
   * with the time up to which it pays, each marks its items with the payout's id, and the last writes the
   * payout and moves its money, the sum of the items marked. Killed between batches, the next call goes on
   * from the last one committed: no item is paid twice, none is left out.
   */
  private async payItemized(
    owner: Owner,
    currency: string,
    options: { minimum: bigint; scheduledFor: string | null },
  ): Promise<PayoutRow | undefined> {
    const key = ownerKey(owner);
    for (;;) {
      const step = await this.deps.transact(async (tx) => {
        await this.lockBalance(tx, owner, currency);
        let assembly = await this.assemblyOf(tx, key, currency);
        if (!assembly) {
          if (options.scheduledFor) {
            const paid = await tx
              .selectFrom('payouts')
              .select('id')
              .where('owner', '=', key)
              .where('currency', '=', currency)
              .where('scheduled_for', '=', options.scheduledFor)
              .executeTakeFirst();
            if (paid) return { done: true as const, payout: undefined };
          }
          const cutAt = this.deps.clock.now();
          const { rows } = await sql<{ total: string | null }>`
            SELECT sum(net)::text AS total FROM balance_transactions
            WHERE owner = ${key} AND currency = ${currency} AND payout_id IS NULL AND available_at <= ${cutAt}`.execute(
            tx,
          );
          const total = BigInt(rows[0]?.total ?? 0);
          if (total < options.minimum || total <= 0n) return { done: true as const, payout: undefined };
          if (!(await this.bankAccountOf(tx, key))) {
            if (options.scheduledFor) return { done: true as const, payout: undefined };
            throw noBankAccount();
          }
          assembly = {
            payout_id: newId('payout', cutAt.getTime()),
            cut_at: cutAt,
            scheduled_for: options.scheduledFor,
            items: '0',
            total: '0',
          };
        }
        // The next batch: the oldest available items not yet paid, up to the cut.
        const { rows: moved } = await sql<{ items: string; total: string | null }>`
          WITH batch AS (
            UPDATE balance_transactions SET payout_id = ${assembly.payout_id}
            WHERE id IN (SELECT id FROM balance_transactions
                         WHERE owner = ${key} AND currency = ${currency} AND payout_id IS NULL
                           AND available_at <= ${assembly.cut_at}
                         ORDER BY available_at LIMIT ${PAYOUT_BATCH})
            RETURNING net
          ) SELECT count(*)::text AS items, sum(net)::text AS total FROM batch`.execute(tx);
        const items = BigInt(assembly.items) + BigInt(moved[0]?.items ?? 0);
        const total = BigInt(assembly.total) + BigInt(moved[0]?.total ?? 0);
        if (BigInt(moved[0]?.items ?? 0) === BigInt(PAYOUT_BATCH)) {
          // A full batch: there may be more. The payout being made is recorded (or its sums moved on).
          await tx
            .insertInto('payout_assemblies')
            .values({
              ...assembly,
              owner: key,
              currency,
              items: items.toString(),
              total: total.toString(),
              started_at: this.deps.clock.now(),
            })
            .onConflict((oc) =>
              oc.column('payout_id').doUpdateSet({ items: items.toString(), total: total.toString() }),
            )
            .execute();
          return { done: false as const };
        }
        await tx.deleteFrom('payout_assemblies').where('payout_id', '=', assembly.payout_id).execute();
        if (total <= 0n) {
          // What became available while it was made took the sum to nothing (refunds): the items go back.
          await sql`UPDATE balance_transactions SET payout_id = NULL WHERE payout_id = ${assembly.payout_id}`.execute(
            tx,
          );
          return { done: true as const, payout: undefined };
        }
        const payout = await this.makePayout(tx, owner, currency, total, {
          itemized: true,
          scheduledFor: assembly.scheduled_for,
          id: assembly.payout_id,
        });
        return { done: true as const, payout };
      });
      if (step.done) return step.payout;
    }
  }

  private bankAccountOf(db: Executor, key: string) {
    return db.selectFrom('bank_accounts').selectAll().where('owner', '=', key).executeTakeFirst();
  }

  /** The payout of this balance being made in batches, if one is. */
  private assemblyOf(db: Executor, key: string, currency: string) {
    return db
      .selectFrom('payout_assemblies')
      .select(['payout_id', 'cut_at', 'scheduled_for', 'items', 'total'])
      .where('owner', '=', key)
      .where('currency', '=', currency)
      .executeTakeFirst();
  }

  private async makePayout(
    tx: Tx,
    owner: Owner,
    currency: string,
    amount: bigint,
    options: { itemized: boolean; scheduledFor: string | null; id?: string },
  ): Promise<PayoutRow> {
    const account = await this.bankAccountOf(tx, ownerKey(owner));
    if (!account) throw noBankAccount();
    const now = this.deps.clock.now();
    const id = options.id ?? newId('payout', now.getTime());
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

const noBankAccount = () =>
  new DomainError('invalid_state', 'set a bank account before paying out', {
    details: { reason: 'no_bank_account' },
  });

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
