// Clearing and what follows an authorization (docs/issuing.md, Clearing): the network's clearings, each
// part posted from the hold (the rest kept held until a final part or the hold's expiry), above the
// authorized amount within a tolerance, after the hold lapsed (late presentment), or with no
// authorization at all (force post); reversals, whole or partial; the merchant's refunds to the card; the
// hold's lapse. Each step is one database transaction: the record, the ledger move and the events.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Db, Tx } from '../../platform/db/database.ts';
import type { IssuingTransactionStatus } from '../../platform/db/schema.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import { formatAmountIn, parseAmountField } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { DeclineReason as NetworkDeclineReason } from '../../rails/card-network/port.ts';
import type { Authorizations } from './authorization.ts';
import { assertStep, clearingCeiling, type IssuingTransaction, stateError } from './transaction.ts';
import { leftOf, ownedBy, type TransactionRecords } from './transaction-records.ts';

type TransactionRow = Awaited<ReturnType<TransactionRecords['lock']>>;

export interface ClearingDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  ledger: Ledger;
  records: TransactionRecords;
  authorizations: Authorizations;
  /** How far above the authorized amount its clearings may post together, in percent (default 20) */
  tolerancePercent: number;
}

export class Clearing {
  constructor(private readonly deps: ClearingDeps) {}

  /**
   * One clearing of a payment: its amount (default: what is still held), final unless `final` is false.
   * A final part releases what is left of the hold; a part that is not final keeps it held for the next.
   */
  async clear(
    transactionId: string,
    input: { amount?: string | number | undefined; final?: boolean | undefined } = {},
  ): Promise<IssuingTransaction> {
    return this.deps.transact(async (tx) => {
      const t = await this.deps.records.lock(tx, transactionId);
      assertClearable(t);
      const amount =
        input.amount === undefined ? whatIsLeft(t) : parseAmountField(input.amount, assetOf(t.currency));
      await this.clearRow(tx, t, amount, input.final ?? true);
      return this.deps.records.get(tx, t.id);
    });
  }

  /** A reversal of the authorization: all that is still held, or `amount` of it (the rest stays held). */
  async reverse(transactionId: string, amountText?: string | number): Promise<IssuingTransaction> {
    return this.deps.transact(async (tx) => {
      const t = await this.deps.records.lock(tx, transactionId);
      if (t.status !== 'authorized') throw stateError('reverse', t.status);
      const amount = amountText === undefined ? null : parseAmountField(amountText, assetOf(t.currency));
      await this.reverseRow(tx, t, amount);
      return this.deps.records.get(tx, t.id);
    });
  }

  /** Clearing (final) or reversal asked by the card network for an on-us payment, in the caller's transaction. */
  async settleFromNetwork(tx: Tx, networkReference: string, amount: bigint | null): Promise<void> {
    const row = await tx
      .selectFrom('issuing_transactions')
      .select('id')
      .where('network_reference', '=', networkReference)
      .executeTakeFirst();
    if (!row) throw notFound('transaction');
    const t = await this.deps.records.lock(tx, row.id);
    if (amount === null) await this.reverseRow(tx, t, null);
    else await this.clearRow(tx, t, amount, true);
  }

  /** A clearing with no authorization (a force post): the account pays it at once if it can. */
  async forcePost(input: {
    cardId: string;
    amount: string | number;
    currency: string;
    merchant: string;
  }): Promise<IssuingTransaction> {
    const asset = findAsset(input.currency.toUpperCase());
    if (!asset)
      throw new DomainError('validation_failed', 'currency must be an ISO 4217 code', { field: 'currency' });
    const amount = parseAmountField(input.amount, asset);
    return this.deps.transact(async (tx) => {
      const card = await this.deps.authorizations.loadCard(tx, input.cardId);
      if (!card) throw notFound('card');
      if (card.currency !== asset.code) {
        throw new DomainError('validation_failed', `the card's account holds ${card.currency}`, {
          field: 'currency',
        });
      }
      const id = randomUUID();
      const now = this.deps.clock.now();
      await tx
        .insertInto('issuing_transactions')
        .values({
          id,
          ...ownedBy(card),
          type: 'card_payment',
          status: 'settled',
          currency: asset.code,
          amount: amount.toString(),
          settled_amount: amount.toString(),
          clearing_count: 1,
          force_post: true,
          merchant: input.merchant,
          decline_reason: null,
          created_at: now,
          settled_at: now,
          updated_at: now,
        })
        .execute();
      await declinedWhenShort(
        this.pay(
          tx,
          { id, currency: asset.code, ledgerAccountId: card.ledger_account_id },
          amount,
          `issuing-clear:${id}`,
        ),
      );
      const customer = { customerId: card.customer_id, partnerId: card.partner_id };
      await this.deps.records.event(tx, customer, 'transactionCreated', { transactionId: id });
      await this.deps.records.event(tx, customer, 'transactionSettled', { transactionId: id });
      return this.deps.records.get(tx, id);
    });
  }

  /** The merchant refunds a cleared payment to the card: a credit transaction of its own, up to what is left. */
  async refund(input: { transactionId: string; amount: string | number }): Promise<IssuingTransaction> {
    return this.deps.transact(async (tx) => {
      const t = await this.deps.records.lock(tx, input.transactionId);
      const amount = parseAmountField(input.amount, assetOf(t.currency));
      const refundable = leftOf(t);
      if (t.type !== 'card_payment' || refundable <= 0n)
        throw stateError('refund', `${t.status} with nothing cleared left to refund`);
      if (amount > refundable) {
        throw new DomainError(
          'validation_failed',
          `a refund is at most what is left of the payment (${formatAmountIn(refundable, t.currency)})`,
          {
            field: 'amount',
            details: { refundable: formatAmountIn(refundable, t.currency) },
          },
        );
      }
      await tx
        .updateTable('issuing_transactions')
        .set({
          refunded_amount: (BigInt(t.refunded_amount) + amount).toString(),
          updated_at: this.deps.clock.now(),
        })
        .where('id', '=', t.id)
        .execute();
      const card = await this.deps.authorizations.loadCard(tx, t.card_id);
      if (!card) throw new Error(`card ${t.card_id} vanished`);
      const refund = await this.credit(tx, card, {
        amount,
        merchant: t.merchant,
        originalTransactionId: t.id,
      });
      return this.deps.records.get(tx, refund);
    });
  }

  /**
   * Funds pushed to an issued card by the card network (a refund of an on-us payment, or a credit): the
   * card network pays the account at once, recorded as a settled `refund` transaction.
   */
  async creditFromNetwork(
    tx: Tx,
    input: { cardId: string; currency: string; amount: bigint; merchant: string; networkReference: string },
  ): Promise<IssuingTransaction | NetworkDeclineReason> {
    const card = await this.deps.authorizations.loadCard(tx, input.cardId);
    if (!card) throw notFound('card');
    if (card.account_status !== 'open' || card.status === 'closed') return 'card_not_active';
    if (card.currency !== input.currency) return 'currency_not_supported';
    const id = await this.credit(tx, card, {
      amount: input.amount,
      merchant: input.merchant,
      networkReference: input.networkReference,
    });
    return this.deps.records.get(tx, id);
  }

  /** Sweep: authorization holds that were never cleared in full lapse and give the rest of the funds back. */
  async expireHolds(): Promise<number> {
    const due = await this.deps.db
      .selectFrom('issuing_transactions')
      .select('id')
      .where('status', '=', 'authorized')
      .where('hold_expires_at', '<=', this.deps.clock.now())
      .limit(200)
      .execute();
    return transactEach(this.deps.transact, due, async (tx, row) => {
      const t = await tx
        .selectFrom('issuing_transactions')
        .selectAll()
        .where('id', '=', row.id)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (t?.status !== 'authorized') return false;
      if (t.hold_id) await this.deps.ledger.expireHold(tx, t.hold_id);
      await this.update(tx, t, 'expired', { held_amount: '0' });
      return true;
    });
  }

  // Internals ------------------------------------------------------------------------------------------

  private async clearRow(tx: Tx, t: TransactionRow, amount: bigint, final: boolean): Promise<void> {
    const held = BigInt(t.held_amount ?? 0);
    const settled = BigInt(t.settled_amount ?? 0);
    const late = t.status === 'expired';
    assertClearable(t);
    const ceiling = clearingCeiling(BigInt(t.amount), this.deps.tolerancePercent);
    if (settled + amount > ceiling) {
      throw clearingDeclined(
        'over_tolerance',
        `the clearings of this payment may post at most ${formatAmountIn(ceiling, t.currency)} in all`,
        {
          maxAmount: formatAmountIn(ceiling - settled, t.currency),
        },
      );
    }
    const operation =
      t.clearing_count === 0 ? `issuing-clear:${t.id}` : `issuing-clear:${t.id}:${t.clearing_count}`;
    const rest = final || amount >= held ? 0n : held - amount;
    await declinedWhenShort(
      late || !t.hold_id
        ? // Late presentment: the hold is gone, so the account pays from what is available now.
          this.pay(
            tx,
            { id: t.id, currency: t.currency, ledgerAccountId: await this.ledgerAccountOf(tx, t) },
            amount,
            operation,
          )
        : this.deps.ledger.postHold(tx, {
            operationId: operation,
            holdId: t.hold_id,
            amount,
            aboveHold: true,
            metadata: { transactionId: t.id, part: t.clearing_count + 1 },
          }),
    );
    const holdId = rest > 0n ? await this.holdAgain(tx, t, rest) : t.hold_id;
    const now = this.deps.clock.now();
    await this.update(tx, t, rest > 0n ? 'authorized' : 'settled', {
      settled_amount: (settled + amount).toString(),
      settled_at: now,
      held_amount: rest.toString(),
      hold_id: holdId,
      clearing_count: t.clearing_count + 1,
    });
    await this.deps.records.event(tx, owner(t), 'transactionSettled', { transactionId: t.id });
  }

  private async reverseRow(tx: Tx, t: TransactionRow, amount: bigint | null): Promise<void> {
    if (t.status !== 'authorized') throw stateError('reverse', t.status);
    const held = BigInt(t.held_amount ?? 0);
    if (amount !== null && amount > held) {
      throw new DomainError(
        'validation_failed',
        `a reversal is at most what is still held (${formatAmountIn(held, t.currency)})`,
        {
          field: 'amount',
        },
      );
    }
    if (t.hold_id) await this.deps.ledger.voidHold(tx, t.hold_id);
    const rest = amount === null ? 0n : held - amount;
    if (rest > 0n) {
      // A partial reversal: the rest stays held for the clearings to come.
      await this.update(tx, t, 'authorized', {
        held_amount: rest.toString(),
        hold_id: await this.holdAgain(tx, t, rest),
      });
      return;
    }
    // Nothing left held: parts already cleared make it settled, else it is reversed.
    await this.update(tx, t, t.settled_amount === null ? 'reversed' : 'settled', { held_amount: '0' });
  }

  /** Holds `amount` again until the original hold's expiry (what is left after a part or a partial reversal). */
  private async holdAgain(tx: Tx, t: TransactionRow, amount: bigint): Promise<string> {
    const hold = await this.deps.ledger.hold(tx, {
      operationId: `issuing-hold:${t.id}:${randomUUID()}`,
      debitAccountId: await this.ledgerAccountOf(tx, t),
      creditAccountId: await this.deps.records.settlementAccount(tx, t.currency, t.id),
      amount,
      ...(t.hold_expires_at ? { expiresAt: t.hold_expires_at } : {}),
      metadata: { transactionId: t.id },
    });
    return hold.id;
  }

  /** The account pays the card network `amount` now (refused, nothing written, when it cannot). */
  private async pay(
    tx: Tx,
    t: { id: string; currency: string; ledgerAccountId: string },
    amount: bigint,
    operationId: string,
  ): Promise<void> {
    await this.deps.ledger.transfer(tx, {
      operationId,
      legs: [
        { accountId: t.ledgerAccountId, amount: -amount },
        { accountId: await this.deps.records.settlementAccount(tx, t.currency, t.id), amount },
      ],
      metadata: { transactionId: t.id },
    });
  }

  /** A settled `refund` transaction: the card network pays the account. Answers its id. */
  private async credit(
    tx: Tx,
    card: NonNullable<Awaited<ReturnType<Authorizations['loadCard']>>>,
    input: { amount: bigint; merchant: string; networkReference?: string; originalTransactionId?: string },
  ): Promise<string> {
    const id = randomUUID();
    const now = this.deps.clock.now();
    await tx
      .insertInto('issuing_transactions')
      .values({
        id,
        ...ownedBy(card),
        type: 'refund',
        status: 'settled',
        currency: card.currency,
        amount: input.amount.toString(),
        settled_amount: input.amount.toString(),
        merchant: input.merchant,
        decline_reason: null,
        network_reference: input.networkReference ?? null,
        original_transaction_id: input.originalTransactionId ?? null,
        created_at: now,
        authorized_at: now,
        settled_at: now,
        updated_at: now,
      })
      .execute();
    await this.deps.ledger.transfer(tx, {
      operationId: `issuing-credit:${id}`,
      legs: [
        {
          accountId: await this.deps.records.settlementAccount(tx, card.currency, id),
          amount: -input.amount,
        },
        { accountId: card.ledger_account_id, amount: input.amount },
      ],
      metadata: { transactionId: id },
    });
    const customer = { customerId: card.customer_id, partnerId: card.partner_id };
    await this.deps.records.event(tx, customer, 'transactionCreated', { transactionId: id });
    await this.deps.records.event(tx, customer, 'transactionSettled', { transactionId: id });
    return id;
  }

  /**
   * Moves the record to `status` with the columns given. A change of status the spec has no event for
   * (reversed, expired, settled by releasing the rest of a partly cleared hold) sends
   * transactionStatusChanged; a clearing's own transactionSettled is sent by the clearing.
   */
  private async update(
    tx: Tx,
    t: TransactionRow,
    status: IssuingTransactionStatus,
    columns: {
      settled_amount?: string;
      settled_at?: Date;
      held_amount?: string;
      hold_id?: string | null;
      clearing_count?: number;
    },
  ): Promise<void> {
    assertStep(status === 'expired' ? 'expire' : 'change', t.status, status);
    await tx
      .updateTable('issuing_transactions')
      .set({ ...columns, status, updated_at: this.deps.clock.now() })
      .where('id', '=', t.id)
      .execute();
    const clearing = columns.settled_amount !== undefined;
    if (status !== t.status && !clearing) {
      await this.deps.records.event(tx, owner(t), 'transactionStatusChanged', {
        transactionId: t.id,
        status,
      });
    }
  }

  private async ledgerAccountOf(tx: Tx, t: TransactionRow): Promise<string> {
    const row = await tx
      .selectFrom('issuing_accounts')
      .select('ledger_account_id')
      .where('id', '=', t.account_id)
      .executeTakeFirstOrThrow();
    return row.ledger_account_id;
  }
}

function owner(t: TransactionRow) {
  return { customerId: t.customer_id, partnerId: t.partner_id };
}

/** Clearings come for card payments still held (authorized) or whose hold lapsed (late presentment). */
function assertClearable(t: TransactionRow): void {
  if (t.type !== 'card_payment' || (t.status !== 'authorized' && t.status !== 'expired')) {
    throw stateError('clear', t.status);
  }
}

/** A clearing without an amount: what is still held, or else what the authorization has not yet cleared. */
function whatIsLeft(t: TransactionRow): bigint {
  const held = BigInt(t.held_amount ?? 0);
  const left = held > 0n ? held : BigInt(t.amount) - BigInt(t.settled_amount ?? 0);
  if (left <= 0n)
    throw new DomainError('validation_failed', 'amount is required: nothing is left to clear', {
      field: 'amount',
    });
  return left;
}

function assetOf(currency: string) {
  const asset = findAsset(currency);
  if (!asset) throw new Error(`unknown currency ${currency}`);
  return asset;
}

/** The ledger's refusal of a clearing for want of funds, as the clearing's decline. */
async function declinedWhenShort(posting: Promise<unknown>): Promise<void> {
  try {
    await posting;
  } catch (err) {
    if (err instanceof DomainError && err.details?.reason === 'insufficient_funds') {
      throw clearingDeclined('insufficient_funds', 'the account cannot cover it');
    }
    throw err;
  }
}

/** A clearing the program will not post: a 422 saying why; nothing of it is written. */
function clearingDeclined(
  reason: 'over_tolerance' | 'insufficient_funds',
  message: string,
  details: Record<string, unknown> = {},
) {
  return new DomainError('limit_exceeded', `clearing declined: ${message}`, {
    field: 'amount',
    details: { reason, ...details },
  });
}
