// /sandbox/issuing/…: the simulated world around the card issuing API (DESIGN, sandbox contract).
import { z } from 'zod';
import { standardErrors } from '../../admin/http/schemas.ts';
import type { CardsService } from '../../issuing/cards/cards-service.ts';
import type { KycService } from '../../issuing/kyc/kyc-service.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';

export async function registerIssuingSandboxRoutes(
  app: ZodApp,
  deps: { kyc: KycService; cards: CardsService },
): Promise<void> {
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
