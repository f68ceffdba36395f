// Card transactions of the payments API (spec, Transactions): a charge asks the card network, and its
// answer decides the record: approved (captured at once for authAndCapture), declined, waiting on a 3D
// Secure challenge, or unknown until reconciliation. Captures credit the site's ledger balance (split
// across sites when the order says so); refunds and credits debit it. Each step is one database
// transaction with its ledger postings, and the order module hears of every change (status, IPN).

import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import type { CapabilityTokens } from '../../platform/crypto/capability-tokens.ts';
import type { Db, Tx } from '../../platform/db/database.ts';
import type { StatementBatch } from '../../platform/db/statement-batch.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { uuidv7 } from '../../platform/ids.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import type { ClientAmount } from '../../platform/money/amount.ts';
import {
  insertBalanceTransactions,
  stageBalanceTransactions,
} from '../../platform/payouts/balance-transactions.ts';
import type { TermsStore } from '../../platform/payouts/terms.ts';
import type {
  AuthorizationAnswer,
  CardNetwork,
  ChallengeRedirect,
  NetworkNews,
} from '../../rails/card-network/port.ts';
import type { ChargeRisk } from '../risk/charge-risk.ts';
import type { MerchantScope } from '../sites.ts';
import { Chargebacks } from './chargebacks.ts';
import { FAILURES, type FailureReason } from './decline-codes.ts';
import { Refunds } from './refunds.ts';
import { SiteMoney } from './site-money.ts';
import { TransactionReads } from './transaction-reads.ts';
import {
  assetOf,
  authorizationRequest,
  type ChargeDecided,
  type ChargeRequest,
  insertTransaction,
  NETWORK_OWNER,
  parseSplits,
  startedTransaction,
  type TransactionRow,
} from './transaction-row.ts';
import { TransactionWrites } from './transaction-writes.ts';

export {
  type ChargeDecided,
  type ChargeRequest,
  NETWORK_OWNER,
  parseSplits,
  type SplitEntry,
  type TransactionDetail,
  type TransactionFilter,
  type TransactionRow,
} from './transaction-row.ts';

export interface TransactionsDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  ledger: Ledger;
  network: CardNetwork;
  publicUrl: string;
  /** How long an authorization may wait for its capture before it is released */
  authorizationSeconds: number;
  capabilities: CapabilityTokens;
  terms: TermsStore;
  /** The payments.charge decision point: every charge is decided by the risk rules first */
  risk: ChargeRisk;
}

export class PaymentTransactionsService {
  /**
   * Set by the orders module: runs after every change of a transaction, in its database transaction;
   * `captured` marks the one change that captures a deposit (its order's invoice goes out then).
   */
  onChange: (tx: Tx, transaction: TransactionRow, change?: { captured: boolean }) => Promise<void> =
    async () => {};

  private readonly money: SiteMoney;
  private readonly writes: TransactionWrites;
  private readonly refunds: Refunds;
  private readonly chargebacks: Chargebacks;

  /** Set by the disputes module: the network charged a captured deposit back (the rail's chargeback news). */
  onChargeback: (
    tx: Tx,
    deposit: TransactionRow,
    news: Extract<NetworkNews, { kind: 'chargeback' }>,
  ) => Promise<void> = async () => {};
  private readonly reads: TransactionReads;

  constructor(private readonly deps: TransactionsDeps) {
    this.money = new SiteMoney({ ledger: deps.ledger, terms: deps.terms, clock: deps.clock, parseSplits });
    this.writes = new TransactionWrites(deps, (tx, t, change) => this.onChange(tx, t, change));
    this.refunds = new Refunds({ ...deps, money: this.money, writes: this.writes });
    this.chargebacks = new Chargebacks({ ...deps, money: this.money, writes: this.writes });
    this.reads = new TransactionReads(deps);
  }

  // Refunds and voids (refunds.ts)
  refund(...args: Parameters<Refunds['refund']>) {
    return this.refunds.refund(...args);
  }
  voidAuthorization(...args: Parameters<Refunds['voidAuthorization']>) {
    return this.refunds.voidAuthorization(...args);
  }

  // Chargebacks and representments (chargebacks.ts), for the disputes module
  chargeBack(...args: Parameters<Chargebacks['chargeBack']>) {
    return this.chargebacks.chargeBack(...args);
  }
  represent(...args: Parameters<Chargebacks['represent']>) {
    return this.chargebacks.represent(...args);
  }
  /** A transaction locked for a step: of the merchant's sites when a scope is given, else any (the sandbox). */
  async lock(tx: Tx, id: number, merchant?: MerchantScope): Promise<TransactionRow> {
    if (merchant) return this.writes.lockOwned(tx, merchant, id);
    const t = await tx
      .selectFrom('payments_transactions')
      .selectAll()
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (!t) throw notFound('transaction');
    return t;
  }

  // Reads (transaction-reads.ts)
  get(...args: Parameters<TransactionReads['get']>) {
    return this.reads.get(...args);
  }
  list(...args: Parameters<TransactionReads['list']>) {
    return this.reads.list(...args);
  }
  returnLeg(...args: Parameters<TransactionReads['returnLeg']>) {
    return this.reads.returnLeg(...args);
  }

  /** Asks the network and records its answer; a 3D Secure challenge comes back as the redirect. */
  async charge(
    tx: Tx,
    r: ChargeRequest,
  ): Promise<{ transaction: TransactionRow; redirect?: ChallengeRedirect }> {
    const now = this.deps.clock.now();
    const { risk } = this.deps;
    const signal = risk.signal(r, r.buyer ?? (await risk.buyer(tx, r.order.customer_id)));
    const verdict = await risk.decide(tx, signal);
    // Held for review: authorized only, captured when a person approves (docs/risk.md, Reviews).
    if (verdict.action === 'review' && r.type === 'deposit') r = { ...r, mode: 'auth' };
    // Challenged: 3-D Secure required of the buyer even where the request did not ask for it.
    if (verdict.action === 'challenge') r = { ...r, challengeRequested: true };
    const inserted = await tx
      .insertInto('payments_transactions')
      // The card network's reference for this payment, unique and known before the insert.
      .values(startedTransaction(r, `${NETWORK_OWNER}:${uuidv7()}`, now))
      .returningAll()
      .executeTakeFirstOrThrow();
    const t = inserted;
    if (verdict.action === 'block') {
      // Refused by a rule: declined before the network (or the site's balance) is asked.
      const blocked = await this.fail(tx, t, 'risk_blocked', false);
      await risk.record(tx, signal, t.id, true, verdict);
      return { transaction: blocked };
    }

    if (r.type === 'credit') {
      // The site pays for the credit: its balance must cover it before the network is asked.
      const paid = await this.money.credit(tx, t, r.amount);
      if (!paid) {
        const unpaid = await this.fail(tx, t, 'merchant_balance_insufficient', false);
        await risk.record(tx, signal, t.id, true, verdict);
        return { transaction: unpaid };
      }
    }
    const answer = await this.deps.network.authorize(tx, {
      ...authorizationRequest(r, this.writes.reference(t)),
      returnUrl: `${this.deps.publicUrl}/checkout/3ds/return/${this.deps.capabilities.issue('3ds-return', String(t.id))}`,
    });
    const transaction = await this.apply(tx, t, answer, r.order.split_schema);
    await risk.record(tx, signal, t.id, answer.outcome === 'declined', verdict);
    if (
      verdict.action === 'review' &&
      (transaction.status === 'in-progress' || transaction.status === '3d-pending')
    ) {
      await risk.openReview(tx, signal, transaction, verdict);
    }
    return answer.outcome === 'challenge' ? { transaction, redirect: answer.redirect } : { transaction };
  }

  /**
   * Asks the network for an answer it can give at once (approved or declined, see
   * CardNetwork.authorizeAtOnce), its record added to the order's batch. Undefined when the answer needs
   * the network's state (a challenge, a lost answer, an on-us card): nothing was added, charge() instead.
   */
  authorizeAtOnce(batch: StatementBatch, r: ChargeRequest): ChargeDecided | undefined {
    if (r.type !== 'deposit' || !this.deps.network.authorizeAtOnce) return undefined;
    const reference = `${NETWORK_OWNER}:${uuidv7()}`;
    const answer = this.deps.network.authorizeAtOnce(batch, authorizationRequest(r, reference));
    if (answer?.outcome !== 'approved' && answer?.outcome !== 'declined') return undefined;
    // A sale is captured with its approval (one network message); anything else needs the network's state.
    if (answer.outcome === 'approved' && answer.captured !== (r.mode === 'authAndCapture')) {
      throw new Error('the network answered a charge at once without capturing it as asked');
    }
    return { answer, reference };
  }

  /**
   * The charge the network answered at once, added to its order's batch: the transaction with its final
   * status and, for a capture, the ledger posting. Answers the row as it will be written.
   */
  async stageCharge(
    batch: StatementBatch,
    r: ChargeRequest,
    decided: ChargeDecided,
    transactionId: number,
  ): Promise<TransactionRow> {
    const { answer, reference } = decided;
    const now = this.deps.clock.now();
    const isApproved = answer.outcome === 'approved';
    const isCapture = isApproved && r.mode === 'authAndCapture';
    const failure = answer.outcome === 'declined' ? FAILURES[answer.reason] : undefined;
    const t: TransactionRow = {
      ...startedTransaction(r, reference, now),
      id: transactionId,
      status: !isApproved ? 'complete-failed' : isCapture ? 'complete-ok' : 'in-progress',
      captured_amount: (isCapture ? r.amount : 0n).toString(),
      refunded_amount: '0',
      charged_back_amount: '0',
      is_3d: answer.outcome === 'approved' && answer.threeDS === 'frictionless',
      error_code: failure?.code ?? null,
      error_message: failure?.message ?? null,
      decline_reason: answer.outcome === 'declined' ? answer.reason : null,
      auth_expires_at: isApproved && !isCapture ? addSeconds(now, this.deps.authorizationSeconds) : null,
    };
    batch.add(insertTransaction(t));
    if (isCapture) {
      const { legs, rows } = await this.money.capture(this.deps.db, t, r.amount, r.order.split_schema);
      this.deps.ledger.stageTransfer(batch, {
        operationId: `payments-capture:${t.id}`,
        legs,
      });
      stageBalanceTransactions(batch, rows);
    }
    return t;
  }

  /** News from the network: a challenge was decided, or a lost answer reconciled. */
  async onNetwork(tx: Tx, news: NetworkNews): Promise<void> {
    const t = await tx
      .selectFrom('payments_transactions')
      .selectAll()
      .where('network_reference', '=', news.reference)
      .forUpdate()
      .executeTakeFirst();
    if (!t) return;
    if (news.kind === 'chargeback') {
      await this.onChargeback(tx, t, news);
      return;
    }
    if (t.status !== '3d-pending' && t.status !== 'start') return;
    if (news.outcome === 'approved') await this.approve(tx, t, news.captured ?? false);
    else await this.fail(tx, t, news.reason ?? 'generic');
  }

  /** PUT /transaction/{id}: captures all or part of an authorization; the rest is released. */
  async capture(merchant: MerchantScope, id: number, given: ClientAmount): Promise<TransactionRow> {
    return this.deps.transact(async (tx) => {
      const t = await this.writes.lockOwned(tx, merchant, id);
      if (t.type !== 'deposit' || t.status !== 'in-progress') {
        throw new DomainError(
          'invalid_state',
          `only an authorized, uncaptured transaction can be captured (it is ${t.status})`,
          {
            details: { transactionStatus: t.status },
          },
        );
      }
      const amount = given.in(assetOf(t.currency));
      if (amount > BigInt(t.amount)) {
        throw new DomainError('validation_failed', 'the capture cannot exceed the authorized amount', {
          field: 'amount',
        });
      }
      await this.deps.network.capture(tx, this.writes.reference(t), amount);
      return this.captureIn(tx, t, amount);
    });
  }

  /**
   * A review's outcome (docs/risk.md, Reviews), in its transaction: approved, the authorization is
   * captured whole; refused or expired, it is voided. An authorization no longer held is left as it is.
   */
  async reviewed(tx: Tx, id: number, approved: boolean): Promise<void> {
    const t = await this.lock(tx, id);
    if (t.status !== 'in-progress') return;
    if (!approved) {
      await this.refunds.voidAuthorization(tx, t, 'risk-review-refused');
      return;
    }
    const amount = BigInt(t.amount);
    await this.deps.network.capture(tx, this.writes.reference(t), amount);
    await this.captureIn(tx, t, amount);
  }

  /** Sweep: authorizations nobody captured in time are released (void-ok). */
  async expireAuthorizations(): Promise<number> {
    const due = await this.deps.db
      .selectFrom('payments_transactions')
      .select('id')
      .where('status', '=', 'in-progress')
      .where('auth_expires_at', '<=', this.deps.clock.now())
      .limit(200)
      .execute();
    return transactEach(this.deps.transact, due, async (tx, row) => {
      const t = await tx
        .selectFrom('payments_transactions')
        .selectAll()
        .where('id', '=', row.id)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (t?.status !== 'in-progress') return false;
      await this.refunds.voidAuthorization(tx, t, 'authorization-expired');
      return true;
    });
  }

  /** The site's whole ledger balance in a currency (sandbox and operator views). */
  siteBalance(siteId: number, currency: string): Promise<bigint> {
    return this.money.siteBalance(this.deps.db, siteId, currency);
  }

  // Internals ------------------------------------------------------------------------------------------

  private async apply(
    tx: Tx,
    t: TransactionRow,
    answer: AuthorizationAnswer,
    splitSchema: string | null,
  ): Promise<TransactionRow> {
    switch (answer.outcome) {
      case 'approved':
        return this.approve(
          tx,
          { ...t, is_3d: answer.threeDS === 'frictionless' },
          answer.captured,
          splitSchema,
        );
      case 'declined':
        return this.fail(tx, t, answer.reason);
      case 'challenge': {
        const pending = await this.writes.setStatus(tx, t, '3d-pending', { is_3d: true });
        await this.onChange(tx, pending);
        return pending;
      }
      case 'unknown':
        // The answer was lost: the record stays `start` until the network's reconciliation tells.
        await this.onChange(tx, t);
        return t;
    }
  }

  /** An approval: captured now for authAndCapture (unless the network already did, as a sale), else held. */
  private async approve(
    tx: Tx,
    t: TransactionRow,
    isCaptured: boolean,
    splitSchema?: string | null,
  ): Promise<TransactionRow> {
    const amount = BigInt(t.amount);
    if (t.type !== 'credit' && t.mode === 'authAndCapture') {
      if (!isCaptured) await this.deps.network.capture(tx, this.writes.reference(t), amount);
      return this.captureIn(tx, t, amount, splitSchema);
    }
    const approved =
      t.type === 'credit'
        ? await this.writes.setStatus(tx, t, 'complete-ok', { is_3d: t.is_3d })
        : await this.writes.setStatus(tx, t, 'in-progress', {
            is_3d: t.is_3d,
            auth_expires_at: addSeconds(this.deps.clock.now(), this.deps.authorizationSeconds),
          });
    await this.onChange(tx, approved);
    return approved;
  }

  /** Fails the charge; a credit whose money the site already paid (the network refused it) gets it back. */
  private async fail(tx: Tx, t: TransactionRow, reason: FailureReason, creditTaken = t.type === 'credit') {
    if (creditTaken) {
      await this.money.creditReturned(tx, t);
    }
    const failure = FAILURES[reason];
    const failed = await this.writes.setStatus(tx, t, 'complete-failed', {
      decline_reason: reason,
      error_code: failure.code,
      error_message: failure.message,
    });
    await this.onChange(tx, failed);
    return failed;
  }

  /**
   * Captures: the record and its IPN first, the ledger credit to the site last, so the site's balance
   * shard is locked only for the commit.
   */
  private async captureIn(
    tx: Tx,
    t: TransactionRow,
    amount: bigint,
    splitSchema?: string | null,
  ): Promise<TransactionRow> {
    const { legs, rows } = await this.money.capture(tx, t, amount, splitSchema);
    const captured = await this.writes.setStatus(tx, t, 'complete-ok', {
      is_3d: t.is_3d,
      captured_amount: amount,
      auth_expires_at: null,
    });
    await this.onChange(tx, captured, { captured: true });
    await this.deps.ledger.transfer(tx, {
      operationId: `payments-capture:${t.id}`,
      legs,
    });
    await insertBalanceTransactions(tx, rows);
    return captured;
  }
}
