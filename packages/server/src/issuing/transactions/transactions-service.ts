// Card transactions of issued cards (docs/issuing.md, Card transactions, 3D Secure and Clearing): the card
// network asks for an authorization (sandbox: POST /sandbox/issuing/authorizations); checks, a ledger hold,
// optionally a 3D Secure challenge the cardholder decides; then clearings (in parts, above the hold within
// a tolerance, late), reversals, refunds and force posts, or the hold lapses. Each phase has its module:
// authorization.ts, three-ds.ts, clearing.ts; this service is what the routes and other services call.
import type { Clock } from '../../platform/clock/clock.ts';
import type { Db, Executor, Tx } from '../../platform/db/database.ts';
import { ownedBy } from '../../platform/db/owner-hash.ts';
import type { IssuingTransactionStatus } from '../../platform/db/schema.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { notFound } from '../../platform/errors/domain-error.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import { isUuid } from '../../platform/ids.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import type { CardNetwork } from '../../rails/card-network/port.ts';
import { SpendingControlsStore } from '../cards/spending-controls-store.ts';
import type { CustomerRef } from '../kyc/kyc-service.ts';
import { Authorizations } from './authorization.ts';
import type { AuthorizationRisk } from './authorization-risk.ts';
import { Clearing } from './clearing.ts';
import { ThreeDsChallenges } from './three-ds.ts';
import type { IssuingTransaction } from './transaction.ts';
import { leftOf, TransactionRecords } from './transaction-records.ts';
import { UnheldPostings } from './unheld-postings.ts';

export { AUTH_TYPES, type AuthStatus } from './three-ds.ts';
export type { DeclineReason, IssuingTransaction, PendingChallenge } from './transaction.ts';
export { MAX_AUTHORIZATION_MAJOR } from './transaction.ts';
export { NETWORK_SETTLEMENT_SHARDS } from './transaction-records.ts';

export interface TransactionsDeps {
  /** The issuing.authorization decision point (docs/risk.md) */
  risk: AuthorizationRisk;
  db: Db;
  transact: Transact;
  clock: Clock;
  outbox: Outbox;
  ledger: Ledger;
  threeDsTimeoutSeconds: number;
  holdSeconds: number;
  /** How far above the authorized amount its clearings may post together, in percent */
  clearingTolerancePercent: number;
  /** Told the cardholder's decision when a challenged payment came from the card network (on-us) */
  network?: Pick<CardNetwork, 'issuerDecided'>;
  /** Common authorizations are written in one statement (authorizeAtOnce); false runs every one the general way */
  oneStatementWrites: boolean;
}

/** A payment as its dispute sees it (lockForDispute). */
export interface DisputedPayment {
  transactionId: string;
  customerId: string;
  partnerId: string;
  accountId: string;
  currency: string;
  isCardPayment: boolean;
  /** Cleared, less refunds and the open or won disputes */
  disputable: bigint;
  /** The cardholder's account in the ledger */
  ledgerAccountId: string;
  /** The card network's settlement account this payment moved money with */
  networkAccountId: string;
}

export class TransactionsService {
  private readonly records: TransactionRecords;
  /** The cards' spending controls and spend counters (the spending-controls routes write them) */
  readonly controls: SpendingControlsStore;
  private readonly authorizations: Authorizations;
  private readonly challenges: ThreeDsChallenges;
  private readonly clearing: Clearing;
  private readonly unheld: UnheldPostings;

  constructor(private readonly deps: TransactionsDeps) {
    this.records = new TransactionRecords(deps);
    this.controls = new SpendingControlsStore(deps.clock);
    this.authorizations = new Authorizations({ ...deps, records: this.records, controls: this.controls });
    this.challenges = new ThreeDsChallenges({
      ...deps,
      records: this.records,
      controls: this.controls,
      authorizations: this.authorizations,
    });
    this.clearing = new Clearing({
      ...deps,
      records: this.records,
      tolerancePercent: deps.clearingTolerancePercent,
    });
    this.unheld = new UnheldPostings({ ...deps, records: this.records, authorizations: this.authorizations });
  }

  // Authorization (authorization.ts)
  authorize(input: Parameters<Authorizations['authorize']>[0]) {
    return this.authorizations.authorize(input);
  }
  authorizeFromNetwork(tx: Tx, input: Parameters<Authorizations['authorizeFromNetwork']>[1]) {
    return this.authorizations.authorizeFromNetwork(tx, input);
  }

  // 3D Secure (three-ds.ts)
  pendingChallenges(customer: CustomerRef) {
    return this.challenges.pendingChallenges(customer);
  }
  decideChallenge(...args: Parameters<ThreeDsChallenges['decideChallenge']>) {
    return this.challenges.decideChallenge(...args);
  }
  expireChallenges() {
    return this.challenges.expireChallenges();
  }

  // Clearing and after (clearing.ts)
  clear(...args: Parameters<Clearing['clear']>) {
    return this.clearing.clear(...args);
  }
  reverse(...args: Parameters<Clearing['reverse']>) {
    return this.clearing.reverse(...args);
  }
  forcePost(...args: Parameters<UnheldPostings['forcePost']>) {
    return this.unheld.forcePost(...args);
  }
  refund(...args: Parameters<UnheldPostings['refund']>) {
    return this.unheld.refund(...args);
  }
  settleFromNetwork(...args: Parameters<Clearing['settleFromNetwork']>) {
    return this.clearing.settleFromNetwork(...args);
  }
  creditFromNetwork(...args: Parameters<UnheldPostings['creditFromNetwork']>) {
    return this.unheld.creditFromNetwork(...args);
  }
  expireHolds() {
    return this.clearing.expireHolds();
  }

  // What the disputes of a payment (issuing/disputes) claim of it
  /**
   * A payment of the partner's, locked for a dispute's step: what is left of it to dispute (cleared, less
   * refunds and open or won disputes) and the accounts a dispute moves money between. Another partner's
   * is a 404.
   */
  async lockForDispute(tx: Tx, partnerId: string, transactionId: string): Promise<DisputedPayment> {
    const t = await this.records.lock(tx, transactionId);
    if (t.partner_id !== partnerId) throw notFound('transaction');
    const account = await tx
      .selectFrom('issuing_accounts')
      .select('ledger_account_id')
      .where('id', '=', t.account_id)
      .executeTakeFirstOrThrow();
    return {
      transactionId: t.id,
      customerId: t.customer_id,
      partnerId: t.partner_id,
      accountId: t.account_id,
      currency: t.currency,
      isCardPayment: t.type === 'card_payment',
      disputable: leftOf(t),
      ledgerAccountId: account.ledger_account_id,
      networkAccountId: await this.records.settlementAccount(tx, t.currency, t.id),
    };
  }

  /** Adds `delta` (negative: a lost dispute gives its claim back) to what disputes claim of the payment. */
  async addDisputed(tx: Tx, transactionId: string, delta: bigint): Promise<void> {
    await tx
      .updateTable('issuing_transactions')
      .set((eb) => ({ disputed_amount: eb('disputed_amount', '+', delta.toString()) }))
      .where('id', '=', transactionId)
      .execute();
  }

  // Reads
  /** The card an on-us payment was made with (to refund it). */
  async cardOfNetworkPayment(db: Executor, networkReference: string): Promise<string | undefined> {
    const row = await db
      .selectFrom('issuing_transactions')
      .select('card_id')
      .where('network_reference', '=', networkReference)
      .executeTakeFirst();
    return row?.card_id;
  }

  /** One of the customer's transactions with its 3D Secure record; another customer's is a 404. */
  async get(customer: CustomerRef, transactionId: string): Promise<IssuingTransaction> {
    const found = isUuid(transactionId) ? await this.records.find(this.deps.db, transactionId) : undefined;
    if (!found || found.customerId !== customer.customerId) throw notFound('transaction');
    return found;
  }

  async list(
    customer: CustomerRef,
    filter: {
      page: number;
      size: number;
      type?: string;
      status?: IssuingTransactionStatus;
      startDate?: Date;
      endDate?: Date;
    },
  ): Promise<{ items: IssuingTransaction[]; total: number }> {
    let query = this.deps.db
      .selectFrom('issuing_transactions')
      .where(ownedBy('customer_id', customer.customerId));
    if (filter.type) query = query.where('type', '=', filter.type as 'card_payment' | 'refund');
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.startDate) query = query.where('created_at', '>=', filter.startDate);
    if (filter.endDate) query = query.where('created_at', '<', filter.endDate);
    const total = await query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    const ids = await query
      .select('id')
      .orderBy('seq', 'desc')
      .limit(filter.size)
      .offset((filter.page - 1) * filter.size)
      .execute();
    const items = await Promise.all(ids.map((r) => this.records.get(this.deps.db, r.id)));
    return { items, total: Number(total.n) };
  }
}
