// Payouts (docs/payouts.md, Payouts): the scheduled run and payouts on demand. A payout takes money out of
// the tenant's balance into the platform's payouts-in-transit account and records which balance
// transactions it pays; the bank rail carries it on (payout-lifecycle.ts). Each payout is made in one
// database transaction, under a lock per tenant and currency, so two runs never pay the same money.
import { sql } from 'kysely';
import type { Clock } from '../clock/clock.ts';
import { daysSince } from '../clock/clock.ts';
import type { BusinessProfiles } from '../compliance/business-profiles.ts';
import type { ComplianceHolds } from '../compliance/compliance-holds.ts';
import type { Db, Executor, Tx } from '../db/database.ts';
import type { Transact } from '../db/transact.ts';
import { DomainError } from '../errors/domain-error.ts';
import type { Outbox } from '../events/outbox.ts';
import { newId } from '../ids.ts';
import type { Ledger } from '../ledger/ledger.ts';
import { type ClientAmount, formatAmountIn } from '../money/amount.ts';
import { findAsset } from '../money/assets.ts';
import type { Risk } from '../risk/risk.ts';
import { actingRule } from '../risk/risk-engine.ts';
import { balanceAccounts, payoutAccounts } from './balance-accounts.ts';
import { balanceOf, balanceTransaction, insertBalanceTransactions } from './balance-transactions.ts';
import { decideMoneyOut, moneyOutTenant, orRefused, type RefusedPayout } from './money-out-risk.ts';
import { publishPayoutEvent } from './payout-events.ts';
import { type RunFailure, runPayouts } from './payout-run.ts';
import { type PayoutRow, payoutView } from './payout-view.ts';
import { type Owner, ownerKey, type TermsStore } from './terms.ts';

export interface PayoutsDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  ledger: Ledger;
  outbox: Outbox;
  terms: TermsStore;
  /** The rules at the `payout` decision point (money-out-risk.ts) */
  risk: Risk;
  /** A tenant a compliance case holds: its payouts are made held (docs/compliance.md, Holds) */
  holds: ComplianceHolds;
  /** With TESSERA_ONBOARDING_REQUIRED=payouts, none leaves a tenant not approved (docs/compliance.md, Onboarding) */
  profiles: Pick<BusinessProfiles, 'payoutsAllowed'>;
  /** A tenant's step of the run threw: logged and counted (tessera_payout_run_failures_total) by the caller */
  onRunFailure?: (failure: RunFailure, error: unknown) => void;
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
  async payNow(owner: Owner, input: { currency: string; amount?: ClientAmount }): Promise<PayoutRow> {
    const asset = findAsset(input.currency);
    if (!asset)
      throw new DomainError('validation_failed', 'currency is not a known currency', { field: 'currency' });
    if (input.amount === undefined) {
      const payout = orRefused(
        await this.payItemized(owner, asset.code, { minimum: 1n, scheduledFor: null }),
      );
      if (!payout) {
        throw new DomainError('validation_failed', 'there is nothing available to pay out', {
          field: 'amount',
          details: { available: await this.availableText(this.deps.db, owner, asset.code) },
        });
      }
      return payout;
    }
    const amount = input.amount.in(asset);
    return this.deps
      .transact(async (tx) => {
        await this.lockBalance(tx, owner, asset.code);
        await this.refuseUnlessOnboarded(tx, owner);
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
      })
      .then((made) => orRefused<PayoutRow>(made));
  }

  /** The scheduled run (payout-run.ts): every tenant due today, each its own step. */
  runDue(options: { explicit?: boolean } = {}): Promise<{ made: PayoutRow[]; failed: RunFailure[] }> {
    return runPayouts(this.deps, this, options);
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
  async payItemized(
    owner: Owner,
    currency: string,
    options: { minimum: bigint; scheduledFor: string | null },
  ): Promise<PayoutRow | RefusedPayout | undefined> {
    const key = ownerKey(owner);
    /** The payout this call has batches of: another runner (the sweep, another process) may finish it */
    let ours: string | undefined;
    for (;;) {
      const step = await this.deps.transact(async (tx) => {
        await this.lockBalance(tx, owner, currency);
        let assembly = await this.assemblyOf(tx, key, currency);
        if (!assembly && ours) {
          const finished = await tx
            .selectFrom('payouts')
            .selectAll()
            .where('id', '=', ours)
            .executeTakeFirst();
          return { done: true as const, payout: finished };
        }
        if (!assembly) {
          // Not approved yet: a scheduled payout waits (the balance stays), one asked for is refused
          if (!(await this.onboarded(tx, owner))) {
            if (options.scheduledFor) return { done: true as const, payout: undefined };
            throw onboardingRequired();
          }
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
          // No bank account: a scheduled payout waits without summing the balance (a store that never
          // set one may hold a year unpaid); one asked for is refused, as before, once there is money.
          const hasAccount = (await this.bankAccountOf(tx, key)) !== undefined;
          if (!hasAccount && options.scheduledFor) return { done: true as const, payout: undefined };
          const cutAt = this.deps.clock.now();
          const { rows } = await sql<{ total: string | null }>`
            SELECT sum(net)::text AS total FROM balance_transactions
            WHERE owner = ${key} AND currency = ${currency} AND payout_id IS NULL AND available_at <= ${cutAt}`.execute(
            tx,
          );
          const total = BigInt(rows[0]?.total ?? 0);
          if (total < options.minimum || total <= 0n) return { done: true as const, payout: undefined };
          if (!hasAccount) throw noBankAccount();
          assembly = {
            payout_id: newId('payout', cutAt.getTime()),
            cut_at: cutAt,
            scheduled_for: options.scheduledFor,
            items: '0',
            total: '0',
          };
        }
        ours = assembly.payout_id;
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

  private async onboarded(tx: Tx, owner: Owner): Promise<boolean> {
    const tenant = await moneyOutTenant(tx, owner, this.deps.clock.now());
    return this.deps.profiles.payoutsAllowed(tx, tenant.scope);
  }

  private async refuseUnlessOnboarded(tx: Tx, owner: Owner): Promise<void> {
    if (!(await this.onboarded(tx, owner))) throw onboardingRequired();
  }

  private bankAccountOf(db: Executor, key: string) {
    return db.selectFrom('bank_accounts').selectAll().where('owner', '=', key).executeTakeFirst();
  }

  /** The payout of this balance being made in batches, if one is. */
  assemblyOf(db: Executor, key: string, currency: string) {
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
  ): Promise<PayoutRow | RefusedPayout> {
    const account = await this.bankAccountOf(tx, ownerKey(owner));
    if (!account) throw noBankAccount();
    const now = this.deps.clock.now();
    const id = options.id ?? newId('payout', now.getTime());
    const tenant = await moneyOutTenant(tx, owner, now);
    const verdict = await decideMoneyOut(this.deps.risk, tx, {
      point: 'payout',
      tenant,
      objectId: id,
      at: now,
      amount,
      currency,
      attributes: {
        amount,
        currency,
        payout: { itemized: options.itemized, scheduled: options.scheduledFor !== null },
        bank_account: {
          country: account.country,
          holder_name: account.holder_name,
          age_days: daysSince(account.updated_at, now),
        },
      },
    });
    if (verdict.action === 'block') {
      // Not made: the items it would have paid are available again (the next day's run looks again).
      await sql`UPDATE balance_transactions SET payout_id = NULL WHERE payout_id = ${id}`.execute(tx);
      return { refused: true, id };
    }
    // Held by a case about the site or store, or about its merchant
    let heldSubject: string | undefined;
    for (const subject of new Set([ownerKey(owner), tenant.scope])) {
      if (!heldSubject && (await this.deps.holds.caseHolding(tx, subject))) heldSubject = subject;
    }
    const held = heldSubject !== undefined || verdict.action === 'hold';
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
        status: held ? 'held' : 'pending',
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
    if (heldSubject) {
      await this.deps.holds.add(tx, heldSubject, { kind: 'payout', id, previousStatus: 'pending' });
    }
    if (verdict.action === 'hold') {
      await this.deps.risk.reviews.open(tx, {
        tenant: tenant.scope,
        point: 'payout',
        objectId: id,
        ...actingRule(verdict),
      });
    }
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

const onboardingRequired = () =>
  new DomainError(
    'invalid_state',
    'no payout leaves until the business profile is approved (docs/compliance.md, Onboarding)',
    { details: { reason: 'onboarding_required' } },
  );
