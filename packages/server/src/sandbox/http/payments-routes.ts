// /sandbox/payments/…: the simulated card network and wallets around the payments API (the sandbox: README,
// contract): the test cards, outcomes scripted for a card's next authorizations (a recurring bill that
// fails once, say), wallet payment tokens as Apple Pay or Google Pay would hand them over, and a site's
// ledger balance.
import { z } from 'zod';
import { standardErrors } from '../../admin/http/schemas.ts';
import type { PaymentsServices } from '../../payments/payments-services.ts';
import { isLuhnValid } from '../../platform/cards/card-number.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';
import { isFiat } from '../../platform/money/assets.ts';
import {
  SCRIPTABLE_OUTCOMES,
  type ScriptableOutcome,
  TEST_CARDS,
} from '../../rails/card-network/test-cards.ts';
import type { CardNetworkSandbox, WalletTokensSandbox } from '../../rails/sandbox.ts';

const cardNumber = z.string().refine(isLuhnValid, 'must be a valid card number');
const outcomes = Object.keys(SCRIPTABLE_OUTCOMES) as [ScriptableOutcome, ...ScriptableOutcome[]];

export async function registerPaymentsSandboxRoutes(
  app: ZodApp,
  deps: {
    payments: PaymentsServices;
    network: CardNetworkSandbox;
    walletTokens: WalletTokensSandbox;
  },
): Promise<void> {
  app.get(
    '/payments/test-cards',
    {
      schema: {
        summary: 'The card numbers with a fixed outcome (any future expiry, any CVV of the right length)',
        tags: ['payments'],
        response: {
          200: z.object({ data: z.array(z.object({ cardNumber: z.string(), outcome: z.string() })) }),
          ...standardErrors,
        },
      },
    },
    async () => ({
      data: Object.entries(TEST_CARDS).map(([number, card]) => ({
        cardNumber: number,
        outcome: card.description,
      })),
    }),
  );

  app.post(
    '/payments/cards/script',
    {
      schema: {
        summary: 'Script the outcomes of a card number’s next authorizations, in order',
        tags: ['payments'],
        body: z.object({ cardNumber, outcomes: z.array(z.enum(outcomes)).min(1).max(20) }),
        response: { 200: z.object({ scripted: z.number().int() }), ...standardErrors },
      },
    },
    async (request) => {
      await deps.network.script(request.body.cardNumber, request.body.outcomes);
      return { scripted: request.body.outcomes.length };
    },
  );

  app.post(
    '/payments/wallet-tokens',
    {
      schema: {
        summary: 'An encrypted wallet payment token, as Apple Pay or Google Pay hands it to the merchant',
        description: 'Send it as transactionOption.digitalWallet {walletType, data} when creating an order.',
        tags: ['payments'],
        body: z.object({
          walletType: z.enum(['applePay', 'googlePay']),
          cardNumber,
          expiryMonth: z.number().int().min(1).max(12),
          expiryYear: z.number().int().min(2000).max(2100),
        }),
        response: { 200: z.object({ walletType: z.string(), data: z.string() }), ...standardErrors },
      },
    },
    async (request) => {
      const b = request.body;
      return {
        walletType: b.walletType,
        data: deps.walletTokens.seal(b.walletType, {
          dpan: b.cardNumber,
          expiryMonth: b.expiryMonth,
          expiryYear: b.expiryYear,
          cryptogram: Buffer.from(`cryptogram:${Date.now()}`).toString('base64'),
          eci: '05',
        }),
      };
    },
  );

  app.get(
    '/payments/sites/:siteId/balance',
    {
      schema: {
        summary: 'A site’s available ledger balance in a currency',
        tags: ['payments'],
        params: z.object({ siteId: z.coerce.number().int().positive() }),
        querystring: z.object({ currency: z.string().refine(isFiat, 'must be an ISO 4217 currency code') }),
        response: {
          200: z.object({ siteId: z.number().int(), currency: z.string(), available: z.string() }),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const { siteId } = request.params;
      const { currency } = request.query;
      const available = await deps.payments.transactions.siteBalance(siteId, currency);
      return { siteId, currency, available: formatAmountIn(available, currency) };
    },
  );
}
