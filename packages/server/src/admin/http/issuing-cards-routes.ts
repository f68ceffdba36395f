// The issuer's own actions on issued cards (the card program's operator, not the cardholder): suspend a
// card it suspects, reinstate it. Each change is a cardStatusChanged webhook to the partner.
import { z } from 'zod';
import type { CardsService } from '../../issuing/cards/cards-service.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { standardErrors } from './schemas.ts';

const cardParam = z.object({ cardId: z.uuid() });
const cardStatusView = z.object({ cardId: z.string(), status: z.string() });

export async function registerIssuingCardRoutes(
  app: ZodApp,
  cards: Pick<CardsService, 'suspend' | 'reinstate'>,
): Promise<void> {
  for (const action of ['suspend', 'reinstate'] as const) {
    app.post(
      `/issuing/cards/:cardId/${action}`,
      {
        schema: {
          summary:
            action === 'suspend'
              ? 'Suspend an issued card (active or frozen); it declines every authorization until reinstated'
              : 'Reinstate a suspended card (back to active)',
          tags: ['issuing'],
          params: cardParam,
          response: { 200: cardStatusView, ...standardErrors },
        },
      },
      async (request) => {
        const card = await cards[action](request.params.cardId);
        return { cardId: card.cardId, status: card.status };
      },
    );
  }
}
