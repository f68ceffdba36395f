// The wallet flow of the issuing API's customers: a challenge to sign (EIP-4361 for EVM addresses), then
// registration or login proven by the signature over the latest challenge.
import { randomBytes } from 'node:crypto';
import { addSeconds } from '../../platform/clock/clock.ts';
import { PG_ERRORS, pgErrorCode } from '../../platform/db/database.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { newId } from '../../platform/ids.ts';
import type { Partner } from '../../platform/tenants/partners-service.ts';
import { evmChecksumAddress } from '../../rails/wallet-verifier/signature-verifier.ts';
import { AuthKit, invalidCredentials, type TokenPair, WALLET_CHALLENGE_TTL_SECONDS } from './auth-kit.ts';
import { walletMessage } from './siwe-message.ts';

export class WalletAuth extends AuthKit {
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
}
