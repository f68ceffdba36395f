// What a card transaction does to the sites' money (docs/payouts.md): the ledger legs between the card
// network's receivable, the sites' balances and the platform's fee revenue, and the balance transactions
// that record each movement for the site. Captures credit the site net of its fee (split across sites
// when the order says so), refunds and credits debit it; the callers post both in the business step's
// own database transaction (or statement).
import { sql } from 'kysely';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Executor, Tx } from '../../platform/db/database.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import type { Ledger, Leg } from '../../platform/ledger/ledger.ts';
import { balanceAccounts, revenueAccount } from '../../platform/payouts/balance-accounts.ts';
import {
  type BalanceTransactionRow,
  balanceTransaction,
  captureTransactions,
  insertBalanceTransactions,
} from '../../platform/payouts/balance-transactions.ts';
import { feeFor, type TermsStore } from '../../platform/payouts/terms.ts';
import type { SplitEntry, TransactionRow } from './transaction-row.ts';

const RECEIVABLE_PURPOSES = Array.from({ length: 16 }, (_, shard) => `receivable:${shard}`);

type Debit = { shards: readonly string[]; amount: bigint };

export class SiteMoney {
  constructor(
    private readonly deps: {
      ledger: Ledger;
      terms: TermsStore;
      clock: Clock;
      parseSplits: (schema: string) => SplitEntry[];
    },
  ) {}

  /**
   * A capture: the network owes the amount; each site is owed its share less its part of the fee, which
   * the platform earns. The fee follows the order's site's schedule (per card brand where it says so)
   * and is shared among split sites in proportion, the rounding remainder on the order's site.
   */
  async capture(
    db: Executor,
    t: TransactionRow,
    amount: bigint,
    knownSplitSchema?: string | null,
  ): Promise<{ legs: Leg[]; rows: BalanceTransactionRow[] }> {
    const shares = await this.sharesOf(db, t, amount, knownSplitSchema);
    const { fees } = await this.deps.terms.get(db, { kind: 'site', siteId: t.site_id });
    const fee = feeFor(fees, amount, t.currency, t.card_brand);
    const feeShares = proportional(shares, amount, fee, t.site_id);
    const now = this.deps.clock.now();
    const legs: Leg[] = [{ accountId: await this.receivable(db, t.currency, t.id), amount: -amount }];
    const rows: BalanceTransactionRow[] = [];
    for (const [i, share] of shares.entries()) {
      const shareFee = feeShares[i]?.amount ?? 0n;
      legs.push({
        accountId: await this.siteShard(db, share.siteId, t.currency, t.id),
        amount: share.amount - shareFee,
      });
      const { schedule } = await this.deps.terms.get(db, { kind: 'site', siteId: share.siteId });
      rows.push(
        ...captureTransactions(
          {
            owner: { kind: 'site', siteId: share.siteId },
            currency: t.currency,
            source: { type: 'transaction', id: String(t.id) },
            gross: share.amount,
            fee: shareFee,
            at: now,
          },
          schedule,
        ),
      );
    }
    if (fee > 0n)
      legs.push({ accountId: await revenueAccount(this.deps.ledger, db, t.currency, t.id), amount: fee });
    return { legs, rows };
  }

  /**
   * A refund is taken back from the sites that were paid, each in proportion to what it received; the
   * fee stays earned unless the site's schedule gives it back in the same proportion. Answers false,
   * having written nothing, when the sites' whole balances (pending included) fall short.
   */
  async refund(tx: Tx, t: TransactionRow, refund: TransactionRow, amount: bigint): Promise<boolean> {
    const captured = BigInt(t.captured_amount);
    const shares = proportional(await this.sharesOf(tx, t, captured), captured, amount, t.site_id);
    const { fees } = await this.deps.terms.get(tx, { kind: 'site', siteId: t.site_id });
    const feesBack = fees.refundFees
      ? await this.feesBack(tx, t, captured, amount)
      : new Map<number, bigint>();
    const debits: Debit[] = [];
    const credits: Leg[] = [{ accountId: await this.receivable(tx, t.currency, refund.id), amount }];
    const rows: BalanceTransactionRow[] = [];
    const now = this.deps.clock.now();
    for (const share of shares) {
      if (share.amount <= 0n) continue;
      const back = feesBack.get(share.siteId) ?? 0n;
      debits.push({
        shards: await this.siteShards(tx, share.siteId, t.currency),
        amount: share.amount - back,
      });
      rows.push(
        balanceTransaction({
          owner: { kind: 'site', siteId: share.siteId },
          currency: t.currency,
          type: 'refund',
          source: { type: 'transaction', id: String(refund.id) },
          gross: -share.amount,
          fee: -back,
          at: now,
        }),
      );
    }
    const totalBack = [...feesBack.values()].reduce((sum, back) => sum + back, 0n);
    if (totalBack > 0n) {
      credits.push({
        accountId: await revenueAccount(this.deps.ledger, tx, t.currency, refund.id),
        amount: -totalBack,
      });
    }
    const moved = await this.tryTransfer(tx, {
      operationId: `payments-refund:${refund.id}`,
      debits,
      credits,
    });
    if (moved) await insertBalanceTransactions(tx, rows);
    return moved;
  }

  /**
   * A chargeback: the network takes `amount` back and the platform charges the dispute `fee`. The site's
   * balance pays what it can, the amount first (it never goes below zero): the part of the amount it
   * cannot cover is the platform's claim on the merchant (`uncovered`, held in the platform's chargeback
   * account until a won dispute repays it); the part of the fee it cannot cover is not charged. Answers
   * both, and the fee charged.
   */
  async chargeback(
    tx: Tx,
    t: TransactionRow,
    chargeback: TransactionRow,
    amount: bigint,
    fee: bigint,
  ): Promise<{ uncovered: bigint; feeCharged: bigint }> {
    const shards = await this.siteShards(tx, t.site_id, t.currency);
    const balance = await this.siteBalance(tx, t.site_id, t.currency);
    const can = (want: bigint, have: bigint) => (have <= 0n ? 0n : have < want ? have : want);
    const amountTaken = can(amount, balance);
    const feeCharged = can(fee, balance - amountTaken);
    const uncovered = amount - amountTaken;
    const credits: Leg[] = [{ accountId: await this.receivable(tx, t.currency, chargeback.id), amount }];
    if (feeCharged > 0n) {
      credits.push({
        accountId: await revenueAccount(this.deps.ledger, tx, t.currency, chargeback.id),
        amount: feeCharged,
      });
    }
    if (uncovered > 0n)
      credits.push({ accountId: await this.uncoveredAccount(tx, t.currency), amount: -uncovered });
    const taken = amountTaken + feeCharged;
    // Locks the shards before it reads them again: a concurrent debit refuses this step, which is retried.
    await this.deps.ledger.transferFromShards(tx, {
      operationId: `payments-chargeback:${chargeback.id}`,
      debits: taken > 0n ? [{ shards, amount: taken }] : [],
      credits,
    });
    if (taken > 0n) {
      await insertBalanceTransactions(tx, [
        balanceTransaction({
          owner: { kind: 'site', siteId: t.site_id },
          currency: t.currency,
          type: 'chargeback',
          source: { type: 'transaction', id: String(chargeback.id) },
          gross: -amountTaken,
          fee: feeCharged,
          at: this.deps.clock.now(),
        }),
      ]);
    }
    return { uncovered, feeCharged };
  }

  /**
   * A won dispute: the network pays `amount` back. What the site's balance could not cover at the
   * chargeback (`uncovered`) is repaid to the platform first; the site is credited the rest.
   */
  async representment(
    tx: Tx,
    t: TransactionRow,
    representment: TransactionRow,
    amount: bigint,
    uncovered: bigint,
  ): Promise<void> {
    const repaid = uncovered < amount ? uncovered : amount;
    const toSite = amount - repaid;
    const legs: Leg[] = [
      { accountId: await this.receivable(tx, t.currency, representment.id), amount: -amount },
    ];
    if (repaid > 0n) legs.push({ accountId: await this.uncoveredAccount(tx, t.currency), amount: repaid });
    if (toSite > 0n) {
      legs.push({
        accountId: await this.siteShard(tx, t.site_id, t.currency, representment.id),
        amount: toSite,
      });
    }
    await this.deps.ledger.transfer(tx, { operationId: `payments-representment:${representment.id}`, legs });
    if (toSite > 0n) {
      await insertBalanceTransactions(tx, [
        balanceTransaction({
          owner: { kind: 'site', siteId: t.site_id },
          currency: t.currency,
          type: 'representment',
          source: { type: 'transaction', id: String(representment.id) },
          gross: toSite,
          at: this.deps.clock.now(),
        }),
      ]);
    }
  }

  /** The platform's claim on merchants for chargebacks their balances did not cover (unbounded). */
  private uncoveredAccount(db: Executor, currency: string): Promise<string> {
    return this.deps.ledger.systemAccount(db, {
      ownerType: 'payments_platform',
      ownerId: 'chargebacks',
      asset: currency,
      purpose: 'uncovered',
      isBounded: false,
    });
  }

  /** A credit (money to a card) is paid by the site before the network is asked; false when it cannot. */
  async credit(tx: Tx, t: TransactionRow, amount: bigint): Promise<boolean> {
    const moved = await this.tryTransfer(tx, {
      operationId: `payments-credit:${t.id}`,
      debits: [{ shards: await this.siteShards(tx, t.site_id, t.currency), amount }],
      credits: [{ accountId: await this.receivable(tx, t.currency, t.id), amount }],
    });
    if (moved) await insertBalanceTransactions(tx, [this.adjustment(t, -amount)]);
    return moved;
  }

  /** The network refused a credit: the site gets its money back. */
  async creditReturned(tx: Tx, t: TransactionRow): Promise<void> {
    const amount = BigInt(t.amount);
    await this.deps.ledger.transfer(tx, {
      operationId: `payments-credit-return:${t.id}`,
      legs: [
        { accountId: await this.receivable(tx, t.currency, t.id), amount: -amount },
        { accountId: await this.siteShard(tx, t.site_id, t.currency, t.id), amount },
      ],
    });
    await insertBalanceTransactions(tx, [this.adjustment(t, amount)]);
  }

  /** The site's whole ledger balance in a currency (sandbox and operator views). */
  async siteBalance(db: Executor, siteId: number, currency: string): Promise<bigint> {
    const accounts = await this.siteShards(db, siteId, currency);
    const { rows } = await sql<{ total: string | null }>`
      SELECT sum(posted - pending_debits)::text AS total FROM ledger_balances
      WHERE id = ANY(${accounts}::text[])`.execute(db);
    return BigInt(rows[0]?.total ?? 0);
  }

  private adjustment(t: TransactionRow, gross: bigint): BalanceTransactionRow {
    return balanceTransaction({
      owner: { kind: 'site', siteId: t.site_id },
      currency: t.currency,
      type: 'adjustment',
      source: { type: 'transaction', id: String(t.id) },
      gross,
      at: this.deps.clock.now(),
    });
  }

  /** What of each site's capture fee a refund of `amount` gives back: the same share, rounded down. */
  private async feesBack(
    tx: Tx,
    t: TransactionRow,
    captured: bigint,
    amount: bigint,
  ): Promise<Map<number, bigint>> {
    const rows = await tx
      .selectFrom('balance_transactions')
      .select(['owner', 'fee'])
      .where('source_type', '=', 'transaction')
      .where('source_id', '=', String(t.id))
      .where('type', '=', 'capture')
      .execute();
    return new Map(
      rows.map((row) => [Number(row.owner.slice('site:'.length)), (BigInt(row.fee) * amount) / captured]),
    );
  }

  /** What each site receives of a captured amount: the split sites their parts, the order's site the rest. */
  private async sharesOf(
    db: Executor,
    t: TransactionRow,
    amount: bigint,
    knownSplitSchema?: string | null,
  ): Promise<{ siteId: number; amount: bigint }[]> {
    const splitSchema =
      knownSplitSchema !== undefined
        ? knownSplitSchema
        : (
            await db
              .selectFrom('payments_orders')
              .select('split_schema')
              .where('id', '=', t.order_id)
              .executeTakeFirstOrThrow()
          ).split_schema;
    const splits = splitSchema ? this.deps.parseSplits(splitSchema) : [];
    const splitTotal = splits.reduce((sum, s) => sum + s.amount, 0n);
    if (splits.length > 0 && amount !== BigInt(t.amount)) {
      throw new DomainError('validation_failed', 'a split payment is captured in full', { field: 'amount' });
    }
    const rest = amount - splitTotal;
    return [
      ...(rest > 0n ? [{ siteId: t.site_id, amount: rest }] : []),
      ...splits.map((split) => ({ siteId: split.toSite, amount: split.amount })),
    ];
  }

  /** A debit of site balances that may find them too small: answers false, having written nothing. */
  private async tryTransfer(
    tx: Tx,
    move: { operationId: string; debits: Debit[]; credits: Leg[] },
  ): Promise<boolean> {
    try {
      await this.deps.ledger.transferFromShards(tx, move);
      return true;
    } catch (err) {
      if (err instanceof DomainError && err.details?.reason === 'insufficient_funds') return false;
      throw err;
    }
  }

  /**
   * A site's balance, split in shards: every capture of a busy site would otherwise queue on one row's
   * lock. Captures credit one shard, picked by transaction id; debits draw on all of them
   * (Ledger.transferFromShards); the balance is their sum.
   */
  private siteShards(db: Executor, siteId: number, currency: string): Promise<string[]> {
    return balanceAccounts(this.deps.ledger, db, { kind: 'site', siteId }, currency);
  }

  private async siteShard(db: Executor, siteId: number, currency: string, transactionId: number) {
    const shards = await this.siteShards(db, siteId, currency);
    return shards[transactionId % shards.length] as string;
  }

  /** What the card network owes the acquirer, split in shards so captures do not queue on one row. */
  async receivable(db: Executor, currency: string, transactionId: number): Promise<string> {
    const shards = await this.deps.ledger.systemAccounts(
      db,
      { ownerType: 'payments_network', ownerId: 'card-network', asset: currency, isBounded: false },
      RECEIVABLE_PURPOSES,
    );
    return shards[transactionId % shards.length] as string;
  }
}

/**
 * `part` of `whole` shared among the shares in proportion to their amounts (rounded down), the rounding
 * remainder on the main site's share (else the first).
 */
function proportional(
  shares: { siteId: number; amount: bigint }[],
  whole: bigint,
  part: bigint,
  mainSiteId: number,
): { siteId: number; amount: bigint }[] {
  if (whole === 0n) return shares.map((share) => ({ ...share, amount: 0n }));
  const taken = shares.map((share) => ({ ...share, amount: (share.amount * part) / whole }));
  const remainder = part - taken.reduce((sum, s) => sum + s.amount, 0n);
  const main = taken.find((s) => s.siteId === mainSiteId) ?? taken[0];
  if (main) main.amount += remainder;
  return taken;
}
