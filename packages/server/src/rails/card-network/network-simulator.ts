// The card network simulator: decides authorizations from the test cards (and legacy amounts;
// simulated-decisions.ts), serves 3D Secure challenges through the hosted ACS page (acs-challenges.ts),
// loses answers for the timeout card and reconciles them a minute later, follows the sandbox's scripted
// outcomes (scripted-outcomes.ts), and routes cards issued by this platform to the on-us issuer. Its state
// is product tables, so it behaves the same across processes and restarts, on the sandbox clock.
import type { Selectable } from 'kysely';
import { cardBrand } from '../../platform/cards/card-number.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import type { Tx } from '../../platform/db/database.ts';
import type { CardNetworkAuthorizationsTable } from '../../platform/db/schema.ts';
import type { StatementBatch } from '../../platform/db/statement-batch.ts';
import { transactEach } from '../../platform/db/transact.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { AcsChallenges, type AcsChallengesDeps, type ChallengeView } from './acs-challenges.ts';
import type {
  AuthorizationAnswer,
  AuthorizationRequest,
  BinInfo,
  CardNetwork,
  DeclineReason,
  NetworkSink,
  OnUsIssuer,
} from './port.ts';
import { ScriptedOutcomes } from './scripted-outcomes.ts';
import { approval, capturedWith, decideOutcome, isSale } from './simulated-decisions.ts';
import { DISPUTE_AFTER_DAYS, type ScriptableOutcome, TEST_CARDS } from './test-cards.ts';

export { CHALLENGE_TTL_SECONDS, type ChallengeView } from './acs-challenges.ts';

/** How long after a lost answer the acquirer's reconciliation file tells the truth */
export const RECONCILE_AFTER_SECONDS = 60;
export class CardNetworkSimulator implements CardNetwork {
  private readonly sinks = new Map<string, NetworkSink>();
  private issuer: OnUsIssuer | undefined;
  private readonly scripts: ScriptedOutcomes;
  private readonly challenges: AcsChallenges;

  constructor(
    private readonly deps: AcsChallengesDeps & {
      /** Keys the card fingerprints of scripted outcomes (never the number itself) */
      fingerprintKey: Uint8Array;
    },
  ) {
    this.scripts = new ScriptedOutcomes(deps);
    this.challenges = new AcsChallenges(deps, (tx, owner, news) => this.tell(tx, owner, news));
  }

  connect(owner: string, sink: NetworkSink): void {
    this.sinks.set(owner, sink);
  }

  connectIssuer(issuer: OnUsIssuer): void {
    this.issuer = issuer;
  }

  /**
   * The simulated BIN table: cards of this platform's own issuing program are prepaid cards of the
   * program; every other range is a classic credit card of a sandbox bank; all in the US.
   */
  binInfo(bin: string): BinInfo {
    const brand = cardBrand(bin).toUpperCase();
    if (this.issuer?.issues(bin.padEnd(16, '0'))) {
      return {
        bin,
        brand,
        type: 'PREPAID',
        level: 'CLASSIC',
        countryCode: 'US',
        bank: 'Tessera Issuing (sandbox)',
      };
    }
    return { bin, brand, type: 'CREDIT', level: 'CLASSIC', countryCode: 'US', bank: 'Tessera Sandbox Bank' };
  }

  async authorize(tx: Tx, r: AuthorizationRequest): Promise<AuthorizationAnswer> {
    if (this.issuer?.issues(r.card.pan)) return this.authorizeOnUs(tx, this.issuer, r);
    const outcome = decideOutcome(r, this.deps.clock.now(), await this.scripts.next(tx, r.card.pan));
    const now = this.deps.clock.now();
    switch (outcome.kind) {
      case 'decline':
        await this.record(tx, r, 'simulator', 'declined', outcome.reason);
        return { outcome: 'declined', reason: outcome.reason };
      case 'challenge': {
        await this.record(tx, r, 'simulator', 'challenge');
        return { outcome: 'challenge', redirect: await this.challenges.open(tx, r, 'acs') };
      }
      case 'timeout':
        // The network approved, but the answer never reached us: the record knows, the requester does not.
        await this.record(tx, r, 'simulator', 'approved', null, addSeconds(now, RECONCILE_AFTER_SECONDS));
        return { outcome: 'unknown' };
      default: {
        await this.record(tx, r, 'simulator', 'approved');
        return approval(r, outcome);
      }
    }
  }

  /**
   * The answer when it needs no state: an approval or a decline of a card not issued on-us, with nothing
   * scripted for it. Its record is added to the caller's batch, so the authorization is written with the
   * payment in one statement. Undefined when the answer needs the network's state (a challenge to open,
   * a lost answer, an on-us card, a scripted outcome): ask `authorize`.
   */
  authorizeAtOnce(
    batch: StatementBatch,
    r: Omit<AuthorizationRequest, 'returnUrl'>,
  ): AuthorizationAnswer | undefined {
    // A test card the network disputes later keeps its dispute on the record: the general path writes it.
    if (this.scripts.mayExist || this.issuer?.issues(r.card.pan) || TEST_CARDS[r.card.pan]?.dispute) {
      return undefined;
    }
    const outcome = decideOutcome(r, this.deps.clock.now(), undefined);
    let answer: AuthorizationAnswer;
    if (outcome.kind === 'decline') answer = { outcome: 'declined', reason: outcome.reason };
    else if (outcome.kind === 'approve' || outcome.kind === 'frictionless') answer = approval(r, outcome);
    else return undefined;
    const status = answer.outcome === 'approved' ? 'approved' : 'declined';
    batch.add({
      sql: INSERT_AUTHORIZATION,
      parameters: [
        r.reference,
        r.owner,
        r.currency,
        r.amount.toString(),
        capturedWith(r, status).toString(),
        status,
        answer.outcome === 'declined' ? answer.reason : null,
        this.deps.clock.now(),
      ],
    });
    return answer;
  }

  /**
   * Sandbox scripts make outcomes depend on the database: while any may exist, decisions read it. A
   * script (any process's) is heard at once; the sweep notices when the last one was used up.
   */
  watchScripts(processes: { on(channel: string, handler: (payload: string) => unknown): void }): void {
    this.scripts.watch(processes);
  }

  /** Sweep: whether any script is left (the fast path resumes once none is). */
  checkScripts(): Promise<number> {
    return this.scripts.check();
  }

  /** The sandbox's lever: the next authorizations of this card end as scripted, in order. */
  script(pan: string, outcomes: ScriptableOutcome[]): Promise<void> {
    return this.scripts.add(pan, outcomes);
  }

  async capture(tx: Tx, reference: string, amount: bigint): Promise<void> {
    const auth = await this.lock(tx, reference);
    if (auth.status !== 'approved' || BigInt(auth.captured) !== 0n) {
      throw new DomainError('invalid_state', 'the authorization cannot be captured', {
        details: { status: auth.status },
      });
    }
    if (amount > BigInt(auth.amount)) throw new Error('capture above the authorized amount');
    if (auth.route === 'on-us') await this.onUs().capture(tx, reference, amount);
    await tx
      .updateTable('card_network_authorizations')
      .set({
        captured: amount,
        status: amount < BigInt(auth.amount) ? 'released' : 'approved',
        ...(auth.dispute_reason ? { dispute_at: this.disputeAt() } : {}),
      })
      .where('reference', '=', reference)
      .execute();
  }

  async release(tx: Tx, reference: string): Promise<void> {
    const auth = await this.lock(tx, reference);
    if (auth.status !== 'approved' || BigInt(auth.captured) !== 0n) return;
    if (auth.route === 'on-us') await this.onUs().release(tx, reference);
    await tx
      .updateTable('card_network_authorizations')
      .set({ status: 'released' })
      .where('reference', '=', reference)
      .execute();
  }

  async refund(tx: Tx, reference: string, refundReference: string, amount: bigint): Promise<void> {
    const auth = await this.lock(tx, reference);
    const refunded = BigInt(auth.refunded) + amount;
    if (refunded > BigInt(auth.captured)) throw new Error('refund above the captured amount');
    if (auth.route === 'on-us') {
      const answer = await this.onUs().credit(tx, {
        reference: refundReference,
        refundOf: reference,
        amount,
        currency: auth.currency,
        merchant: 'refund',
      });
      if (answer.outcome !== 'approved')
        throw new DomainError('invalid_state', 'the issuer refused the refund');
    }
    await tx
      .updateTable('card_network_authorizations')
      .set({ refunded })
      .where('reference', '=', reference)
      .execute();
  }

  issuerDecided(
    tx: Tx,
    reference: string,
    outcome: 'approved' | 'declined',
    reason?: DeclineReason,
  ): Promise<void> {
    return this.challenges.issuerDecided(tx, reference, outcome, reason);
  }

  /** The hosted ACS page's decision, by its `creq`; answers where to send the browser (none: stay). */
  decideChallenge(creq: string, outcome: 'approved' | 'failed'): Promise<string | null> {
    return this.challenges.decide(creq, outcome);
  }

  /** The challenge a `creq` stands for, as the ACS page shows it. */
  challenge(creq: string): Promise<ChallengeView | undefined> {
    return this.challenges.view(creq);
  }

  /** Sweep: challenges nobody answered on the ACS page fail (on-us ones time out in the issuing API). */
  expireChallenges(): Promise<number> {
    return this.challenges.expireDue();
  }

  /** Sweep: lost answers are resolved from the network's record (the acquirer's reconciliation). */
  async reconcileDue(): Promise<number> {
    return this.eachDue('reconcile_at', async (tx, auth) => {
      await this.tell(tx, auth.owner, {
        reference: auth.reference,
        kind: 'reconciled',
        outcome: auth.status === 'declined' ? 'declined' : 'approved',
        captured: BigInt(auth.captured) > 0n,
        ...(auth.decline_reason ? { reason: auth.decline_reason as DeclineReason } : {}),
      });
      return true;
    });
  }

  /**
   * Sweep: captured payments of the test cards the network disputes are charged back once their time
   * comes (DISPUTE_AFTER_DAYS after capture); the owner hears it as `chargeback` news.
   */
  async chargebacksDue(): Promise<number> {
    return this.eachDue('dispute_at', async (tx, auth) => {
      if (BigInt(auth.captured) <= BigInt(auth.refunded)) return false; // refunded in full meanwhile
      const dispute = auth.dispute_reason === 'not_received' ? 'not_received' : 'fraud';
      await this.tell(tx, auth.owner, {
        reference: auth.reference,
        kind: 'chargeback',
        dispute,
        // The not-received cards lose whatever the merchant sends; fraud is won with evidence.
        ...(dispute === 'not_received' ? { plannedOutcome: 'lost' as const } : {}),
      });
      return true;
    });
  }

  /**
   * The authorizations whose `column` time has come, each in its own transaction: locked (another
   * process's are skipped), the time cleared, then `work` — so each is done once.
   */
  private async eachDue(
    column: 'reconcile_at' | 'dispute_at',
    work: (tx: Tx, auth: Selectable<CardNetworkAuthorizationsTable>) => Promise<boolean>,
  ): Promise<number> {
    const due = await this.deps.db
      .selectFrom('card_network_authorizations')
      .select('reference')
      .where(column, '<=', this.deps.clock.now())
      .limit(200)
      .execute();
    return transactEach(this.deps.transact, due, async (tx, row) => {
      const auth = await tx
        .selectFrom('card_network_authorizations')
        .selectAll()
        .where('reference', '=', row.reference)
        .where(column, 'is not', null)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!auth) return false;
      await tx
        .updateTable('card_network_authorizations')
        .set({ [column]: null })
        .where('reference', '=', auth.reference)
        .execute();
      return work(tx, auth);
    });
  }

  // Internals ------------------------------------------------------------------------------------------

  private async authorizeOnUs(
    tx: Tx,
    issuer: OnUsIssuer,
    r: AuthorizationRequest,
  ): Promise<AuthorizationAnswer> {
    if (r.kind === 'credit') {
      const answer = await issuer.credit(tx, {
        reference: r.reference,
        card: r.card,
        amount: r.amount,
        currency: r.currency,
        merchant: r.merchant,
      });
      if (answer.outcome === 'declined') {
        await this.record(tx, r, 'on-us', 'declined', answer.reason);
        return answer;
      }
      await this.record(tx, r, 'on-us', 'approved');
      return { outcome: 'approved', threeDS: 'none', captured: false };
    }
    // A cardholder paying online is asked by the issuer unless the merchant already authenticated them
    // or the charge is merchant-initiated (recurring, rebill: exempt).
    const challenge = r.initiator === 'customer' && !r.isAuthenticated;
    const answer = await issuer.authorize(tx, {
      reference: r.reference,
      card: r.card,
      amount: r.amount,
      currency: r.currency,
      merchant: r.merchant,
      merchantId: r.merchantId ?? null,
      mcc: r.mcc ?? null,
      merchantCountry: r.merchantCountry ?? null,
      challenge,
    });
    if (answer.outcome === 'declined') {
      await this.record(tx, r, 'on-us', 'declined', answer.reason);
      return answer;
    }
    if (answer.outcome === 'challenge') {
      await this.record(tx, r, 'on-us', 'challenge');
      return { outcome: 'challenge', redirect: await this.challenges.open(tx, r, 'issuer') };
    }
    if (isSale(r)) await issuer.capture(tx, r.reference, r.amount);
    await this.record(tx, r, 'on-us', 'approved');
    return { outcome: 'approved', threeDS: r.isAuthenticated ? 'frictionless' : 'none', captured: isSale(r) };
  }

  /** The network's decision from the card, the amount and what was scripted (no state read). */

  private async record(
    tx: Tx,
    r: AuthorizationRequest,
    route: 'simulator' | 'on-us',
    status: 'approved' | 'declined' | 'challenge',
    reason: DeclineReason | null = null,
    reconcileAt: Date | null = null,
  ): Promise<void> {
    const dispute =
      route === 'simulator' && status !== 'declined' ? TEST_CARDS[r.card.pan]?.dispute : undefined;
    const captured = capturedWith(r, status);
    await tx
      .insertInto('card_network_authorizations')
      .values({
        reference: r.reference,
        owner: r.owner,
        route,
        currency: r.currency,
        amount: r.amount,
        // a credit (OCT) moves the funds at once; a sale is captured with its approval
        captured,
        status,
        decline_reason: reason,
        reconcile_at: reconcileAt,
        dispute_reason: dispute ?? null,
        dispute_at: dispute && captured > 0n ? this.disputeAt() : null,
        created_at: this.deps.clock.now(),
      })
      .execute();
  }

  private disputeAt(): Date {
    return addSeconds(this.deps.clock.now(), DISPUTE_AFTER_DAYS * 86_400);
  }

  private async tell(tx: Tx, owner: string, news: Parameters<NetworkSink>[1]): Promise<void> {
    const sink = this.sinks.get(owner);
    if (!sink) throw new Error(`no card network sink for "${owner}"`);
    await sink(tx, news);
  }

  private async lock(tx: Tx, reference: string) {
    const auth = await tx
      .selectFrom('card_network_authorizations')
      .selectAll()
      .where('reference', '=', reference)
      .forUpdate()
      .executeTakeFirst();
    if (!auth) throw new Error(`no authorization ${reference}`);
    return auth;
  }

  private onUs(): OnUsIssuer {
    if (!this.issuer) throw new Error('no on-us issuer connected');
    return this.issuer;
  }
}

const INSERT_AUTHORIZATION = `
  INSERT INTO card_network_authorizations (reference, owner, route, currency, amount, captured, status,
    decline_reason, created_at)
  VALUES ($1, $2, 'simulator', $3, $4, $5, $6, $7, $8)`;
