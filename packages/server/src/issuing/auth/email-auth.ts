// The email flow of the issuing API's customers: register with a password (the policy in
// password-policy.ts) and an emailed code, log in, and the optional second factor by emailed code.
// Failures never tell whether an email exists.
import { randomInt } from 'node:crypto';
import { addSeconds } from '../../platform/clock/clock.ts';
import { hashPassword, tokensEqual, verifyPassword } from '../../platform/crypto/hashing.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { newId } from '../../platform/ids.ts';
import type { Partner } from '../../platform/tenants/partners-service.ts';
import {
  AuthKit,
  EMAIL_CODE_TTL_SECONDS,
  formatCode,
  invalidCode,
  invalidCredentials,
  type LoginResult,
  MAX_CODE_ATTEMPTS,
  MAX_CODE_SENDS,
  type TokenPair,
  TWO_FACTOR_CODE_TTL_SECONDS,
} from './auth-kit.ts';
import { passwordProblem } from './password-policy.ts';
import { SESSION_TTL_SECONDS } from './tokens.ts';

export class EmailAuth extends AuthKit {
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
}
