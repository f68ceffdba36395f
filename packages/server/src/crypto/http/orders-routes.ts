// /stores/orders (docs/wire-compatibility.md, Crypto merchant): create answers `orders_redirect` with the buyer's payment
// URL; list pages with `cursor` and `limit`; retrieve takes `?include=payments`.

import { z } from 'zod';
import { CRYPTO_ORDER_STATUSES as ORDER_STATUSES } from '../../platform/db/schema.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { httpUrl, text } from '../../platform/http/fields.ts';
import { isUuid } from '../../platform/ids.ts';
import { parseAmountField } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { Store } from '../../platform/tenants/stores-service.ts';
import type { Order, OrdersService } from '../orders/orders-service.ts';
import { isSettlementCurrency, SETTLEMENT_CURRENCIES } from '../quotes/quotes-service.ts';
import { type StoreAuthenticator, storeOf } from './authenticate.ts';
import { decimalText, errors, moneyOf } from './jsonapi.ts';
import { orderResource, paymentResource, presentOrder, presentPayment } from './order-views.ts';

export { presentOrder } from './order-views.ts';

const detailText = decimalText.nullable();

const orderBody = z.object({
  data: z.object({
    type: z.literal('orders').optional(),
    attributes: z.object({
      order: z.object({
        reference: text(255).min(1),
        amount: z.object({
          total: decimalText,
          currency: z.string().regex(/^[A-Z]{3}$/, 'must be a three-letter currency code'),
          // Utrust's WooCommerce plugin sends null (and older ones "") for a zero discount or shipping:
          // absent, as the payments API treats the WooCommerce plugin's nulls.
          details: z
            .object({
              subtotal: detailText,
              shipping: detailText,
              tax: detailText,
              discount: detailText,
            })
            .partial()
            .optional(),
        }),
        return_urls: z.object({
          return_url: httpUrl,
          cancel_url: httpUrl.optional(),
          callback_url: httpUrl.optional(),
        }),
        line_items: z
          .array(
            z.object({
              sku: text(100).optional(),
              name: text(255).min(1),
              price: decimalText,
              currency: z.string().regex(/^[A-Z]{3}$/, 'must be a three-letter currency code'),
              quantity: z.number().int().min(1).max(1_000_000),
            }),
          )
          .max(100)
          .optional(),
        expires_at: z.iso.datetime({ offset: true }).optional(),
        exchange_rate_id: z.string().max(64).optional(),
      }),
      customer: z.object({
        first_name: text(100).optional(),
        last_name: text(100).optional(),
        email: z.email().max(254),
        address1: text(200).optional(),
        address2: text(200).optional(),
        city: text(100).optional(),
        state: text(100).optional(),
        postcode: text(20).optional(),
        country: z.string().regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code'),
      }),
    }),
  }),
});

const encodeCursor = (seq: bigint) => Buffer.from(`seq:${seq}`).toString('base64url');
function decodeCursor(cursor: string): bigint {
  const match = /^seq:(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match?.[1])
    throw new DomainError('validation_failed', 'cursor is not one this API handed out', { field: 'cursor' });
  return BigInt(match[1]);
}

export interface OrdersRoutesDeps {
  orders: OrdersService;
  authenticate: StoreAuthenticator;
  /** Refuses callback URLs the webhook engine would refuse (SSRF guard) */
  checkCallbackUrl: (url: string, field: string) => void;
}

export async function registerOrdersRoutes(app: ZodApp, deps: OrdersRoutesDeps): Promise<void> {
  const { orders } = deps;
  const view = (order: Order, store: Store) => presentOrder(order, orders.isRefundable(order, store));

  app.post(
    '/stores/orders',
    {
      onRequest: deps.authenticate,
      // Its answer is the order's id and the payment page's URL made of it, both in the row in clear. With
      // a key, the one-statement order is sent with the key's answer; its velocity guard may refuse it there.
      config: { answerInClear: true, idempotency: 'optimistic' },
      schema: {
        summary: 'Create an order; answers the URL of the hosted payment page',
        description: `Amounts are decimal strings in the order currency (${SETTLEMENT_CURRENCIES.join(', ')}). expires_at defaults to 15 minutes from now (5 minutes to 7 days). exchange_rate_id locks the rate of a quote from POST /stores/exchange_rates while it is valid.`,
        tags: ['orders'],
        body: orderBody,
        response: {
          201: z.object({
            data: z.object({
              type: z.literal('orders_redirect'),
              id: z.string(),
              attributes: z.object({ redirect_url: z.string() }),
            }),
          }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const store = storeOf(request);
      const { order, customer } = request.body.data.attributes;
      const base = 'data.attributes.order';
      const currency = order.amount.currency;
      if (!isSettlementCurrency(currency))
        throw new DomainError(
          'validation_failed',
          `currency must be one of ${SETTLEMENT_CURRENCIES.join(', ')}`,
          {
            field: `${base}.amount.currency`,
          },
        );
      const asset = findAsset(currency);
      if (!asset) throw new Error(`unknown asset ${currency}`);
      const total = parseAmountField(order.amount.total, asset, `${base}.amount.total`);
      // The details are what the shop says the total is made of, kept as sent: a shop's fees, gift cards
      // and rounding make them not add up (Utrust's WooCommerce plugin cannot make them), and the real
      // service's own client (utrust-php's Validator) checks no sum. The total is what is paid.
      let details: Record<string, string> | null = null;
      if (order.amount.details) {
        const parsed: [string, bigint][] = [];
        for (const [key, value] of Object.entries(order.amount.details)) {
          if (value === undefined || value === null || value === '') continue;
          parsed.push([key, parseAmount0(value, asset, `${base}.amount.details.${key}`)]);
        }
        details = Object.fromEntries(parsed.map(([k, v]) => [k, moneyOf(v, currency).value]));
      }
      const lineItems = (order.line_items ?? []).map((item, index) => {
        const itemAsset = findAsset(item.currency);
        if (!itemAsset)
          throw new DomainError('validation_failed', 'unknown currency', {
            field: `${base}.line_items.${index}.currency`,
          });
        // A shop's discount line has a negative price (Utrust's WooCommerce plugin: sku "discount").
        const text = typeof item.price === 'number' ? String(item.price) : item.price.trim();
        const negative = text.startsWith('-');
        const magnitude = parseAmount0(
          negative ? text.slice(1) : text,
          itemAsset,
          `${base}.line_items.${index}.price`,
        );
        const price = moneyOf(negative ? -magnitude : magnitude, item.currency).value;
        return { ...item, price };
      });
      const callbackUrl = order.return_urls.callback_url ?? null;
      if (callbackUrl) deps.checkCallbackUrl(callbackUrl, `${base}.return_urls.callback_url`);
      const created = await orders.create(store, {
        reference: order.reference,
        currency,
        total,
        details,
        returnUrl: order.return_urls.return_url,
        cancelUrl: order.return_urls.cancel_url ?? null,
        callbackUrl,
        lineItems,
        customer,
        expiresAt: order.expires_at ? new Date(order.expires_at) : null,
        exchangeRateId: order.exchange_rate_id ?? null,
      });
      // Returned, not sent: with a key, the request may run again (idempotency: 'optimistic')
      reply.code(201).type('application/vnd.api+json');
      return {
        data: {
          type: 'orders_redirect' as const,
          id: created.id,
          attributes: { redirect_url: created.redirectUrl },
        },
      };
    },
  );

  app.get(
    '/stores/orders',
    {
      onRequest: deps.authenticate,
      schema: {
        summary: 'List the store’s orders, newest first',
        description:
          'Cursor pagination: pass meta.next_cursor (or follow links.next) as cursor; limit 1..100, default 100.',
        tags: ['orders'],
        querystring: z.object({
          cursor: z.string().max(200).optional(),
          limit: z.coerce.number().int().min(1).max(100).default(100),
          status: z.enum(ORDER_STATUSES).optional(),
        }),
        response: {
          200: z.object({
            data: z.array(orderResource),
            meta: z.object({ next_cursor: z.string().nullable() }),
            links: z.object({ next: z.string().nullable() }),
          }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const store = storeOf(request);
      const q = request.query;
      const page = await orders.list(store, {
        limit: q.limit,
        ...(q.status ? { status: q.status } : {}),
        ...(q.cursor ? { afterSeq: decodeCursor(q.cursor) } : {}),
      });
      const next = page.nextSeq === null ? null : encodeCursor(page.nextSeq);
      const params = new URLSearchParams({
        limit: String(q.limit),
        ...(q.status ? { status: q.status } : {}),
      });
      if (next) params.set('cursor', next);
      return reply.type('application/vnd.api+json').send({
        data: page.orders.map((o) => view(o, store)),
        meta: { next_cursor: next },
        links: { next: next ? `${request.url.split('?')[0]}?${params}` : null },
      });
    },
  );

  app.get(
    '/stores/orders/:id',
    {
      onRequest: deps.authenticate,
      schema: {
        summary: 'Retrieve an order (include=payments adds the payment)',
        tags: ['orders'],
        params: z.object({ id: z.string().max(64) }),
        querystring: z.object({ include: z.enum(['payments']).optional() }),
        response: {
          200: z.object({ data: orderResource, included: z.array(paymentResource).optional() }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const store = storeOf(request);
      if (!isUuid(request.params.id)) throw new DomainError('not_found', 'order not found');
      const order = await orders.get(store, request.params.id);
      const data = view(order, store);
      const body =
        request.query.include === 'payments'
          ? {
              data: {
                ...data,
                relationships: {
                  payments: {
                    data: order.payment ? [{ type: 'payments' as const, id: order.payment.id }] : [],
                  },
                },
              },
              included: presentPayment(order),
            }
          : { data };
      return reply.type('application/vnd.api+json').send(body);
    },
  );
}

/** Amount parts (details, item prices) may be zero; the total may not. */
function parseAmount0(
  value: string | number,
  asset: NonNullable<ReturnType<typeof findAsset>>,
  field: string,
): bigint {
  const text = typeof value === 'number' ? String(value) : value.trim();
  if (/^0+(\.0+)?$/.test(text)) return 0n;
  return parseAmountField(value, asset, field);
}
