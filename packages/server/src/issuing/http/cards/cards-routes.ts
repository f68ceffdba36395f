// /cards routes (docs/issuing.md, Cards; docs/wire-compatibility.md body {subscriptionCardId, isVirtual, currency,
// label}, physical cards also a delivery address and PIN), as the calling customer.
import { z } from 'zod';
import type { ZodApp } from '../../../platform/http/api-scope.ts';
import { REISSUE_REASONS, type ReissueReason } from '../../cards/card.ts';
import type { Card, CardsService } from '../../cards/cards-service.ts';
import { country } from '../../kyc/kyc-steps.ts';
import { type Authenticators, requireCustomer } from '../authenticate.ts';
import { errors } from '../schemas.ts';

const cardStatus = z.enum(['pending', 'readyToBeActivated', 'active', 'suspended', 'frozen', 'closed']);
export const cardView = z.object({
  cardId: z.string(),
  accountId: z.string(),
  currency: z.string(),
  subscriptionCardId: z.string(),
  status: cardStatus,
  isVirtual: z.boolean(),
  label: z.string().nullable(),
  maskedPan: z.string(),
  last4: z.string(),
  expiryMonth: z.number().int(),
  expiryYear: z.number().int(),
  replacesCardId: z.string().nullable(),
  reissueReason: z.string().nullable(),
  createdAt: z.iso.datetime(),
});

export const presentCard = (card: Card) => ({
  cardId: card.cardId,
  accountId: card.accountId,
  currency: card.currency,
  subscriptionCardId: card.subscriptionCardId,
  status: card.status,
  isVirtual: card.isVirtual,
  label: card.label,
  maskedPan: `${card.bin}******${card.last4}`,
  last4: card.last4,
  expiryMonth: card.expiryMonth,
  expiryYear: card.expiryYear,
  replacesCardId: card.replacesCardId,
  reissueReason: card.reissueReason,
  createdAt: card.createdAt.toISOString(),
});

const deliveryAddress = z.object({
  name: z.string().trim().min(1).max(100),
  line1: z.string().trim().min(1).max(200),
  line2: z.string().trim().max(200).optional(),
  city: z.string().trim().min(1).max(100),
  postalCode: z.string().trim().min(1).max(20),
  country,
});
const pin = z.string().regex(/^\d{4}$/, 'must be 4 digits');
const cardIdParam = z.object({ cardId: z.string().max(64) });

export async function registerCardsRoutes(
  app: ZodApp,
  cards: CardsService,
  authn: Authenticators,
): Promise<void> {
  const security = [{ customerToken: [] }];

  app.get(
    '/cards',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'The customer’s cards (numbers masked)',
        tags: ['cards'],
        security,
        querystring: z.object({ status: cardStatus.optional(), accountId: z.uuid().optional() }),
        response: { 200: z.object({ data: z.array(cardView) }), ...errors(400, 401) },
      },
    },
    async (request) => {
      const { status, accountId } = request.query;
      const list = await cards.list(requireCustomer(request), {
        ...(status ? { status } : {}),
        ...(accountId ? { accountId } : {}),
      });
      return { data: list.map(presentCard) };
    },
  );

  app.post(
    '/cards',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'Issue a card on the open account of a currency (needs approved KYC)',
        description:
          'A virtual card is active at once; a physical one is pending until shipped, then activated by the customer.',
        tags: ['cards'],
        security,
        body: z.object({
          subscriptionCardId: z.uuid().optional(),
          isVirtual: z.boolean(),
          currency: z
            .string()
            .regex(/^[A-Za-z]{3}$/, 'must be a three-letter currency code')
            .transform((c) => c.toUpperCase()),
          label: z.string().trim().min(1).max(100).optional(),
          deliveryAddress: deliveryAddress.optional(),
          pin: pin.optional(),
        }),
        response: { 201: cardView, ...errors(400, 401, 409) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(presentCard(await cards.issue(requireCustomer(request), request.body))),
  );

  app.get(
    '/cards/:cardId',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'One card (number masked)',
        tags: ['cards'],
        security,
        params: cardIdParam,
        response: { 200: cardView, ...errors(401, 404) },
      },
    },
    async (request) => {
      const customer = requireCustomer(request);
      return presentCard(await cards.get(cards.db, customer, request.params.cardId));
    },
  );

  for (const action of ['freeze', 'unfreeze', 'activate'] as const) {
    app.post(
      `/cards/:cardId/${action}`,
      {
        onRequest: authn.customer,
        schema: {
          summary: `${action[0]?.toUpperCase()}${action.slice(1)} a card`,
          description: 'An action the card’s status does not allow is a 409 naming the current status.',
          tags: ['cards'],
          security,
          params: cardIdParam,
          response: { 200: cardView, ...errors(401, 404, 409) },
        },
      },
      async (request) => presentCard(await cards[action](requireCustomer(request), request.params.cardId)),
    );
  }

  app.post(
    '/cards/:cardId/reissue/:reason',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'Replace a card: lost, stolen, compromised (new number) or damaged, expired (same number)',
        description:
          'The old card is closed; the new card answers. A physical card may take a new deliveryAddress and pin.',
        tags: ['cards'],
        security,
        params: cardIdParam.extend({
          reason: z.enum(Object.keys(REISSUE_REASONS) as [ReissueReason, ...ReissueReason[]]),
        }),
        // An empty POST reaches validation as null: the body is optional.
        body: z.object({ deliveryAddress: deliveryAddress.optional(), pin: pin.optional() }).nullish(),
        response: { 201: cardView, ...errors(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const card = await cards.reissue(
        requireCustomer(request),
        request.params.cardId,
        request.params.reason,
        {
          ...(body.deliveryAddress ? { deliveryAddress: body.deliveryAddress } : {}),
          ...(body.pin ? { pin: body.pin } : {}),
        },
      );
      return reply.code(201).send(presentCard(card));
    },
  );

  app.post(
    '/cards/:cardId/provisioning/apple-pay',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'Apple Pay In-App Provisioning data for an active card',
        description:
          'Send what PassKit hands the app (certificates, nonce, nonceSignature); answer activationData, encryptedPassData, ephemeralPublicKey.',
        tags: ['cards'],
        security,
        params: cardIdParam,
        body: z.object({
          certificates: z.array(z.base64().min(1)).min(1).max(4),
          nonce: z.string().regex(/^[0-9A-Za-z+/=]{4,128}$/, 'must be hex or base64'),
          nonceSignature: z.base64().min(1).max(4096),
        }),
        response: {
          200: z.object({
            activationData: z.string(),
            encryptedPassData: z.string(),
            ephemeralPublicKey: z.string(),
          }),
          ...errors(400, 401, 404, 409),
        },
      },
    },
    async (request) =>
      cards.secrets.provisionApplePay(requireCustomer(request), request.params.cardId, request.body),
  );

  app.get(
    '/cards/:cardId/provisioning/google-pay',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'Google Pay push-provisioning data for an active card',
        tags: ['cards'],
        security,
        params: cardIdParam,
        response: {
          200: z.object({
            opaquePaymentCard: z.string(),
            network: z.enum(['VISA', 'MASTERCARD']),
            tokenServiceProvider: z.enum(['TOKEN_PROVIDER_VISA', 'TOKEN_PROVIDER_MASTERCARD']),
            displayName: z.string(),
            lastDigits: z.string(),
          }),
          ...errors(401, 404, 409),
        },
      },
    },
    async (request, reply) =>
      reply.send(await cards.secrets.provisionGooglePay(requireCustomer(request), request.params.cardId)),
  );

  app.get(
    '/cards/:cardId/secrets',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'The card number, CVV and expiry (audited; at most 5 times an hour per card)',
        tags: ['cards'],
        security,
        params: cardIdParam,
        response: {
          200: z.object({
            pan: z.string(),
            cvv: z.string(),
            expiryMonth: z.number().int(),
            expiryYear: z.number().int(),
          }),
          ...errors(401, 404, 409, 429),
        },
      },
    },
    async (request, reply) => {
      const secrets = await cards.secrets.revealSecrets(requireCustomer(request), request.params.cardId, {
        requestId: request.id,
        ip: request.ip,
      });
      return reply.header('cache-control', 'no-store').send(secrets);
    },
  );
}
