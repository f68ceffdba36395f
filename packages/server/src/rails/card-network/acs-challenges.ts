// The simulated network's 3-D Secure challenges: opened for an authorization the card's test profile (or
// its on-us issuer) challenges, decided on the hosted ACS page by its `creq` or by the issuer in its own
// app, failed when nobody answers in time; each decision is told to the authorization's owner.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import type { CapabilityTokens } from '../../platform/crypto/capability-tokens.ts';
import type { Encryptor } from '../../platform/crypto/encryption.ts';
import type { Db, Tx } from '../../platform/db/database.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';
import type { AuthorizationRequest, DeclineReason, NetworkSink } from './port.ts';

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

/** Tells an authorization's owner what the network decided (the simulator's sinks) */
type Tell = (tx: Tx, owner: string, news: Parameters<NetworkSink>[1]) => Promise<void>;

export interface AcsChallengesDeps {
  db: Db;
  clock: Clock;
  transact: Transact;
  publicUrl: string;
  /** The requester's return URL carries its own token: kept encrypted */
  encryptor: Encryptor;
  /** `creq`, what the buyer's browser posts to the ACS, is a capability for the challenge */
  capabilities: CapabilityTokens;
}

export class AcsChallenges {
  constructor(
    private readonly deps: AcsChallengesDeps,
    private readonly tell: Tell,
  ) {}

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
    await this.finish(tx, challenge.id, reference, outcome, reason ?? 'authentication_failed');
  }

  /** The hosted ACS page's decision, by its `creq`; answers where to send the browser (none: stay). */
  async decide(creq: string, outcome: 'approved' | 'failed'): Promise<string | null> {
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
      await this.finish(
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
  async view(creq: string): Promise<ChallengeView | undefined> {
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
  async expireDue(): Promise<number> {
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
      await this.finish(tx, row.id, row.reference, 'declined', 'authentication_failed');
      return true;
    });
  }

  async open(tx: Tx, r: AuthorizationRequest, decidedBy: 'acs' | 'issuer') {
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

  private async finish(
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
}
