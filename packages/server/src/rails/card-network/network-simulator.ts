// The card network simulator: decides authorizations from the test cards (and legacy amounts), serves
// 3D Secure challenges through the hosted ACS page, loses answers for the timeout card and reconciles
// them a minute later, and routes cards issued by this platform to the on-us issuer. Its state is
// product tables, so it behaves the same across processes and restarts, on the sandbox clock.
import { createHmac, randomUUID } from 'node:crypto';
import { type Selectable, sql } from 'kysely';
import { cardBrand, isExpired } from '../../platform/cards/card-number.ts';
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import type { CapabilityTokens } from '../../platform/crypto/capability-tokens.ts';
import type { Encryptor } from '../../platform/crypto/encryption.ts';
import type { Db, Tx } from '../../platform/db/database.ts';
import type { CardNetworkAuthorizationsTable } from '../../platform/db/schema.ts';
import type { StatementBatch } from '../../platform/db/statement-batch.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';
import type {
  AuthorizationAnswer,
  AuthorizationRequest,
  BinInfo,
  CardNetwork,
  DeclineReason,
  NetworkSink,
  OnUsIssuer,
} from './port.ts';
import {
  DISPUTE_AFTER_DAYS,
  LEGACY_AMOUNTS,
  SCRIPTABLE_OUTCOMES,
  type ScriptableOutcome,
  type SimulatedOutcome,
  TEST_CARDS,
} from './test-cards.ts';

/** How long after a lost answer the acquirer's reconciliation file tells the truth */
export const RECONCILE_AFTER_SECONDS = 60;
/** How long a cardholder has on the hosted ACS page */
export const CHALLENGE_TTL_SECONDS = 600;

export interface ChallengeView {
  /** What the ACS page posts back (the challenge's capability) */
  creq: string;
  status: 'pending' | 'approved' | 'failed';
  decidedBy: 'acs' | 'issuer';
  merchant: string;
  amount: string;
  currency: string;
  last4: string;
  /** Null only for challenges made before return URLs were encrypted */
  returnUrl: string | null;
  expiresAt: Date;
}

export class CardNetworkSimulator implements CardNetwork {
  private readonly sinks = new Map<string, NetworkSink>();
  private issuer: OnUsIssuer | undefined;
  private readonly scripts = new ScriptsSeen();

  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      transact: Transact;
      publicUrl: string;
      /** Keys the card fingerprints of scripted outcomes (never the number itself) */
      fingerprintKey: Uint8Array;
      /** The requester's return URL carries its own token: kept encrypted */
      encryptor: Encryptor;
      /** `creq`, what the buyer's browser posts to the ACS, is a capability for the challenge */
      capabilities: CapabilityTokens;
    },
  ) {}

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
    const outcome = this.decide(r, await this.scriptedOutcome(tx, r));
    const now = this.deps.clock.now();
    switch (outcome.kind) {
      case 'decline':
        await this.record(tx, r, 'simulator', 'declined', outcome.reason);
        return { outcome: 'declined', reason: outcome.reason };
      case 'challenge': {
        await this.record(tx, r, 'simulator', 'challenge');
        return { outcome: 'challenge', redirect: await this.openChallenge(tx, r, 'acs') };
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
    const outcome = this.decide(r, undefined);
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
    // An empty payload: the notification connection was (re)made, and news may have been missed.
    processes.on(SCRIPTS_CHANNEL, (payload) => {
      this.scripts.heard();
      return payload === '' ? this.checkScripts() : undefined;
    });
  }

  /** Sweep: whether any script is left (the fast path resumes once none is). */
  async checkScripts(): Promise<number> {
    const since = this.scripts.generation;
    const row = await this.deps.db
      .selectFrom('card_network_scripted_outcomes')
      .select('id')
      .limit(1)
      .executeTakeFirst();
    this.scripts.checked(since, row !== undefined);
    return 0;
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

  async issuerDecided(
    tx: Tx,
    reference: string,
    outcome: 'approved' | 'declined',
    reason?: DeclineReason,
  ): Promise<void> {
    const challenge = await tx
      .selectFrom('card_network_challenges')
      .select(['id', 'status'])
      .where('reference', '=', reference)
      .forUpdate()
      .executeTakeFirst();
    if (challenge?.status !== 'pending') return;
    await this.finishChallenge(tx, challenge.id, reference, outcome, reason ?? 'authentication_failed');
  }

  /** The hosted ACS page's decision, by its `creq`; answers where to send the browser (none: stay). */
  async decideChallenge(creq: string, outcome: 'approved' | 'failed'): Promise<string | null> {
    const challengeId = this.deps.capabilities.open('acs-challenge', creq);
    if (!challengeId) throw notFound('challenge');
    return this.deps.transact(async (tx) => {
      const challenge = await tx
        .selectFrom('card_network_challenges')
        .selectAll()
        .where('id', '=', challengeId)
        .forUpdate()
        .executeTakeFirst();
      if (!challenge) throw notFound('challenge');
      if (challenge.decided_by !== 'acs') {
        throw new DomainError('forbidden', 'this card’s issuer asks the cardholder in its own app');
      }
      if (challenge.status !== 'pending') return this.returnUrlOf(challenge);
      if (challenge.expires_at <= this.deps.clock.now()) {
        throw new DomainError('invalid_state', 'the challenge has expired');
      }
      await this.finishChallenge(
        tx,
        challenge.id,
        challenge.reference,
        outcome === 'approved' ? 'approved' : 'declined',
        'authentication_failed',
      );
      return this.returnUrlOf(challenge);
    });
  }

  /** Where the requester asked the browser back (challenges from before it was encrypted have none). */
  private returnUrlOf(challenge: { id: string; return_url_enc: string | null; return_url: string | null }) {
    return challenge.return_url_enc
      ? this.deps.encryptor.decrypt(challenge.return_url_enc, `acs-return:${challenge.id}`)
      : challenge.return_url;
  }

  /** The challenge a `creq` stands for, as the ACS page shows it. */
  async challenge(creq: string): Promise<ChallengeView | undefined> {
    const challengeId = this.deps.capabilities.open('acs-challenge', creq);
    if (!challengeId) return undefined;
    const row = await this.deps.db
      .selectFrom('card_network_challenges')
      .selectAll()
      .where('id', '=', challengeId)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      creq,
      status: row.status,
      decidedBy: row.decided_by,
      merchant: row.merchant,
      amount: formatAmountIn(BigInt(row.amount), row.currency),
      currency: row.currency,
      last4: row.last4,
      returnUrl: this.returnUrlOf(row),
      expiresAt: row.expires_at,
    };
  }

  /** Sweep: challenges nobody answered on the ACS page fail (on-us ones time out in the issuing API). */
  async expireChallenges(): Promise<number> {
    const due = await this.deps.db
      .selectFrom('card_network_challenges')
      .select(['id', 'reference'])
      .where('status', '=', 'pending')
      .where('decided_by', '=', 'acs')
      .where('expires_at', '<=', this.deps.clock.now())
      .limit(200)
      .execute();
    return transactEach(this.deps.transact, due, async (tx, row) => {
      const locked = await tx
        .selectFrom('card_network_challenges')
        .select('status')
        .where('id', '=', row.id)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (locked?.status !== 'pending') return false;
      await this.finishChallenge(tx, row.id, row.reference, 'declined', 'authentication_failed');
      return true;
    });
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

  /** Sandbox: the next authorizations of this card number end as scripted, in order. */
  async script(pan: string, outcomes: ScriptableOutcome[]): Promise<void> {
    const now = this.deps.clock.now();
    this.scripts.heard();
    // Other processes hear of it at the commit, before this answers.
    await this.deps.transact(async (tx) => {
      await tx
        .insertInto('card_network_scripted_outcomes')
        .values(
          outcomes.map((outcome) => ({ pan_fingerprint: this.fingerprint(pan), outcome, created_at: now })),
        )
        .execute();
      await sql`SELECT pg_notify(${SCRIPTS_CHANNEL}, 'scripted')`.execute(tx);
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
      challenge,
    });
    if (answer.outcome === 'declined') {
      await this.record(tx, r, 'on-us', 'declined', answer.reason);
      return answer;
    }
    if (answer.outcome === 'challenge') {
      await this.record(tx, r, 'on-us', 'challenge');
      return { outcome: 'challenge', redirect: await this.openChallenge(tx, r, 'issuer') };
    }
    if (isSale(r)) await issuer.capture(tx, r.reference, r.amount);
    await this.record(tx, r, 'on-us', 'approved');
    return { outcome: 'approved', threeDS: r.isAuthenticated ? 'frictionless' : 'none', captured: isSale(r) };
  }

  /** The next outcome scripted for this card, used up by this authorization. */
  private async scriptedOutcome(tx: Tx, r: AuthorizationRequest): Promise<ScriptableOutcome | undefined> {
    if (!this.scripts.mayExist) return undefined;
    const scripted = await tx
      .deleteFrom('card_network_scripted_outcomes')
      .where(
        'id',
        '=',
        tx
          .selectFrom('card_network_scripted_outcomes')
          .select('id')
          .where('pan_fingerprint', '=', this.fingerprint(r.card.pan))
          .orderBy('id')
          .limit(1),
      )
      .returning('outcome')
      .executeTakeFirst();
    return scripted?.outcome as ScriptableOutcome | undefined;
  }

  /** The network's decision from the card, the amount and what was scripted (no state read). */
  private decide(
    r: Omit<AuthorizationRequest, 'returnUrl'>,
    scripted: ScriptableOutcome | undefined,
  ): SimulatedOutcome {
    let outcome: SimulatedOutcome = scripted
      ? SCRIPTABLE_OUTCOMES[scripted]
      : (TEST_CARDS[r.card.pan]?.outcome ?? { kind: 'approve' });
    if (isExpired(r.card, this.deps.clock.now())) return { kind: 'decline', reason: 'expired_card' };
    if (outcome.kind === 'approve' || outcome.kind === 'frictionless') {
      const legacy = LEGACY_AMOUNTS[formatAmountIn(r.amount, r.currency)];
      if (legacy) return { kind: 'decline', reason: legacy };
    }
    // Pushing funds to a card and merchant-initiated charges are never challenged.
    const exempt = r.kind === 'credit' || r.initiator === 'merchant';
    if (outcome.kind === 'soft_decline') {
      if (exempt) return { kind: 'decline', reason: 'soft_decline' };
      outcome =
        r.isSoftDeclineRetry || r.isAuthenticated
          ? { kind: 'challenge' }
          : { kind: 'decline', reason: 'soft_decline' };
    }
    if (outcome.kind === 'challenge' && (exempt || r.isAuthenticated)) return { kind: 'approve' };
    if (outcome.kind === 'frictionless' && exempt) return { kind: 'approve' };
    return outcome;
  }

  private async openChallenge(tx: Tx, r: AuthorizationRequest, decidedBy: 'acs' | 'issuer') {
    const id = randomUUID();
    const now = this.deps.clock.now();
    await tx
      .insertInto('card_network_challenges')
      .values({
        id,
        reference: r.reference,
        decided_by: decidedBy,
        status: 'pending',
        merchant: r.merchant,
        currency: r.currency,
        amount: r.amount,
        last4: r.card.pan.slice(-4),
        return_url: null,
        return_url_enc: this.deps.encryptor.encrypt(r.returnUrl, `acs-return:${id}`),
        expires_at: addSeconds(now, CHALLENGE_TTL_SECONDS),
        created_at: now,
      })
      .execute();
    // The 3DS2 browser flow: the merchant's page posts `creq` to the ACS.
    return {
      url: `${this.deps.publicUrl}/acs/challenge`,
      formMethod: 'POST' as const,
      params: { creq: this.deps.capabilities.issue('acs-challenge', id) },
    };
  }

  private async finishChallenge(
    tx: Tx,
    challengeId: string,
    reference: string,
    outcome: 'approved' | 'declined',
    reason: DeclineReason,
  ): Promise<void> {
    await tx
      .updateTable('card_network_challenges')
      .set({ status: outcome === 'approved' ? 'approved' : 'failed', decided_at: this.deps.clock.now() })
      .where('id', '=', challengeId)
      .execute();
    const auth = await tx
      .updateTable('card_network_authorizations')
      .set({ status: outcome, decline_reason: outcome === 'declined' ? reason : null })
      .where('reference', '=', reference)
      .returning('owner')
      .executeTakeFirstOrThrow();
    await this.tell(tx, auth.owner, {
      reference,
      kind: 'challenge_decided',
      outcome,
      ...(outcome === 'declined' ? { reason } : {}),
    });
  }

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

  private fingerprint(pan: string): string {
    return createHmac('sha256', this.deps.fingerprintKey).update(pan).digest('hex');
  }
}

const isSale = (r: Omit<AuthorizationRequest, 'returnUrl'>) => r.kind === 'purchase' && r.capture;

// a credit (OCT) moves the funds at once; a sale is captured with its approval
const capturedWith = (
  r: Omit<AuthorizationRequest, 'returnUrl'>,
  status: 'approved' | 'declined' | 'challenge',
) => (status === 'approved' && (r.kind === 'credit' || isSale(r)) ? r.amount : 0n);

function approval(
  r: Omit<AuthorizationRequest, 'returnUrl'>,
  outcome: SimulatedOutcome,
): Extract<AuthorizationAnswer, { outcome: 'approved' }> {
  const frictionless = outcome.kind === 'frictionless' || (r.kind === 'purchase' && r.isAuthenticated);
  return { outcome: 'approved', threeDS: frictionless ? 'frictionless' : 'none', captured: isSale(r) };
}

/** Sandbox scripts were added (by any process): decisions read them until none is left. */
const SCRIPTS_CHANNEL = 'tessera_network_scripts';

const INSERT_AUTHORIZATION = `
  INSERT INTO card_network_authorizations (reference, owner, route, currency, amount, captured, status,
    decline_reason, created_at)
  VALUES ($1, $2, 'simulator', $3, $4, $5, $6, $7, $8)`;

/**
 * Whether sandbox scripts may exist. Assumed until the sweep has looked; a script heard of (here, or by
 * notification from another process) sets it again; a look that raced a script does not clear it.
 */
class ScriptsSeen {
  mayExist = true;
  generation = 0;

  heard(): void {
    this.generation++;
    this.mayExist = true;
  }

  checked(sinceGeneration: number, found: boolean): void {
    if (found) this.mayExist = true;
    else if (sinceGeneration === this.generation) this.mayExist = false;
  }
}
