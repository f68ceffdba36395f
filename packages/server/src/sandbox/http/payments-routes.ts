// /sandbox/payments/…: the simulated card network and wallets around the payments API (the sandbox: README,
// contract): the test cards, outcomes scripted for a card's next authorizations (a recurring bill that
// fails once, say), wallet payment tokens as Apple Pay or Google Pay would hand them over, and a site's
// ledger balance.

import { z } from 'zod';
import { standardErrors } from '../../admin/http/schemas.ts';
import type { DisputeRow } from '../../payments/disputes/disputes-service.ts';
import type { PaymentsServices } from '../../payments/payments-services.ts';
import { isLuhnValid } from '../../platform/cards/card-number.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { formatAmountIn, optionalAmount } from '../../platform/money/amount.ts';
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

  app.post(
    '/payments/transactions/:id/chargeback',
    {
      schema: {
        summary: 'The card network charges a captured payment back (a chargeback), with a reason code',
        description:
          'reasonCode is one of the scheme’s codes the sandbox knows (Visa 10.4 fraud, 13.1 not received; Mastercard 4837, 4855; Amex F29, C08). amount defaults to what is left of the payment. outcome decides in advance how the network will decide the dispute once answered (default: won with evidence). The amount and the dispute fee are taken from the site’s balance at once; the merchant’s IPN says transactionType chargeback, transactionStatus charge-back.',
        tags: ['payments'],
        params: z.object({ id: z.coerce.number().int().positive() }),
        body: z.object({
          reasonCode: z.string().trim().min(1).max(10),
          amount: z.string().max(40).optional(),
          outcome: z.enum(['won', 'lost']).optional(),
        }),
        response: { 201: sandboxDisputeView, ...standardErrors },
      },
    },
    async (request, reply) =>
      reply.code(201).send(
        presentSandboxDispute(
          await deps.payments.disputes.raise(request.params.id, {
            ...request.body,
            amount: optionalAmount(request.body.amount),
          }),
        ),
      ),
  );

  app.post(
    '/payments/disputes/:id/decide',
    {
      schema: {
        summary: 'The card network decides a chargeback: won (a representment gives the money back) or lost',
        description:
          'A second decision is a 409. Undecided disputes are lost at their evidence deadline; answered ones are decided 5 sandbox days later.',
        tags: ['payments'],
        params: z.object({ id: z.coerce.number().int().positive() }),
        body: z.object({ outcome: z.enum(['won', 'lost']) }),
        response: { 200: sandboxDisputeView, ...standardErrors },
      },
    },
    async (request) =>
      presentSandboxDispute(await deps.payments.disputes.decide(request.params.id, request.body.outcome)),
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

/** A dispute as the sandbox answers it (the payments API's own view is GET /payments/v1/dispute/{id}). */
const sandboxDisputeView = z.object({
  disputeId: z.number().int(),
  transactionId: z.number().int(),
  chargebackTransactionId: z.number().int(),
  representmentTransactionId: z.number().int().nullable(),
  status: z.string(),
  network: z.string(),
  reasonCode: z.string(),
  amount: z.string(),
  fee: z.string(),
  currency: z.string(),
  evidenceDueBy: z.iso.datetime(),
});

function presentSandboxDispute(d: DisputeRow) {
  return {
    disputeId: d.id,
    transactionId: d.transaction_id,
    chargebackTransactionId: d.chargeback_transaction_id,
    representmentTransactionId: d.representment_transaction_id,
    status: d.status,
    network: d.network,
    reasonCode: d.reason_code,
    amount: formatAmountIn(BigInt(d.amount), d.currency),
    fee: formatAmountIn(BigInt(d.fee), d.currency),
    currency: d.currency,
    evidenceDueBy: d.evidence_due_at.toISOString(),
  };
}
