// What the issuing API's ways of signing in share (auth-service.ts, email-auth.ts, wallet-auth.ts): the
// limits, the token pair a sign-in ends with, one-time codes and their challenges, lockouts after failed
// logins, and a wallet's address and signature checked.
import { createHmac, randomBytes, randomInt } from 'node:crypto';
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import { hashPassword, hashToken, tokensEqual } from '../../platform/crypto/hashing.ts';
import type { Db, Executor, Tx } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { newId } from '../../platform/ids.ts';
import type { Notifier } from '../../rails/notifier/port.ts';
import type { WalletVerifier } from '../../rails/wallet-verifier/port.ts';
import { ACCESS_TTL_SECONDS, REFRESH_TTL_SECONDS, type TokenSigner } from './tokens.ts';

/** How long an email verification code is valid (default: 15 minutes) */
export const EMAIL_CODE_TTL_SECONDS = 15 * 60;
/** How long a two-factor code is valid (default: 5 minutes) */
export const TWO_FACTOR_CODE_TTL_SECONDS = 5 * 60;
/** How long a wallet challenge may be signed (default: 10 minutes) */
export const WALLET_CHALLENGE_TTL_SECONDS = 10 * 60;
/** Wrong codes accepted per challenge before it is burnt (default: 5) */
export const MAX_CODE_ATTEMPTS = 5;
/** Codes sent per challenge (default: 5) */
export const MAX_CODE_SENDS = 5;
/** Failed logins before the account is locked (default: 5) */
export const MAX_FAILED_LOGINS = 5;
/** How long a lockout lasts (default: 15 minutes) */
export const LOCKOUT_SECONDS = 15 * 60;

export interface TokenPair {
  customerId: string;
  accessToken: string;
  refreshToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  refreshExpiresIn: number;
}

export type LoginResult = TokenPair | { twoFactorRequired: true; sessionToken: string; expiresIn: number };

export interface AuthDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  tokens: TokenSigner;
  notifier: Notifier;
  wallets: WalletVerifier;
  /** Keys the one-time code hashes, so a leaked table does not give codes away */
  codeKey: Uint8Array;
  /** Where the wallet challenge says it comes from */
  publicUrl: string;
}

export const invalidCredentials = () => new DomainError('unauthenticated', 'invalid credentials');
export const invalidCode = () => new DomainError('unauthenticated', 'invalid or expired code');

export type CustomerRow = {
  id: string;
  partner_id: string;
  email: string | null;
  status: 'pending_verification' | 'active';
  password_hash: string | null;
  two_factor_enabled: boolean;
  failed_logins: number;
  locked_until: Date | null;
};

export class AuthKit {
  private dummyHash: Promise<string> | undefined;

  constructor(protected readonly deps: AuthDeps) {}

  protected async issueTokens(
    tx: Tx,
    customerId: string,
    partnerId: string,
    familyId = newId('refreshToken'),
  ): Promise<TokenPair> {
    const refreshToken = `rt_${randomBytes(32).toString('base64url')}`;
    const now = this.deps.clock.now();
    await tx
      .insertInto('issuing_refresh_tokens')
      .values({
        id: newId('refreshToken'),
        customer_id: customerId,
        family_id: familyId,
        token_hash: hashToken(refreshToken),
        status: 'active',
        expires_at: addSeconds(now, REFRESH_TTL_SECONDS),
        created_at: now,
      })
      .execute();
    return {
      customerId,
      accessToken: await this.deps.tokens.accessToken({ customerId, partnerId, familyId }),
      refreshToken,
      tokenType: 'Bearer',
      expiresIn: ACCESS_TTL_SECONDS,
      refreshExpiresIn: REFRESH_TTL_SECONDS,
    };
  }

  protected async session(sessionToken: string) {
    const session = await this.deps.tokens.verifySession(sessionToken);
    if (!session) throw new DomainError('unauthenticated', 'invalid or expired session');
    return session;
  }

  /** Locks a two-factor challenge that is still usable. */
  protected async openChallenge(tx: Tx, challengeId: string) {
    const challenge = await tx
      .selectFrom('issuing_auth_challenges')
      .selectAll()
      .where('id', '=', challengeId)
      .where('purpose', '=', 'two_factor')
      .forUpdate()
      .executeTakeFirst();
    if (!challenge || challenge.consumed_at || challenge.expires_at <= this.deps.clock.now()) {
      throw new DomainError('unauthenticated', 'invalid or expired session');
    }
    return challenge;
  }

  protected async newCode(
    tx: Tx,
    partnerId: string,
    purpose: 'email_verification',
    subject: string,
    customerId: string,
    ttlSeconds: number,
  ): Promise<string> {
    // A new code replaces any earlier one for the same email.
    await tx
      .updateTable('issuing_auth_challenges')
      .set({ consumed_at: this.deps.clock.now() })
      .where('partner_id', '=', partnerId)
      .where('purpose', '=', purpose)
      .where('subject', '=', subject)
      .where('consumed_at', 'is', null)
      .execute();
    const id = newId('challenge');
    const code = formatCode(randomInt(0, 1_000_000));
    await tx
      .insertInto('issuing_auth_challenges')
      .values({
        id,
        partner_id: partnerId,
        purpose,
        customer_id: customerId,
        subject,
        code_hash: this.codeHash(id, code),
        sends: 1,
        expires_at: addSeconds(this.deps.clock.now(), ttlSeconds),
        created_at: this.deps.clock.now(),
      })
      .execute();
    return code;
  }

  /**
   * Checks a code against the subject's live challenge: consumes it on success, counts a wrong attempt
   * (burning the challenge at MAX_CODE_ATTEMPTS) and answers undefined otherwise.
   */
  protected async checkCode(
    tx: Tx,
    partnerId: string,
    purpose: 'email_verification',
    subject: string,
    code: string,
  ) {
    const challenge = await tx
      .selectFrom('issuing_auth_challenges')
      .selectAll()
      .where('partner_id', '=', partnerId)
      .where('purpose', '=', purpose)
      .where('subject', '=', subject)
      .where('consumed_at', 'is', null)
      .where('expires_at', '>', this.deps.clock.now())
      .orderBy('created_at', 'desc')
      .forUpdate()
      .executeTakeFirst();
    if (!challenge) return undefined;
    if (challenge.code_hash && tokensEqual(challenge.code_hash, this.codeHash(challenge.id, code))) {
      await tx
        .updateTable('issuing_auth_challenges')
        .set({ consumed_at: this.deps.clock.now() })
        .where('id', '=', challenge.id)
        .execute();
      return challenge;
    }
    const attempts = challenge.attempts + 1;
    await tx
      .updateTable('issuing_auth_challenges')
      .set({ attempts, ...(attempts >= MAX_CODE_ATTEMPTS ? { consumed_at: this.deps.clock.now() } : {}) })
      .where('id', '=', challenge.id)
      .execute();
    return undefined;
  }

  protected async checkWalletSignature(
    tx: Tx,
    partnerId: string,
    purpose: 'wallet_register' | 'wallet_login',
    walletAddress: string,
    signature: string,
  ): Promise<void> {
    const challenge = await tx
      .selectFrom('issuing_auth_challenges')
      .select(['id', 'message'])
      .where('partner_id', '=', partnerId)
      .where('purpose', '=', purpose)
      .where('subject', '=', walletAddress)
      .where('consumed_at', 'is', null)
      .where('expires_at', '>', this.deps.clock.now())
      .orderBy('created_at', 'desc')
      .forUpdate()
      .executeTakeFirst();
    if (!challenge?.message || !this.deps.wallets.verify(walletAddress, challenge.message, signature)) {
      throw new DomainError('unauthenticated', 'invalid signature or expired challenge');
    }
    // One signature, one use: a replayed signature finds no open challenge.
    await tx
      .updateTable('issuing_auth_challenges')
      .set({ consumed_at: this.deps.clock.now() })
      .where('id', '=', challenge.id)
      .execute();
  }

  protected walletAddress(address: string, field: string): string {
    if (!this.deps.wallets.chainOf(address)) {
      throw new DomainError('validation_failed', 'not an EVM (0x…) or MultiversX (erd1…) address', { field });
    }
    return this.deps.wallets.normalise(address);
  }

  protected isLocked(customer: Pick<CustomerRow, 'locked_until'>): boolean {
    return customer.locked_until !== null && customer.locked_until > this.deps.clock.now();
  }

  protected async recordFailedLogin(
    db: Executor,
    customer: Pick<CustomerRow, 'id' | 'failed_logins'>,
  ): Promise<void> {
    const failed = customer.failed_logins + 1;
    await db
      .updateTable('issuing_customers')
      .set(
        failed >= MAX_FAILED_LOGINS
          ? { failed_logins: 0, locked_until: addSeconds(this.deps.clock.now(), LOCKOUT_SECONDS) }
          : { failed_logins: failed },
      )
      .where('id', '=', customer.id)
      .execute();
  }

  protected codeHash(challengeId: string, code: string): string {
    return createHmac('sha256', this.deps.codeKey).update(`${challengeId}:${code}`).digest('hex');
  }

  protected dummyPasswordHash(): Promise<string> {
    this.dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
    return this.dummyHash;
  }
}

export function formatCode(n: number): string {
  return n.toString().padStart(6, '0');
}
