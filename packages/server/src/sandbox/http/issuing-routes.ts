// /sandbox/issuing/…: the simulated world around the card issuing API (the sandbox: README).
import { z } from 'zod';
import { standardErrors } from '../../admin/http/schemas.ts';
import type { CardsService } from '../../issuing/cards/cards-service.ts';
import { CHANNELS, type Channel } from '../../issuing/cards/spending-controls.ts';
import type { IssuingDisputesService } from '../../issuing/disputes/disputes-service.ts';
import { disputeView, presentDispute } from '../../issuing/http/disputes/disputes-routes.ts';
import { presentTopup, topupView } from '../../issuing/http/topups/topups-routes.ts';
import { presentTransaction, transactionView } from '../../issuing/http/transactions/transactions-routes.ts';
import type { KycService } from '../../issuing/kyc/kyc-service.ts';
import { country } from '../../issuing/kyc/kyc-steps.ts';
import type { TopupsService } from '../../issuing/topups/topups-service.ts';
import type { MerchantFacts } from '../../issuing/transactions/transaction.ts';
import type { TransactionsService } from '../../issuing/transactions/transactions-service.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import {
  formatAmountIn,
  optionalAmount,
  parseAmountField,
  withClientAmount,
} from '../../platform/money/amount.ts';
import { type Asset, findAsset } from '../../platform/money/assets.ts';
import type { ChainSandbox } from '../../rails/sandbox.ts';

/** The merchant data as the domain takes it: what the request did not say is null; the channel is e-commerce */
function withMerchantFacts<
  T extends { mcc?: string; merchantCountry?: string; merchantId?: string; channel?: Channel },
>(body: T): Omit<T, 'mcc' | 'merchantCountry' | 'merchantId' | 'channel'> & Omit<MerchantFacts, 'merchant'> {
  const { mcc, merchantCountry, merchantId, channel, ...rest } = body;
  return {
    ...rest,
    mcc: mcc ?? null,
    merchantCountry: merchantCountry ?? null,
    merchantId: merchantId ?? null,
    channel: channel ?? 'ecommerce',
  };
}

export async function registerIssuingSandboxRoutes(
  app: ZodApp,
  deps: {
    kyc: KycService;
    cards: CardsService;
    transactions: TransactionsService;
    disputes: IssuingDisputesService;
    topups: TopupsService;
    transact: Transact;
    chain: ChainSandbox;
  },
): Promise<void> {
  app.post(
    '/issuing/topups/:topupId/complete',
    {
      schema: {
        summary: 'The bank confirms a topup: the account is credited (a repeat changes nothing)',
        tags: ['issuing'],
        params: z.object({ topupId: z.string().max(64) }),
        response: { 200: topupView, ...standardErrors },
      },
    },
    async (request) => presentTopup(await deps.topups.complete(request.params.topupId)),
  );

  const amount = z.union([z.string().max(40), z.number()]);
  // The authorization request's merchant data (docs/issuing.md, Spending controls): what controls read
  const merchantData = {
    merchant: z.string().trim().min(1).max(200),
    mcc: z
      .string()
      .regex(/^\d{4}$/, 'must be a four-digit merchant category code')
      .meta({ example: '5411' })
      .optional(),
    merchantCountry: country.meta({ example: 'RO' }).optional(),
    merchantId: z.string().trim().min(1).max(64).meta({ example: 'corner-shop-1' }).optional(),
    channel: z.enum(CHANNELS).optional(),
  };
  app.post(
    '/issuing/topups/:topupId/pay-crypto',
    {
      schema: {
        summary:
          'The customer sends crypto to a crypto topup’s deposit address: exactly what is due (no amount), or another amount',
        description:
          'amount is in the topup’s crypto currency. The transfer is seen at once; confirmations then accrue with the sandbox clock, each one reported (topupStatusChanged), and the account is credited when final.',
        tags: ['issuing'],
        params: z.object({ topupId: z.string().max(64) }),
        body: z.object({ amount: amount.optional() }).nullish(),
        response: { 200: z.object({ transferId: z.string(), amount: z.string() }), ...standardErrors },
      },
    },
    async (request) =>
      deps.transact(async (tx) => {
        const topup = await deps.topups.lock(tx, 'id', request.params.topupId);
        if (!topup?.deposit_address || !topup.crypto_asset || !topup.crypto_amount) {
          throw new DomainError('not_found', 'no crypto topup with this id');
        }
        const asset = findAsset(topup.crypto_asset) as Asset;
        const given = request.body?.amount;
        const minor = given === undefined ? BigInt(topup.crypto_amount) : parseAmountField(given, asset);
        const transfer = await deps.chain.pay(tx, { address: topup.deposit_address, amount: minor });
        return { transferId: transfer.id, amount: formatAmountIn(minor, asset.code) };
      }),
  );

  app.post(
    '/issuing/authorizations',
    {
      // With a key, the one-statement authorization is sent with the key's answer (idempotency-hooks.ts).
      config: { idempotency: 'optimistic' },
      schema: {
        summary: 'The card network asks for an authorization of an issued card (threeDS: a challenge first)',
        tags: ['issuing'],
        body: z.object({
          cardId: z.string().max(64),
          amount,
          currency: z.string().regex(/^[A-Za-z]{3}$/, 'must be a three-letter currency code'),
          ...merchantData,
          threeDS: z.boolean().optional(),
        }),
        response: { 201: transactionView, ...standardErrors },
      },
    },
    // Returned, not sent: a keyed authorization refused at its commit runs this again.
    async (request, reply) => {
      reply.code(201);
      return presentTransaction(
        await deps.transactions.authorize(withMerchantFacts(withClientAmount(request.body))),
      );
    },
  );
  const transactionParam = z.object({ transactionId: z.string().max(64) });
  app.post(
    '/issuing/transactions/:transactionId/clear',
    {
      schema: {
        summary: 'A clearing of an authorization: one part of it (final by default), more, less, or late',
        description:
          'amount defaults to what is still held. A final clearing (the default) releases the rest of the hold; `final: false` keeps the rest held for the next parts. Clearings may post together up to the authorized amount plus TESSERA_ISSUING_CLEARING_TOLERANCE_PERCENT (default 20 %), the excess from the available balance; beyond it, or with the account short, the clearing is declined (422 naming the reason) and nothing is posted. A clearing after the hold lapsed (late presentment) posts from the available balance. Each clearing sends transactionSettled.',
        tags: ['issuing'],
        params: transactionParam,
        // An empty POST reaches validation as null: the body is optional.
        body: z.object({ amount: amount.optional(), final: z.boolean().optional() }).nullish(),
        response: { 200: transactionView, ...standardErrors },
      },
    },
    async (request) =>
      presentTransaction(
        await deps.transactions.clear(request.params.transactionId, {
          amount: optionalAmount(request.body?.amount),
          final: request.body?.final,
        }),
      ),
  );
  app.post(
    '/issuing/transactions/:transactionId/reverse',
    {
      schema: {
        summary: 'Reversal of an authorization: all that is still held, or `amount` of it',
        description:
          'Without amount the whole hold is released: the transaction is reversed (settled when parts were already cleared). With an amount below what is held, that much is released and the rest stays held.',
        tags: ['issuing'],
        params: transactionParam,
        body: z.object({ amount: amount.optional() }).nullish(),
        response: { 200: transactionView, ...standardErrors },
      },
    },
    async (request) =>
      presentTransaction(
        await deps.transactions.reverse(request.params.transactionId, optionalAmount(request.body?.amount)),
      ),
  );
  app.post(
    '/issuing/force-posts',
    {
      schema: {
        summary: 'A clearing with no authorization (force post): the account pays it now',
        description:
          'Recorded as a settled card_payment with forcePost true; declined (422, nothing posted) when the account cannot cover it. Sends transactionCreated and transactionSettled.',
        tags: ['issuing'],
        body: z.object({
          cardId: z.string().max(64),
          amount,
          currency: z.string().regex(/^[A-Za-z]{3}$/, 'must be a three-letter currency code'),
          ...merchantData,
        }),
        response: { 201: transactionView, ...standardErrors },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          presentTransaction(
            await deps.transactions.forcePost(withMerchantFacts(withClientAmount(request.body))),
          ),
        ),
  );
  app.post(
    '/issuing/refunds',
    {
      schema: {
        summary: 'The merchant refunds a cleared payment to the card: a credit transaction of its own',
        description:
          'amount is at most what was cleared less the refunds so far (400 naming amount). The refund is a settled transaction of type refund with originalTransactionId; it sends transactionCreated and transactionSettled.',
        tags: ['issuing'],
        body: z.object({ transactionId: z.string().max(64), amount }),
        response: { 201: transactionView, ...standardErrors },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(presentTransaction(await deps.transactions.refund(withClientAmount(request.body)))),
  );
  app.post(
    '/issuing/disputes/:disputeId/decide',
    {
      schema: {
        summary: 'The card network decides a cardholder dispute: won (the money comes back) or lost',
        description:
          'Won: the network pays the amount back (to the program when it credited the cardholder provisionally, else to the cardholder). Lost: the provisional credit is taken back, as much as the account still holds; the rest is unrecoveredAmount. A second decision is a 409. Undecided disputes are decided by the network 10 sandbox days after they open: lost when the amount ends in 13 minor units, won otherwise.',
        tags: ['issuing'],
        params: z.object({ disputeId: z.string().max(64) }),
        body: z.object({ outcome: z.enum(['won', 'lost']) }),
        response: { 200: disputeView, ...standardErrors },
      },
    },
    async (request) =>
      presentDispute(await deps.disputes.decide(request.params.disputeId, request.body.outcome)),
  );
  app.post(
    '/issuing/cards/:cardId/ship',
    {
      schema: {
        summary: 'The card producer ships a physical card: pending → readyToBeActivated',
        tags: ['issuing'],
        params: z.object({ cardId: z.string().max(64) }),
        response: { 200: z.object({ cardId: z.string(), status: z.string() }), ...standardErrors },
      },
    },
    async (request) => {
      const card = await deps.cards.ship(request.params.cardId);
      return { cardId: card.cardId, status: card.status };
    },
  );

  app.post(
    '/issuing/kyc/:customerId/decision',
    {
      schema: {
        summary: 'The KYC vendor decides: approve or reject a customer',
        tags: ['issuing'],
        params: z.object({ customerId: z.string().max(64) }),
        body: z.object({
          status: z.enum(['approved', 'rejected']),
          rejectReason: z.string().trim().min(1).max(500).optional(),
        }),
        response: {
          200: z.object({ customerId: z.string(), status: z.string(), rejectReason: z.string().nullable() }),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const view = await deps.kyc.decide(request.params.customerId, {
        status: request.body.status,
        ...(request.body.rejectReason ? { rejectReason: request.body.rejectReason } : {}),
      });
      return { customerId: view.customerId, status: view.status, rejectReason: view.rejectReason };
    },
  );
}
