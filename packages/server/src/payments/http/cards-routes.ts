// /card (spec, Cards; docs/wire-compatibility.md: customerId required, optional orderId, hasToken, cardStatus). Only a
// token, brand, masked number, last four, expiry and the network's BIN facts are ever shown. As in the
// real service, `hasToken` means the card is kept to be charged again (saved with saveCard, or the
// mandate of a recurring or managed order, and not deleted), not that it is a network token: that is
// `type`.
import { z } from 'zod';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import type { BinInfo } from '../../rails/card-network/port.ts';
import type { StoredCard, StoredCardsService } from '../cards/stored-cards-service.ts';
import { type MerchantAuthenticator, merchantOf } from './authenticate.ts';
import { envelope, ok, paged, pagedEnvelope, pageOf, standardErrors } from './envelope.ts';
import { flagField, intField, pageQuery } from './fields.ts';

const cardView = z.object({
  id: z.number().int(),
  customerId: z.number().int(),
  orderId: z.number().int().nullable(),
  token: z.string(),
  cardType: z.string(),
  type: z.enum(['card', 'networkToken']).describe('a card number, or a wallet’s network token'),
  cardProvider: z.string().describe('the scheme: visa, mastercard, amex, …'),
  hasToken: z.boolean().describe('kept to be charged again (not deleted)'),
  cardNumber: z.string(),
  lastFour: z.string(),
  expiryMonth: z.string(),
  expiryYear: z.string(),
  nameOnCard: z.string().nullable(),
  cardHolderCountry: z.string().nullable(),
  cardHolderState: z.string().nullable(),
  cardStatus: z.string(),
  binInfo: z.object({
    bin: z.string(),
    brand: z.string(),
    type: z.string(),
    level: z.string(),
    countryCode: z.string(),
    bank: z.string(),
  }),
  createdAt: z.string(),
});

const present = (c: StoredCard, binInfo: BinInfo): z.infer<typeof cardView> => ({
  id: c.id,
  customerId: c.customerId,
  orderId: c.orderId,
  token: c.token,
  cardType: c.brand,
  type: c.kind,
  cardProvider: c.brand,
  hasToken: c.status === 'active',
  cardNumber: `${c.bin}******${c.last4}`,
  lastFour: c.last4,
  expiryMonth: String(c.expiryMonth).padStart(2, '0'),
  expiryYear: String(c.expiryYear),
  nameOnCard: c.nameOnCard,
  cardHolderCountry: c.cardHolderCountry,
  cardHolderState: c.cardHolderState,
  cardStatus: c.status,
  binInfo,
  createdAt: c.createdAt.toISOString().replace('Z', '+00:00'),
});

export async function registerCardsRoutes(
  app: ZodApp,
  deps: { cards: StoredCardsService; authenticate: MerchantAuthenticator },
): Promise<void> {
  const { cards } = deps;
  const common = { onRequest: deps.authenticate };
  const idParam = z.object({ id: intField });
  const customerQuery = z.object({ customerId: intField.optional() });

  app.get(
    '/card',
    {
      ...common,
      schema: {
        summary: 'List a customer’s stored cards',
        tags: ['cards'],
        querystring: z.object({
          customerId: intField,
          orderId: intField.optional(),
          hasToken: flagField.optional(),
          cardStatus: z.enum(['active', 'deleted']).optional(),
          ...pageQuery,
        }),
        response: { 200: pagedEnvelope(cardView), ...standardErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const page = pageOf(q);
      const { items, total } = await cards.list(
        merchantOf(request),
        {
          customerId: q.customerId,
          ...(q.orderId !== undefined ? { orderId: q.orderId } : {}),
          ...(q.hasToken !== undefined ? { hasToken: q.hasToken } : {}),
          ...(q.cardStatus ? { cardStatus: q.cardStatus } : {}),
        },
        page,
      );
      return paged(
        items.map((c) => present(c, cards.binInfo(c))),
        total,
        page,
      );
    },
  );

  app.get(
    '/card/:id',
    {
      ...common,
      schema: {
        summary: 'Retrieve a stored card',
        tags: ['cards'],
        params: idParam,
        querystring: customerQuery,
        response: { 200: envelope(cardView), ...standardErrors },
      },
    },
    async (request) => {
      const card = await cards.get(merchantOf(request), request.params.id, request.query.customerId);
      return ok(present(card, cards.binInfo(card)));
    },
  );

  app.delete(
    '/card/:id',
    {
      ...common,
      schema: {
        summary: 'Delete a stored card (it can no longer be charged)',
        tags: ['cards'],
        params: idParam,
        querystring: customerQuery,
        body: z.object({ customerId: intField.optional() }).nullish(),
        response: { 200: z.object({ code: z.number().int(), message: z.string() }), ...standardErrors },
      },
    },
    async (request) => {
      await cards.delete(
        merchantOf(request),
        request.params.id,
        request.query.customerId ?? request.body?.customerId,
      );
      return { code: 200, message: 'Success' };
    },
  );
}
