// /sandbox/issuing/…: the simulated world around the card issuing API (DESIGN, sandbox contract).
import { z } from 'zod';
import { standardErrors } from '../../admin/http/schemas.ts';
import type { CardsService } from '../../issuing/cards/cards-service.ts';
import { presentTopup, topupView } from '../../issuing/http/topups/topups-routes.ts';
import { presentTransaction, transactionView } from '../../issuing/http/transactions/transactions-routes.ts';
import type { KycService } from '../../issuing/kyc/kyc-service.ts';
import type { TopupsService } from '../../issuing/topups/topups-service.ts';
import type { TransactionsService } from '../../issuing/transactions/transactions-service.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';

export async function registerIssuingSandboxRoutes(
  app: ZodApp,
  deps: { kyc: KycService; cards: CardsService; transactions: TransactionsService; topups: TopupsService },
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
  app.post(
    '/issuing/authorizations',
    {
      schema: {
        summary: 'The card network asks for an authorization of an issued card (threeDS: a challenge first)',
        tags: ['issuing'],
        body: z.object({
          cardId: z.string().max(64),
          amount,
          currency: z.string().regex(/^[A-Za-z]{3}$/, 'must be a three-letter currency code'),
          merchant: z.string().trim().min(1).max(200),
          threeDS: z.boolean().optional(),
        }),
        response: { 201: transactionView, ...standardErrors },
      },
    },
    async (request, reply) =>
      reply.code(201).send(presentTransaction(await deps.transactions.authorize(request.body))),
  );
  const transactionParam = z.object({ transactionId: z.string().max(64) });
  app.post(
    '/issuing/transactions/:transactionId/clear',
    {
      schema: {
        summary: 'Clearing (settlement) of an authorization, for its amount or less',
        tags: ['issuing'],
        params: transactionParam,
        // An empty POST reaches validation as null: the body is optional.
        body: z.object({ amount: amount.optional() }).nullish(),
        response: { 200: transactionView, ...standardErrors },
      },
    },
    async (request) =>
      presentTransaction(await deps.transactions.clear(request.params.transactionId, request.body?.amount)),
  );
  app.post(
    '/issuing/transactions/:transactionId/reverse',
    {
      schema: {
        summary: 'Reversal of an authorization: its hold is released',
        tags: ['issuing'],
        params: transactionParam,
        response: { 200: transactionView, ...standardErrors },
      },
    },
    async (request) => presentTransaction(await deps.transactions.reverse(request.params.transactionId)),
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
