// The wallet flow (x-partner-id): a challenge message (EIP-4361 for EVM), signed by the wallet, checked
// with secp256k1 (EVM) or ed25519 (MultiversX).
import { z } from 'zod';
import type { ZodApp } from '../../../platform/http/api-scope.ts';
import type { AuthService } from '../../auth/auth-service.ts';
import { type Authenticators, requirePartner } from '../authenticate.ts';
import { email, errors, signature, tokenPair, walletAddress } from '../schemas.ts';

const challenge = z.object({ challengeId: z.string(), message: z.string(), expiresAt: z.iso.datetime() });

export async function registerWalletAuthRoutes(
  app: ZodApp,
  auth: AuthService,
  authn: Authenticators,
): Promise<void> {
  const issueChallenge =
    (purpose: 'wallet_register' | 'wallet_login') =>
    async (request: { body: { walletAddress: string } } & Parameters<typeof requirePartner>[0]) => {
      const result = await auth.wallet.walletChallenge(
        requirePartner(request),
        purpose,
        request.body.walletAddress,
      );
      return { ...result, expiresAt: result.expiresAt.toISOString() };
    };
  const challengeSchema = (summary: string) => ({
    onRequest: authn.partnerId,
    schema: {
      summary,
      tags: ['auth'],
      security: [{ partnerId: [] }],
      body: z.object({ walletAddress }),
      response: { 200: challenge, ...errors(400, 401) },
    },
  });

  app.post(
    '/auth/register/wallet/challenge',
    challengeSchema('The message a wallet signs to register'),
    issueChallenge('wallet_register'),
  );
  app.post(
    '/auth/register/wallet',
    challengeSchema('Start a wallet registration (same as /auth/register/wallet/challenge)'),
    issueChallenge('wallet_register'),
  );
  app.post(
    '/auth/register/wallet/verify',
    {
      onRequest: authn.partnerId,
      schema: {
        summary: 'Register the wallet’s holder with a signature over the challenge; answers tokens',
        tags: ['auth'],
        security: [{ partnerId: [] }],
        body: z.object({ walletAddress, signature, email: email.optional() }),
        response: { 201: tokenPair, ...errors(400, 401, 409) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await auth.wallet.registerWallet(requirePartner(request), request.body)),
  );
  app.post(
    '/auth/login/wallet/challenge',
    challengeSchema('The message a wallet signs to log in'),
    issueChallenge('wallet_login'),
  );
  app.post(
    '/auth/login/wallet',
    {
      onRequest: authn.partnerId,
      schema: {
        summary: 'Log in with a signature over the login challenge',
        tags: ['auth'],
        security: [{ partnerId: [] }],
        body: z.object({ walletAddress, signature }),
        response: { 200: tokenPair, ...errors(400, 401) },
      },
    },
    async (request) => auth.wallet.loginWallet(requirePartner(request), request.body),
  );
}
