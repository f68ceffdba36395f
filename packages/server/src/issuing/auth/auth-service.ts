// Customer authentication of the card issuing API (docs/issuing.md, Authentication; docs/wire-compatibility.md auth
// routes): the partner flow (server-side, x-partner-api-key), the email flow (password policy, email
// verification code, optional two-factor), the wallet flow (signed challenge), and refresh rotation
// with reuse detection. Failures never tell whether an email exists.
import { createHmac, randomBytes, randomInt } from 'node:crypto';
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import { hashPassword, hashToken, tokensEqual, verifyPassword } from '../../platform/crypto/hashing.ts';
import type { Db, Executor, Tx } from '../../platform/db/database.ts';
import { PG_ERRORS, pgErrorCode } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { newId } from '../../platform/ids.ts';
import type { Partner } from '../../platform/tenants/partners-service.ts';
import type { Notifier } from '../../rails/notifier/port.ts';
import type { WalletVerifier } from '../../rails/wallet-verifier/port.ts';
import { evmChecksumAddress } from '../../rails/wallet-verifier/signature-verifier.ts';
import { passwordProblem } from './password-policy.ts';
import { walletMessage } from './siwe-message.ts';
import { ACCESS_TTL_SECONDS, REFRESH_TTL_SECONDS, SESSION_TTL_SECONDS, type TokenSigner } from './tokens.ts';

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

const invalidCredentials = () => new DomainError('unauthenticated', 'invalid credentials');
const invalidCode = () => new DomainError('unauthenticated', 'invalid or expired code');

type CustomerRow = {
  id: string;
  partner_id: string;
  email: string | null;
  status: 'pending_verification' | 'active';
  password_hash: string | null;
  two_factor_enabled: boolean;
  failed_logins: number;
  locked_until: Date | null;
};

export class AuthService {
  private dummyHash: Promise<string> | undefined;

  constructor(private readonly deps: AuthDeps) {}

  // Partner flow ---------------------------------------------------------------------------------------

  /** The partner's backend registers one of its users; a duplicate email or user id is a 409. */
  async registerByPartner(
    partner: Partner,
    input: { email?: string; userId?: string; walletAddress?: string },
  ): Promise<{ customerId: string }> {
    if (!input.email && !input.userId) {
      throw new DomainError('validation_failed', 'email or userId is required', { field: 'email' });
    }
    const walletAddress = input.walletAddress
      ? this.walletAddress(input.walletAddress, 'walletAddress')
      : null;
    try {
      const row = await this.deps.db
        .insertInto('issuing_customers')
        .values({
          id: newId('customer'),
          partner_id: partner.id,
          external_user_id: input.userId ?? null,
          email: input.email?.toLowerCase() ?? null,
          wallet_address: walletAddress,
          status: 'active',
          created_at: this.deps.clock.now(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { customerId: row.id };
    } catch (err) {
      if (pgErrorCode(err) !== PG_ERRORS.uniqueViolation) throw err;
      const existing = await this.findPartnerCustomer(partner.id, { ...input, walletAddress });
      throw new DomainError('conflict', 'a customer with this email, user id or wallet already exists', {
        details: existing ? { customerId: existing } : {},
      });
    }
  }

  /** The partner's backend logs one of its customers in, by Tessera's customer id or its own user id. */
  async loginByPartner(
    partner: Partner,
    input: { customerId?: string; userId?: string },
  ): Promise<TokenPair> {
    let query = this.deps.db
      .selectFrom('issuing_customers')
      .select(['id', 'status'])
      .where('partner_id', '=', partner.id);
    if (input.customerId) query = query.where('id', '=', input.customerId);
    else if (input.userId) query = query.where('external_user_id', '=', input.userId);
    else
      throw new DomainError('validation_failed', 'customerId or userId is required', { field: 'customerId' });
    const customer = await query.executeTakeFirst();
    if (!customer) throw notFound('customer');
    return this.deps.transact((tx) => this.issueTokens(tx, customer.id, partner.id));
  }

  // Email flow -----------------------------------------------------------------------------------------

  /**
   * Starts an email registration and sends a verification code. The answer is the same whether or not
   * the email is taken; an existing account's owner is told by email instead.
   */
  async registerEmail(partner: Partner, input: { email: string; password: string }): Promise<void> {
    const problem = passwordProblem(input.password);
    if (problem) throw new DomainError('validation_failed', `password ${problem}`, { field: 'password' });
    const email = input.email.toLowerCase();
    const passwordHash = await hashPassword(input.password);
    await this.deps.transact(async (tx) => {
      const existing = await tx
        .selectFrom('issuing_customers')
        .select(['id', 'status'])
        .where('partner_id', '=', partner.id)
        .where('email', '=', email)
        .forUpdate()
        .executeTakeFirst();
      if (existing?.status === 'active') {
        await this.deps.notifier.send(tx, {
          channel: 'email',
          recipient: email,
          subject: `Someone tried to register with ${partner.name}`,
          body: `Someone tried to create an account with this email address at ${partner.name}. If it was you, log in instead; otherwise you can ignore this message.`,
        });
        return;
      }
      const customerId = existing?.id ?? newId('customer');
      if (existing) {
        await tx
          .updateTable('issuing_customers')
          .set({ password_hash: passwordHash })
          .where('id', '=', customerId)
          .execute();
      } else {
        await tx
          .insertInto('issuing_customers')
          .values({
            id: customerId,
            partner_id: partner.id,
            email,
            password_hash: passwordHash,
            status: 'pending_verification',
            created_at: this.deps.clock.now(),
          })
          .execute();
      }
      const code = await this.newCode(
        tx,
        partner.id,
        'email_verification',
        email,
        customerId,
        EMAIL_CODE_TTL_SECONDS,
      );
      await this.deps.notifier.send(tx, {
        channel: 'email',
        recipient: email,
        subject: `Your ${partner.name} verification code`,
        body: `Your verification code is ${code}. It expires in ${EMAIL_CODE_TTL_SECONDS / 60} minutes.`,
      });
    });
  }

  /** Completes an email registration with the emailed code; answers the customer's first tokens. */
  async verifyEmail(partner: Partner, input: { email: string; code: string }): Promise<TokenPair> {
    const email = input.email.toLowerCase();
    const tokens = await this.deps.transact(async (tx) => {
      const challenge = await this.checkCode(tx, partner.id, 'email_verification', email, input.code);
      if (!challenge?.customer_id) return undefined;
      await tx
        .updateTable('issuing_customers')
        .set({ status: 'active', email_verified_at: this.deps.clock.now() })
        .where('id', '=', challenge.customer_id)
        .execute();
      return this.issueTokens(tx, challenge.customer_id, partner.id);
    });
    // Thrown after the commit, so the counted wrong attempt stays counted.
    if (!tokens) throw invalidCode();
    return tokens;
  }

  /** Password login; with two-factor on, answers a session token for /2fa/send and /2fa/verify. */
  async loginEmail(partner: Partner, input: { email: string; password: string }): Promise<LoginResult> {
    const email = input.email.toLowerCase();
    const customer = await this.deps.db
      .selectFrom('issuing_customers')
      .select([
        'id',
        'partner_id',
        'email',
        'status',
        'password_hash',
        'two_factor_enabled',
        'failed_logins',
        'locked_until',
      ])
      .where('partner_id', '=', partner.id)
      .where('email', '=', email)
      .executeTakeFirst();
    // Hash work is done for unknown emails too, so timing does not tell who has an account.
    const isPasswordRight = await verifyPassword(
      customer?.password_hash ?? (await this.dummyPasswordHash()),
      input.password,
    );
    if (customer?.status !== 'active' || this.isLocked(customer)) throw invalidCredentials();
    if (!isPasswordRight) {
      await this.recordFailedLogin(this.deps.db, customer);
      throw invalidCredentials();
    }
    return this.deps.transact(async (tx) => {
      await tx
        .updateTable('issuing_customers')
        .set({ failed_logins: 0, locked_until: null })
        .where('id', '=', customer.id)
        .execute();
      if (!customer.two_factor_enabled) return this.issueTokens(tx, customer.id, partner.id);
      const challengeId = newId('challenge');
      await tx
        .insertInto('issuing_auth_challenges')
        .values({
          id: challengeId,
          partner_id: partner.id,
          purpose: 'two_factor',
          customer_id: customer.id,
          subject: email,
          expires_at: addSeconds(this.deps.clock.now(), SESSION_TTL_SECONDS),
          created_at: this.deps.clock.now(),
        })
        .execute();
      const sessionToken = await this.deps.tokens.sessionToken({
        customerId: customer.id,
        partnerId: partner.id,
        challengeId,
      });
      return { twoFactorRequired: true as const, sessionToken, expiresIn: SESSION_TTL_SECONDS };
    });
  }

  // Two-factor -----------------------------------------------------------------------------------------

  /** Sends (or re-sends) a 6-digit code for the session's login; at most MAX_CODE_SENDS per session. */
  async sendTwoFactorCode(sessionToken: string): Promise<{ channel: 'email'; expiresAt: Date }> {
    const session = await this.session(sessionToken);
    return this.deps.transact(async (tx) => {
      const challenge = await this.openChallenge(tx, session.challengeId);
      if (challenge.sends >= MAX_CODE_SENDS) {
        throw new DomainError('rate_limited', 'too many codes sent for this login; log in again', {
          retryAfterSeconds: 60,
        });
      }
      const code = formatCode(randomInt(0, 1_000_000));
      const expiresAt = addSeconds(this.deps.clock.now(), TWO_FACTOR_CODE_TTL_SECONDS);
      await tx
        .updateTable('issuing_auth_challenges')
        .set((eb) => ({
          code_hash: this.codeHash(challenge.id, code),
          sends: eb('sends', '+', 1),
          expires_at: expiresAt < challenge.expires_at ? expiresAt : challenge.expires_at,
        }))
        .where('id', '=', challenge.id)
        .execute();
      await this.deps.notifier.send(tx, {
        channel: 'email',
        recipient: challenge.subject,
        subject: 'Your login code',
        body: `Your login code is ${code}. It expires in ${TWO_FACTOR_CODE_TTL_SECONDS / 60} minutes.`,
      });
      return { channel: 'email' as const, expiresAt };
    });
  }

  /** Exchanges the session and its code for tokens; too many wrong codes burn the session and count as a failed login. */
  async verifyTwoFactor(sessionToken: string, code: string): Promise<TokenPair> {
    const session = await this.session(sessionToken);
    const outcome = await this.deps.transact(async (tx) => {
      const challenge = await this.openChallenge(tx, session.challengeId);
      if (challenge.code_hash && tokensEqual(challenge.code_hash, this.codeHash(challenge.id, code))) {
        await tx
          .updateTable('issuing_auth_challenges')
          .set({ consumed_at: this.deps.clock.now() })
          .where('id', '=', challenge.id)
          .execute();
        return { tokens: await this.issueTokens(tx, session.customerId, session.partnerId) };
      }
      const attempts = challenge.attempts + 1;
      await tx
        .updateTable('issuing_auth_challenges')
        .set({ attempts, ...(attempts >= MAX_CODE_ATTEMPTS ? { consumed_at: this.deps.clock.now() } : {}) })
        .where('id', '=', challenge.id)
        .execute();
      if (attempts >= MAX_CODE_ATTEMPTS) {
        const customer = await tx
          .selectFrom('issuing_customers')
          .select(['id', 'failed_logins', 'locked_until'])
          .where('id', '=', session.customerId)
          .executeTakeFirstOrThrow();
        await this.recordFailedLogin(tx, customer);
      }
      return { tokens: undefined };
    });
    if (!outcome.tokens) throw invalidCode();
    return outcome.tokens;
  }

  async setTwoFactor(customerId: string, enabled: boolean): Promise<{ twoFactorEnabled: boolean }> {
    const customer = await this.deps.db
      .selectFrom('issuing_customers')
      .select(['email'])
      .where('id', '=', customerId)
      .executeTakeFirstOrThrow();
    if (enabled && !customer.email) {
      throw new DomainError('invalid_state', 'two-factor codes are sent by email: this customer has none');
    }
    await this.deps.db
      .updateTable('issuing_customers')
      .set({ two_factor_enabled: enabled })
      .where('id', '=', customerId)
      .execute();
    return { twoFactorEnabled: enabled };
  }

  // Wallet flow ----------------------------------------------------------------------------------------

  /** Issues the message the wallet must sign (EIP-4361 for EVM addresses). */
  async walletChallenge(
    partner: Partner,
    purpose: 'wallet_register' | 'wallet_login',
    address: string,
  ): Promise<{ challengeId: string; message: string; expiresAt: Date }> {
    const walletAddress = this.walletAddress(address, 'walletAddress');
    const chain = this.deps.wallets.chainOf(walletAddress) ?? 'evm';
    const now = this.deps.clock.now();
    const expiresAt = addSeconds(now, WALLET_CHALLENGE_TTL_SECONDS);
    const url = new URL(this.deps.publicUrl);
    const message = walletMessage({
      domain: url.host,
      uri: url.origin,
      address: chain === 'evm' ? evmChecksumAddress(walletAddress) : walletAddress,
      statement: `${purpose === 'wallet_register' ? 'Register with' : 'Log in to'} ${partner.name} with this wallet.`,
      nonce: randomBytes(12).toString('hex'),
      issuedAt: now,
      expiresAt,
      chain,
    });
    const challengeId = newId('challenge');
    // A new challenge replaces any earlier open one for the wallet (as a new email code does): the
    // signature is checked against one message only, whatever the clock's resolution.
    await this.deps.transact(async (tx) => {
      await tx
        .updateTable('issuing_auth_challenges')
        .set({ consumed_at: now })
        .where('partner_id', '=', partner.id)
        .where('purpose', '=', purpose)
        .where('subject', '=', walletAddress)
        .where('consumed_at', 'is', null)
        .execute();
      await tx
        .insertInto('issuing_auth_challenges')
        .values({
          id: challengeId,
          partner_id: partner.id,
          purpose,
          subject: walletAddress,
          message,
          expires_at: expiresAt,
          created_at: now,
        })
        .execute();
    });
    return { challengeId, message, expiresAt };
  }

  /** Registers the wallet's holder as a customer, proven by a signature over the latest challenge. */
  async registerWallet(
    partner: Partner,
    input: { walletAddress: string; signature: string; email?: string },
  ): Promise<TokenPair> {
    const walletAddress = this.walletAddress(input.walletAddress, 'walletAddress');
    return this.deps.transact(async (tx) => {
      await this.checkWalletSignature(tx, partner.id, 'wallet_register', walletAddress, input.signature);
      const existing = await tx
        .selectFrom('issuing_customers')
        .select('id')
        .where('partner_id', '=', partner.id)
        .where('wallet_address', '=', walletAddress)
        .executeTakeFirst();
      // The signature proves the wallet is theirs, so naming its customer reveals nothing new.
      if (existing) {
        throw new DomainError('conflict', 'this wallet is already registered; log in instead', {
          field: 'walletAddress',
          details: { customerId: existing.id },
        });
      }
      const customerId = newId('customer');
      try {
        await tx
          .insertInto('issuing_customers')
          .values({
            id: customerId,
            partner_id: partner.id,
            wallet_address: walletAddress,
            email: input.email?.toLowerCase() ?? null,
            status: 'active',
            created_at: this.deps.clock.now(),
          })
          .execute();
      } catch (err) {
        // The wallet was checked just above: the email is the one already taken (not said by whom).
        if (pgErrorCode(err) !== PG_ERRORS.uniqueViolation) throw err;
        throw new DomainError('conflict', 'this email belongs to another customer', { field: 'email' });
      }
      return this.issueTokens(tx, customerId, partner.id);
    });
  }

  async loginWallet(
    partner: Partner,
    input: { walletAddress: string; signature: string },
  ): Promise<TokenPair> {
    const walletAddress = this.walletAddress(input.walletAddress, 'walletAddress');
    return this.deps.transact(async (tx) => {
      await this.checkWalletSignature(tx, partner.id, 'wallet_login', walletAddress, input.signature);
      const customer = await tx
        .selectFrom('issuing_customers')
        .select('id')
        .where('partner_id', '=', partner.id)
        .where('wallet_address', '=', walletAddress)
        .where('status', '=', 'active')
        .executeTakeFirst();
      if (!customer) throw invalidCredentials();
      return this.issueTokens(tx, customer.id, partner.id);
    });
  }

  // Refresh --------------------------------------------------------------------------------------------

  /**
   * Rotates a refresh token. Presenting one that was already rotated means it leaked (or the client
   * raced itself): the whole family is revoked and the customer must log in again.
   */
  async refresh(refreshToken: string): Promise<TokenPair> {
    const outcome = await this.deps.transact(async (tx) => {
      const row = await tx
        .selectFrom('issuing_refresh_tokens as r')
        .innerJoin('issuing_customers as c', 'c.id', 'r.customer_id')
        .select(['r.id', 'r.family_id', 'r.status', 'r.expires_at', 'r.customer_id', 'c.partner_id'])
        .where('r.token_hash', '=', hashToken(refreshToken))
        .forUpdate('r')
        .executeTakeFirst();
      if (!row) return undefined;
      if (row.status === 'rotated') {
        await tx
          .updateTable('issuing_refresh_tokens')
          .set({ status: 'revoked' })
          .where('family_id', '=', row.family_id)
          .execute();
        return undefined;
      }
      if (row.status !== 'active' || row.expires_at <= this.deps.clock.now()) return undefined;
      await tx
        .updateTable('issuing_refresh_tokens')
        .set({ status: 'rotated' })
        .where('id', '=', row.id)
        .execute();
      return this.issueTokens(tx, row.customer_id, row.partner_id, row.family_id);
    });
    if (!outcome) throw new DomainError('unauthenticated', 'invalid refresh token');
    return outcome;
  }

  /**
   * The customer a valid access token belongs to, or undefined. The token's login must still stand: a
   * revoked refresh family (logout, a reused refresh token) revokes its access tokens at once.
   */
  async authenticateAccess(token: string): Promise<{ customerId: string; partnerId: string } | undefined> {
    const claims = await this.deps.tokens.verifyAccess(token);
    if (!claims) return undefined;
    const customer = await this.deps.db
      .selectFrom('issuing_customers as c')
      .select(['c.id', 'c.partner_id'])
      .where('c.id', '=', claims.customerId)
      .where('c.partner_id', '=', claims.partnerId)
      .where('c.status', '=', 'active')
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('issuing_refresh_tokens as r')
              .select('r.id')
              .where('r.family_id', '=', claims.familyId)
              .where('r.status', '=', 'revoked'),
          ),
        ),
      )
      .executeTakeFirst();
    return customer ? { customerId: customer.id, partnerId: customer.partner_id } : undefined;
  }

  /**
   * Ends a login (Tessera's addition to the spec): every refresh and access token of its family stops
   * working on the next request. Takes the login's access token or its current refresh token.
   */
  async logout(token: string): Promise<void> {
    const claims = await this.deps.tokens.verifyAccess(token);
    const familyId =
      claims?.familyId ??
      (
        await this.deps.db
          .selectFrom('issuing_refresh_tokens')
          .select('family_id')
          .where('token_hash', '=', hashToken(token))
          .where('status', '=', 'active')
          .executeTakeFirst()
      )?.family_id;
    if (!familyId) throw new DomainError('unauthenticated', 'a valid access or refresh token is required');
    await this.deps.transact((tx) =>
      tx
        .updateTable('issuing_refresh_tokens')
        .set({ status: 'revoked' })
        .where('family_id', '=', familyId)
        .execute(),
    );
  }

  // Internals ------------------------------------------------------------------------------------------

  private async issueTokens(
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

  private async session(sessionToken: string) {
    const session = await this.deps.tokens.verifySession(sessionToken);
    if (!session) throw new DomainError('unauthenticated', 'invalid or expired session');
    return session;
  }

  /** Locks a two-factor challenge that is still usable. */
  private async openChallenge(tx: Tx, challengeId: string) {
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

  private async newCode(
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
  private async checkCode(
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

  private async checkWalletSignature(
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

  private walletAddress(address: string, field: string): string {
    if (!this.deps.wallets.chainOf(address)) {
      throw new DomainError('validation_failed', 'not an EVM (0x…) or MultiversX (erd1…) address', { field });
    }
    return this.deps.wallets.normalise(address);
  }

  private isLocked(customer: Pick<CustomerRow, 'locked_until'>): boolean {
    return customer.locked_until !== null && customer.locked_until > this.deps.clock.now();
  }

  private async recordFailedLogin(
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

  private codeHash(challengeId: string, code: string): string {
    return createHmac('sha256', this.deps.codeKey).update(`${challengeId}:${code}`).digest('hex');
  }

  private dummyPasswordHash(): Promise<string> {
    this.dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
    return this.dummyHash;
  }

  private async findPartnerCustomer(
    partnerId: string,
    input: { email?: string; userId?: string; walletAddress?: string | null },
  ) {
    const row = await this.deps.db
      .selectFrom('issuing_customers')
      .select('id')
      .where('partner_id', '=', partnerId)
      .where((eb) =>
        eb.or([
          ...(input.email ? [eb('email', '=', input.email.toLowerCase())] : []),
          ...(input.userId ? [eb('external_user_id', '=', input.userId)] : []),
          ...(input.walletAddress ? [eb('wallet_address', '=', input.walletAddress)] : []),
        ]),
      )
      .executeTakeFirst();
    return row?.id;
  }
}

function formatCode(n: number): string {
  return n.toString().padStart(6, '0');
}
