// Chargebacks of captured card payments (docs/payments.md, Disputes; a Tessera extension on the xMoney wire):
// the card network takes the money back with a reason code (its own test cards, or the sandbox route); the
// merchant answers with evidence or accepts before the deadline; the network decides on the sandbox clock;
// a won dispute gives the money back as a representment. Each step is one database transaction.
import { createHash } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import type { Encryptor } from '../../platform/crypto/encryption.ts';
import type { Db, Tx } from '../../platform/db/database.ts';
import type { PaymentsDisputeStatus, PaymentsDisputesTable } from '../../platform/db/schema.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { type ClientAmount, formatAmountIn } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { Page } from '../http/envelope.ts';
import { boundedTotal, checkWindow } from '../list-window.ts';
import type { MerchantScope } from '../sites.ts';
import { leftOf, type TransactionRow } from '../transactions/transaction-row.ts';
import type { PaymentTransactionsService } from '../transactions/transactions-service.ts';
import {
  assertDisputeStep,
  codeFor,
  networkDecision,
  openDisputeOf,
  REASON_CODES,
  RESPONSE_DAYS,
  REVIEW_DAYS,
  schemeOf,
} from './dispute.ts';
import type { EvidenceFile } from './evidence.ts';

export type DisputeRow = Selectable<PaymentsDisputesTable>;
const DAY = 86_400;

export interface PaymentDisputesDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  encryptor: Encryptor;
  transactions: PaymentTransactionsService;
  /** The dispute fee charged to the site for every chargeback, in major units of its currency */
  disputeFeeMajor: bigint;
}

export class PaymentDisputesService {
  constructor(private readonly deps: PaymentDisputesDeps) {
    deps.transactions.onChargeback = async (tx, t, news) => {
      try {
        await this.raiseIn(tx, t, {
          reasonCode: codeFor(schemeOf(t.card_brand), news.dispute),
          plannedOutcome: news.plannedOutcome ?? null,
        });
      } catch (err) {
        // Refused before anything was written (refunded or charged back in full meanwhile, already
        // disputed): the network's chargeback of what is no longer there is passed over.
        if (!(err instanceof DomainError) || err.status >= 500) throw err;
      }
    };
  }

  /** Sandbox: the network charges a captured payment back (all that is left of it, or `amount`). */
  async raise(
    transactionId: number,
    input: { reasonCode: string; amount?: ClientAmount | undefined; outcome?: 'won' | 'lost' | undefined },
  ): Promise<DisputeRow> {
    return this.deps.transact(async (tx) => {
      const t = await this.deps.transactions.lock(tx, transactionId);
      const asset = findAsset(t.currency);
      if (!asset) throw new Error(`unknown currency ${t.currency}`);
      return this.raiseIn(tx, t, {
        reasonCode: input.reasonCode,
        ...(input.amount !== undefined ? { amount: input.amount.in(asset) } : {}),
        plannedOutcome: input.outcome ?? null,
      });
    });
  }

  /** The merchant's answer: evidence files and text; the dispute goes under review. */
  async submitEvidence(
    merchant: MerchantScope,
    disputeId: number,
    evidence: { files: EvidenceFile[]; text: Record<string, string> },
  ): Promise<DisputeRow> {
    return this.deps.transact(async (tx) => {
      const d = await this.lockOwned(tx, merchant, disputeId);
      this.assertAnswerable(d, 'submit evidence');
      if (evidence.files.length === 0 && Object.keys(evidence.text).length === 0) {
        throw new DomainError('validation_failed', 'send at least one evidence file or text field', {
          field: 'evidence',
        });
      }
      const now = this.deps.clock.now();
      for (const file of evidence.files) {
        await tx
          .insertInto('payments_dispute_evidence')
          .values({
            dispute_id: d.id,
            field: file.field,
            filename: file.filename,
            content_type: file.contentType,
            bytes: file.bytes.length,
            sha256: createHash('sha256').update(file.bytes).digest('hex'),
            content_enc: this.deps.encryptor.encrypt(
              file.bytes.toString('base64'),
              `dispute-evidence:${d.id}`,
            ),
            created_at: now,
          })
          .execute();
      }
      return this.update(tx, d, 'under_review', {
        evidence_text: JSON.stringify(evidence.text),
        decide_at: addSeconds(now, REVIEW_DAYS * DAY),
      });
    });
  }

  /** The merchant accepts the chargeback: the money stays with the cardholder. */
  async accept(merchant: MerchantScope, disputeId: number): Promise<DisputeRow> {
    return this.deps.transact(async (tx) => {
      const d = await this.lockOwned(tx, merchant, disputeId);
      this.assertAnswerable(d, 'accept');
      return this.update(tx, d, 'accepted', { decided_at: this.deps.clock.now() });
    });
  }

  /** Sandbox: the network decides now (a dispute awaiting the merchant's answer or under review). */
  async decide(disputeId: number, outcome: 'won' | 'lost'): Promise<DisputeRow> {
    return this.deps.transact(async (tx) => {
      const d = await this.lockById(tx, disputeId);
      if (!d) throw notFound('dispute');
      return this.settle(tx, d, outcome);
    });
  }

  /**
   * Sweep: a dispute nobody answered by its deadline is lost; one under review is decided when its time
   * comes (networkDecision).
   */
  async decideDue(): Promise<number> {
    const now = this.deps.clock.now();
    const due = await this.deps.db
      .selectFrom('payments_disputes')
      .select('id')
      .where((eb) =>
        eb.or([
          eb.and([eb('status', '=', 'needs_response'), eb('evidence_due_at', '<=', now)]),
          eb.and([eb('status', '=', 'under_review'), eb('decide_at', '<=', now)]),
        ]),
      )
      .limit(200)
      .execute();
    return transactEach(this.deps.transact, due, async (tx, row) => {
      const d = await this.lockById(tx, row.id, { skipLocked: true });
      if (d?.status === 'needs_response') await this.settle(tx, d, 'lost');
      else if (d?.status === 'under_review') await this.settle(tx, d, networkDecision(d.planned_outcome));
      else return false;
      return true;
    });
  }

  async get(merchant: MerchantScope, disputeId: number): Promise<DisputeRow> {
    const d = await this.deps.db
      .selectFrom('payments_disputes')
      .selectAll()
      .where('id', '=', disputeId)
      .where('merchant_id', '=', merchant.merchantId)
      .where('site_id', 'in', merchant.siteIds)
      .executeTakeFirst();
    if (!d) throw notFound('dispute');
    return d;
  }

  /** The merchant's disputes, newest first unless asked otherwise; an index on (merchant_id, id) serves it. */
  async list(
    merchant: MerchantScope,
    filter: { transactionId?: number | undefined; status?: PaymentsDisputeStatus | undefined },
    page: Page,
  ): Promise<{ items: DisputeRow[]; total: number }> {
    let query = this.deps.db
      .selectFrom('payments_disputes')
      .where('merchant_id', '=', merchant.merchantId)
      .where('site_id', 'in', merchant.siteIds);
    if (filter.transactionId !== undefined) query = query.where('transaction_id', '=', filter.transactionId);
    if (filter.status !== undefined) query = query.where('status', '=', filter.status);
    checkWindow(page);
    const total = await boundedTotal(this.deps.db, query);
    const items = await query
      .selectAll()
      .orderBy('id', page.newestFirst ? 'desc' : 'asc')
      .limit(page.perPage)
      .offset((page.page - 1) * page.perPage)
      .execute();
    return { items, total };
  }

  /** The evidence files of a dispute (names and sizes; the content stays encrypted). */
  async evidenceOf(disputeId: number) {
    return this.deps.db
      .selectFrom('payments_dispute_evidence')
      .select(['id', 'field', 'filename', 'content_type', 'bytes', 'sha256', 'created_at'])
      .where('dispute_id', '=', disputeId)
      .orderBy('id')
      .execute();
  }

  // Internals ------------------------------------------------------------------------------------------

  private async raiseIn(
    tx: Tx,
    t: TransactionRow,
    input: { reasonCode: string; amount?: bigint; plannedOutcome: 'won' | 'lost' | null },
  ): Promise<DisputeRow> {
    if (t.type !== 'deposit' || BigInt(t.captured_amount) === 0n) {
      throw new DomainError('invalid_state', 'only a captured payment can be charged back', {
        details: { transactionStatus: t.status },
      });
    }
    const open = await openDisputeOf(tx, t.id);
    if (open !== undefined) {
      throw new DomainError('invalid_state', `the payment is already disputed (dispute ${open})`, {
        details: { disputeId: open },
      });
    }
    const left = leftOf(t);
    if (left <= 0n) {
      throw new DomainError(
        'invalid_state',
        'nothing of the payment is left to charge back: it was refunded or charged back in full',
        {
          details: { transactionStatus: t.status },
        },
      );
    }
    const amount = input.amount ?? left;
    if (amount > left) {
      throw new DomainError(
        'validation_failed',
        `a chargeback is at most what is left of the payment (${formatAmountIn(left, t.currency)} ${t.currency})`,
        {
          field: 'amount',
        },
      );
    }
    const scheme = schemeOf(t.card_brand);
    const code = REASON_CODES[scheme]?.[input.reasonCode];
    if (!code) {
      throw new DomainError(
        'validation_failed',
        `reasonCode must be one of ${Object.keys(REASON_CODES[scheme] ?? {}).join(', ')} for a ${scheme} card`,
        {
          field: 'reasonCode',
        },
      );
    }
    const asset = findAsset(t.currency);
    const fee = this.deps.disputeFeeMajor * 10n ** BigInt(asset?.exponent ?? 2);
    const { chargeback, uncovered, feeCharged } = await this.deps.transactions.chargeBack(
      tx,
      t,
      amount,
      fee,
      `${scheme} ${input.reasonCode}: ${code.description}`,
    );
    const now = this.deps.clock.now();
    return tx
      .insertInto('payments_disputes')
      .values({
        merchant_id: t.merchant_id,
        site_id: t.site_id,
        order_id: t.order_id,
        transaction_id: t.id,
        chargeback_transaction_id: chargeback.id,
        currency: t.currency,
        amount: amount.toString(),
        fee: feeCharged.toString(),
        uncovered_amount: uncovered.toString(),
        network: scheme,
        reason_code: input.reasonCode,
        status: 'needs_response',
        planned_outcome: input.plannedOutcome,
        evidence_due_at: addSeconds(now, RESPONSE_DAYS * DAY),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** The network's decision: won gives the money back as a representment; lost (or accepted) keeps it taken. */
  private async settle(tx: Tx, d: DisputeRow, outcome: 'won' | 'lost'): Promise<DisputeRow> {
    assertDisputeStep(d.status, outcome, `decide it ${outcome}`);
    const now = this.deps.clock.now();
    if (outcome === 'lost') return this.update(tx, d, 'lost', { decided_at: now });
    const t = await this.deps.transactions.lock(tx, d.transaction_id);
    const representment = await this.deps.transactions.represent(
      tx,
      t,
      BigInt(d.amount),
      BigInt(d.uncovered_amount),
      `dispute ${d.id} won`,
    );
    return this.update(tx, d, 'won', { decided_at: now, representment_transaction_id: representment.id });
  }

  /** The merchant can still answer: the dispute awaits it and its deadline has not passed. */
  private assertAnswerable(d: DisputeRow, action: string): void {
    if (d.status !== 'needs_response') {
      throw new DomainError('invalid_state', `cannot ${action}: the dispute is ${d.status}`, {
        details: { status: d.status },
      });
    }
    if (d.evidence_due_at <= this.deps.clock.now()) {
      throw new DomainError(
        'invalid_state',
        `cannot ${action}: the dispute is past its deadline (${d.evidence_due_at.toISOString()})`,
        {
          details: { status: d.status, evidenceDueBy: d.evidence_due_at.toISOString() },
        },
      );
    }
  }

  private async update(
    tx: Tx,
    d: DisputeRow,
    status: PaymentsDisputeStatus,
    columns: Partial<{
      evidence_text: string;
      decide_at: Date;
      decided_at: Date;
      representment_transaction_id: number;
    }>,
  ): Promise<DisputeRow> {
    assertDisputeStep(d.status, status, `move it to ${status}`);
    return tx
      .updateTable('payments_disputes')
      .set({ ...columns, status, updated_at: this.deps.clock.now() })
      .where('id', '=', d.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  private async lockOwned(tx: Tx, merchant: MerchantScope, disputeId: number): Promise<DisputeRow> {
    const d = await tx
      .selectFrom('payments_disputes')
      .selectAll()
      .where('id', '=', disputeId)
      .where('merchant_id', '=', merchant.merchantId)
      .where('site_id', 'in', merchant.siteIds)
      .forUpdate()
      .executeTakeFirst();
    if (!d) throw notFound('dispute');
    return d;
  }

  private async lockById(tx: Tx, disputeId: number, options: { skipLocked?: boolean } = {}) {
    let query = tx.selectFrom('payments_disputes').selectAll().where('id', '=', disputeId).forUpdate();
    if (options.skipLocked) query = query.skipLocked();
    return query.executeTakeFirst();
  }
}
