// Customer authentication of the card issuing API (docs/issuing.md, Authentication; docs/wire-compatibility.md auth
// routes): the partner flow (server-side, x-partner-api-key) and refresh rotation with reuse detection
// here; the email flow (password policy, email verification code, optional two-factor) in email-auth.ts;
// the wallet flow (signed challenge) in wallet-auth.ts. Failures never tell whether an email exists.
import { hashToken } from '../../platform/crypto/hashing.ts';
import { PG_ERRORS, pgErrorCode } from '../../platform/db/database.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { newId } from '../../platform/ids.ts';
import type { Partner } from '../../platform/tenants/partners-service.ts';
import { type AuthDeps, AuthKit, type TokenPair } from './auth-kit.ts';
import { EmailAuth } from './email-auth.ts';
import { WalletAuth } from './wallet-auth.ts';

export {
  type AuthDeps,
  EMAIL_CODE_TTL_SECONDS,
  LOCKOUT_SECONDS,
  type LoginResult,
  MAX_CODE_ATTEMPTS,
  MAX_CODE_SENDS,
  MAX_FAILED_LOGINS,
  type TokenPair,
  TWO_FACTOR_CODE_TTL_SECONDS,
  WALLET_CHALLENGE_TTL_SECONDS,
} from './auth-kit.ts';

/** The partner flow and the tokens every flow ends with; the email and wallet flows beside them. */
export class AuthService extends AuthKit {
  /** Register by email and password, log in, the second factor (email-auth.ts) */
  readonly email: EmailAuth;
  /** Sign a challenge with a wallet (wallet-auth.ts) */
  readonly wallet: WalletAuth;

  constructor(deps: AuthDeps) {
    super(deps);
    this.email = new EmailAuth(deps);
    this.wallet = new WalletAuth(deps);
  }

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
