// Cardholder disputes (docs/issuing.md, Disputes; a Tessera extension): the partner disputes a cleared
// payment for its customer; the program credits the account provisionally (when configured); the card
// network decides (the sandbox route, or by itself on the sandbox clock); the credit is kept or taken back.
// Each step is one transaction: the dispute, the claim on the payment, the ledger move and the event.
import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import type { Db, Executor, Tx } from '../../platform/db/database.ts';
import type { IssuingDisputesTable } from '../../platform/db/schema.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import { isUuid } from '../../platform/ids.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import { type ClientAmount, formatAmountIn } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import { publishIssuingEvent } from '../events/publish-issuing-event.ts';
import type { TransactionsService } from '../transactions/transactions-service.ts';
import {
  assertDisputeStep,
  DISPUTE_REVIEW_DAYS,
  type DisputeReason,
  type IssuingDispute,
  sandboxOutcome,
} from './dispute.ts';

type DisputeRow = Selectable<IssuingDisputesTable>;

export interface DisputesDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  outbox: Outbox;
  ledger: Ledger;
  transactions: TransactionsService;
  /** Whether the program credits the cardholder while the network reviews (TESSERA_ISSUING_DISPUTE_PROVISIONAL_CREDIT) */
  provisionalCredit: boolean;
}

export class IssuingDisputesService {
  constructor(private readonly deps: DisputesDeps) {}

  /** The partner disputes `amount` of a cleared payment of its customer. */
  async open(
    partnerId: string,
    transactionId: string,
    input: { reason: DisputeReason; amount: ClientAmount; explanation?: string | undefined },
  ): Promise<IssuingDispute> {
    return this.deps.transact(async (tx) => {
      const payment = await this.deps.transactions.lockForDispute(tx, partnerId, transactionId);
      const asset = findAsset(payment.currency);
      if (!asset) throw new Error(`unknown currency ${payment.currency}`);
      const amount = input.amount.in(asset);
      if (!payment.isCardPayment || payment.disputable <= 0n) {
        throw new DomainError(
          'invalid_state',
          'nothing of this transaction is left to dispute: it is not a cleared card payment, or what was cleared is already refunded or disputed',
          {
            details: {
              disputable: formatAmountIn(payment.disputable > 0n ? payment.disputable : 0n, payment.currency),
            },
          },
        );
      }
      if (amount > payment.disputable) {
        throw new DomainError(
          'validation_failed',
          `a dispute is at most what is left of the payment to dispute (${formatAmountIn(payment.disputable, payment.currency)})`,
          { field: 'amount', details: { disputable: formatAmountIn(payment.disputable, payment.currency) } },
        );
      }
      const id = randomUUID();
      const now = this.deps.clock.now();
      const credit = this.deps.provisionalCredit ? amount : 0n;
      await tx
        .insertInto('issuing_disputes')
        .values({
          id,
          partner_id: payment.partnerId,
          customer_id: payment.customerId,
          transaction_id: payment.transactionId,
          account_id: payment.accountId,
          currency: payment.currency,
          amount: amount.toString(),
          reason: input.reason,
          explanation: input.explanation ?? null,
          status: 'under_review',
          provisional_credit: credit.toString(),
          decide_at: addSeconds(now, DISPUTE_REVIEW_DAYS * 86_400),
          created_at: now,
          updated_at: now,
        })
        .execute();
      await this.deps.transactions.addDisputed(tx, payment.transactionId, amount);
      if (credit > 0n) {
        await this.deps.ledger.transfer(tx, {
          operationId: `issuing-dispute-credit:${id}`,
          legs: [
            { accountId: await this.programAccount(tx, payment.currency), amount: -credit },
            { accountId: payment.ledgerAccountId, amount: credit },
          ],
          metadata: { disputeId: id, transactionId: payment.transactionId },
        });
      }
      const dispute = await this.find(tx, id);
      await this.event(tx, dispute, 'disputeCreated');
      return present(dispute);
    });
  }

  /** The network's decision (the sandbox route); a second decision is a 409. */
  async decide(disputeId: string, outcome: 'won' | 'lost'): Promise<IssuingDispute> {
    return this.deps.transact(async (tx) => {
      const dispute = await this.lock(tx, disputeId);
      if (!dispute) throw notFound('dispute');
      await this.decideIn(tx, dispute, outcome);
      return present(await this.find(tx, disputeId));
    });
  }

  /** Sweep: disputes whose review time is up are decided by the sandbox network (sandboxOutcome). */
  async decideDue(): Promise<number> {
    const due = await this.deps.db
      .selectFrom('issuing_disputes')
      .select('id')
      .where('status', '=', 'under_review')
      .where('decide_at', '<=', this.deps.clock.now())
      .orderBy('decide_at')
      .limit(200)
      .execute();
    return transactEach(this.deps.transact, due, async (tx, row) => {
      const dispute = await this.lock(tx, row.id, { skipLocked: true });
      if (dispute?.status !== 'under_review') return false;
      await this.decideIn(tx, dispute, sandboxOutcome(BigInt(dispute.amount)));
      return true;
    });
  }

  /** One dispute of the partner's; another partner's is a 404. */
  async get(partnerId: string, disputeId: string): Promise<IssuingDispute> {
    const row = isUuid(disputeId)
      ? await this.deps.db
          .selectFrom('issuing_disputes')
          .selectAll()
          .where('id', '=', disputeId)
          .executeTakeFirst()
      : undefined;
    if (!row || row.partner_id !== partnerId) throw notFound('dispute');
    return present(row);
  }

  /** The disputes of one of the partner's payments, oldest first. */
  async listForTransaction(partnerId: string, transactionId: string): Promise<IssuingDispute[]> {
    if (!isUuid(transactionId)) throw notFound('transaction');
    const owner = await this.deps.db
      .selectFrom('issuing_transactions')
      .select('partner_id')
      .where('id', '=', transactionId)
      .executeTakeFirst();
    if (owner?.partner_id !== partnerId) throw notFound('transaction');
    const rows = await this.deps.db
      .selectFrom('issuing_disputes')
      .selectAll()
      .where('transaction_id', '=', transactionId)
      .orderBy('seq')
      .execute();
    return rows.map(present);
  }

  // Internals ------------------------------------------------------------------------------------------

  /**
   * Won: the network pays the amount back — to the program when it already credited the cardholder, else
   * to the cardholder. Lost: the claim on the payment is given back and the provisional credit taken back,
   * as much of it as the account still holds; the rest is the program's loss (`unrecoveredAmount`).
   */
  private async decideIn(tx: Tx, dispute: DisputeRow, outcome: 'won' | 'lost'): Promise<void> {
    assertDisputeStep(dispute.status, outcome);
    const payment = await this.deps.transactions.lockForDispute(
      tx,
      dispute.partner_id,
      dispute.transaction_id,
    );
    const amount = BigInt(dispute.amount);
    const credit = BigInt(dispute.provisional_credit);
    let unrecovered = 0n;
    if (outcome === 'won') {
      await this.deps.ledger.transfer(tx, {
        operationId: `issuing-dispute-won:${dispute.id}`,
        legs: [
          { accountId: payment.networkAccountId, amount: -amount },
          {
            accountId:
              credit > 0n ? await this.programAccount(tx, dispute.currency) : payment.ledgerAccountId,
            amount,
          },
        ],
        metadata: { disputeId: dispute.id, transactionId: dispute.transaction_id },
      });
    } else {
      await this.deps.transactions.addDisputed(tx, dispute.transaction_id, -amount);
      if (credit > 0n) {
        const account = await this.deps.ledger.getAccount(tx, payment.ledgerAccountId);
        const available = account && account.available > 0n ? account.available : 0n;
        const recovered = available < credit ? available : credit;
        unrecovered = credit - recovered;
        if (recovered > 0n) {
          // Refused (nothing written) should a payment take the funds meanwhile: the step rolls back and
          // the sweep, or the caller, tries again.
          await this.deps.ledger.transfer(tx, {
            operationId: `issuing-dispute-lost:${dispute.id}`,
            legs: [
              { accountId: payment.ledgerAccountId, amount: -recovered },
              { accountId: await this.programAccount(tx, dispute.currency), amount: recovered },
            ],
            metadata: { disputeId: dispute.id, transactionId: dispute.transaction_id },
          });
        }
      }
    }
    const now = this.deps.clock.now();
    await tx
      .updateTable('issuing_disputes')
      .set({ status: outcome, unrecovered_amount: unrecovered.toString(), decided_at: now, updated_at: now })
      .where('id', '=', dispute.id)
      .execute();
    await this.event(tx, { ...dispute, status: outcome }, 'disputeStatusChanged');
  }

  /** The program's account that provisional credits come from and return to (unbounded: its loss shows). */
  private programAccount(tx: Executor, currency: string): Promise<string> {
    return this.deps.ledger.systemAccount(tx, {
      ownerType: 'issuing_program',
      ownerId: 'disputes',
      asset: currency,
      purpose: 'provisional-credit',
      isBounded: false,
    });
  }

  private async lock(tx: Tx, disputeId: string, options: { skipLocked?: boolean } = {}) {
    if (!isUuid(disputeId)) return undefined;
    let query = tx.selectFrom('issuing_disputes').selectAll().where('id', '=', disputeId).forUpdate();
    if (options.skipLocked) query = query.skipLocked();
    return query.executeTakeFirst();
  }

  private async find(db: Executor, disputeId: string): Promise<DisputeRow> {
    return db
      .selectFrom('issuing_disputes')
      .selectAll()
      .where('id', '=', disputeId)
      .executeTakeFirstOrThrow();
  }

  private async event(
    tx: Executor,
    dispute: Pick<DisputeRow, 'id' | 'partner_id' | 'customer_id' | 'transaction_id' | 'status'>,
    eventType: 'disputeCreated' | 'disputeStatusChanged',
  ): Promise<void> {
    await publishIssuingEvent(this.deps.outbox, tx, {
      partnerId: dispute.partner_id,
      customerId: dispute.customer_id,
      eventType,
      data: { disputeId: dispute.id, transactionId: dispute.transaction_id, status: dispute.status },
    });
  }
}

function present(row: DisputeRow): IssuingDispute {
  return {
    disputeId: row.id,
    transactionId: row.transaction_id,
    customerId: row.customer_id,
    status: row.status,
    reason: row.reason,
    explanation: row.explanation,
    currency: row.currency,
    amount: BigInt(row.amount),
    provisionalCredit: BigInt(row.provisional_credit),
    unrecoveredAmount: BigInt(row.unrecovered_amount),
    decideBy: row.decide_at,
    createdAt: row.created_at,
    decidedAt: row.decided_at,
  };
}
