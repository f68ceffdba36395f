// GET /stores/available_currencies and POST /stores/exchange_rates (docs/wire-compatibility.md shapes).
import { z } from 'zod';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { formatRate } from '../../platform/money/rates.ts';
import type { Quote, QuotesService } from '../quotes/quotes-service.ts';
import { type StoreAuthenticator, storeOf } from './authenticate.ts';
import { errors } from './jsonapi.ts';

const code = z
  .string()
  .trim()
  .regex(/^[A-Za-z]{2,10}$/, 'must be a currency code')
  .transform((c) => c.toUpperCase());

const quoteResource = z.object({
  type: z.literal('exchange_rates'),
  id: z.string(),
  attributes: z.object({
    type: z.enum(['crypto', 'fiat']),
    from: z.string(),
    to: z.string(),
    rate: z.string(),
    status: z.enum(['active', 'used', 'expired']),
    created_at: z.string(),
    expires_at: z.string(),
  }),
});

export async function registerRatesRoutes(
  app: ZodApp,
  deps: { quotes: QuotesService; authenticate: StoreAuthenticator },
): Promise<void> {
  const present = (q: Quote) => ({
    type: 'exchange_rates' as const,
    id: q.id,
    attributes: {
      type: q.kind,
      from: q.from,
      to: q.to,
      rate: formatRate(q.rateE18),
      status: deps.quotes.status(q),
      created_at: q.createdAt.toISOString(),
      expires_at: q.expiresAt.toISOString(),
    },
  });

  app.get(
    '/stores/available_currencies',
    {
      onRequest: deps.authenticate,
      schema: {
        summary: 'The cryptocurrency and network pairs this store accepts',
        tags: ['currencies'],
        response: {
          200: z.object({
            data: z.array(
              z.object({
                type: z.literal('currencies'),
                attributes: z.object({ currency: z.string(), blockchain: z.string() }),
              }),
            ),
          }),
          ...errors,
        },
      },
    },
    async (request, reply) =>
      reply.type('application/vnd.api+json').send({
        data: storeOf(request).currencies.map((c) => ({
          type: 'currencies' as const,
          attributes: { currency: c.currency, blockchain: c.network },
        })),
      }),
  );

  app.post(
    '/stores/exchange_rates',
    {
      onRequest: deps.authenticate,
      schema: {
        summary: 'Create an exchange-rate quote, valid for 60 seconds',
        description:
          'type crypto (the default): from is a crypto currency the store accepts, to a settlement currency; type fiat: the reverse. rate is units of to per one from. The quote can lock an order’s rate (exchange_rate_id on POST /stores/orders) once, until expires_at.',
        tags: ['exchange rates'],
        body: z.object({
          data: z.object({
            type: z.literal('exchange_rates').optional(),
            attributes: z.object({
              type: z.enum(['crypto', 'fiat']).default('crypto'),
              from: code,
              to: code,
            }),
          }),
        }),
        response: { 201: z.object({ data: quoteResource }), ...errors },
      },
    },
    async (request, reply) => {
      const a = request.body.data.attributes;
      const quote = await deps.quotes.create(storeOf(request), { kind: a.type, from: a.from, to: a.to });
      return reply
        .code(201)
        .type('application/vnd.api+json')
        .send({ data: present(quote) });
    },
  );

  app.get(
    '/stores/exchange_rates/:id',
    {
      onRequest: deps.authenticate,
      schema: {
        summary: 'Retrieve a quote: whether it is still active, used or expired',
        tags: ['exchange rates'],
        params: z.object({ id: z.string().max(64) }),
        response: { 200: z.object({ data: quoteResource }), ...errors },
      },
    },
    async (request, reply) =>
      reply
        .type('application/vnd.api+json')
        .send({ data: present(await deps.quotes.get(storeOf(request), request.params.id)) }),
  );
}
