// /payment-link (spec, Payment links; docs/wire-compatibility.md body): create, list, retrieve, update, delete by hash.
import { z } from 'zod';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { httpUrl, text } from '../../platform/http/fields.ts';
import { formatAmountIn, optionalAmount } from '../../platform/money/amount.ts';
import type { LinkInput, LinkRow, PaymentLinksService } from '../links/payment-links-service.ts';
import { type MerchantAuthenticator, merchantOf } from './authenticate.ts';
import { created, envelope, ok, paged, pagedEnvelope, pageOf, standardErrors } from './envelope.ts';
import {
  currencyField,
  decimalField,
  flagField,
  intField,
  isoDateTime,
  jsonMember,
  pageQuery,
} from './fields.ts';

const linkView = z.object({
  hash: z.string(),
  url: z.string(),
  siteId: z.number().int(),
  orderType: z.string(),
  amount: z.number(),
  currency: z.string(),
  description: z.string().nullable(),
  contentType: z.string(),
  items: z.array(z.object({ name: z.string(), quantity: z.number(), price: z.string() })).nullable(),
  intervalType: z.string().nullable(),
  intervalValue: z.number().int().nullable(),
  active: z.number().int(),
  expiresAt: z.string().nullable(),
  usageLimit: z.number().int().nullable(),
  usageCount: z.number().int(),
  backUrl: z.string().nullable(),
  createdAt: z.string(),
});

const fields = {
  siteId: intField,
  amount: decimalField,
  currency: currencyField,
  orderType: z.enum(['purchase', 'recurring']),
  description: text(1000),
  contentType: z.enum(['Description', 'Items']),
  items: jsonMember(
    z
      .array(z.object({ name: text(255).min(1), quantity: intField, price: decimalField }))
      .min(1)
      .max(100),
  ),
  intervalType: z.enum(['day', 'month']),
  intervalValue: intField,
  active: flagField,
  expiresAt: z.union([isoDateTime, z.literal('')]),
  usageLimit: intField,
  backUrl: httpUrl,
};
const updateBody = z.object(fields).partial();
const createBody = updateBody.extend({ amount: decimalField, currency: currencyField });

export async function registerLinksRoutes(
  app: ZodApp,
  deps: { links: PaymentLinksService; authenticate: MerchantAuthenticator },
): Promise<void> {
  const { links } = deps;
  const common = { onRequest: deps.authenticate };
  const hashParam = z.object({ hash: z.string().max(64) });
  const present = async (l: LinkRow): Promise<z.infer<typeof linkView>> => ({
    hash: l.hash,
    url: links.urlOf(l.hash),
    siteId: l.site_id,
    orderType: l.order_type,
    amount: Number(formatAmountIn(BigInt(l.amount), l.currency)),
    currency: l.currency,
    description: l.description,
    contentType: l.content_type,
    items: l.items ? JSON.parse(l.items) : null,
    intervalType: l.interval_type,
    intervalValue: l.interval_value,
    active: l.active ? 1 : 0,
    expiresAt: l.expires_at?.toISOString() ?? null,
    usageLimit: l.usage_limit,
    usageCount: await links.usesOf(l.hash),
    backUrl: l.back_url,
    createdAt: l.created_at.toISOString(),
  });
  const input = ({ amount, expiresAt, ...body }: z.infer<typeof updateBody>): LinkInput => ({
    ...body,
    amount: optionalAmount(amount),
    ...(expiresAt !== undefined ? { expiresAt: expiresAt === '' ? null : new Date(expiresAt) } : {}),
  });

  app.post(
    '/payment-link',
    {
      ...common,
      schema: {
        summary: 'Create a hosted payment link',
        tags: ['payment links'],
        body: createBody,
        response: { 201: envelope(linkView), ...standardErrors },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(created(await present(await links.create(merchantOf(request), input(request.body))))),
  );

  app.get(
    '/payment-link',
    {
      ...common,
      schema: {
        summary: 'List payment links',
        tags: ['payment links'],
        querystring: z.object({ siteId: intField.optional(), active: flagField.optional(), ...pageQuery }),
        response: { 200: pagedEnvelope(linkView), ...standardErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const page = pageOf(q);
      const { items, total } = await links.list(
        merchantOf(request),
        {
          ...(q.siteId !== undefined ? { siteId: q.siteId } : {}),
          ...(q.active !== undefined ? { active: q.active } : {}),
        },
        page,
      );
      return paged(await Promise.all(items.map(present)), total, page);
    },
  );

  app.get(
    '/payment-link/:hash',
    {
      ...common,
      schema: {
        summary: 'Retrieve a payment link',
        tags: ['payment links'],
        params: hashParam,
        response: { 200: envelope(linkView), ...standardErrors },
      },
    },
    async (request) => ok(await present(await links.get(merchantOf(request), request.params.hash))),
  );

  app.put(
    '/payment-link/:hash',
    {
      ...common,
      schema: {
        summary: 'Update a payment link (only the fields sent change)',
        tags: ['payment links'],
        params: hashParam,
        body: updateBody,
        response: { 200: envelope(linkView), ...standardErrors },
      },
    },
    async (request) =>
      ok(await present(await links.update(merchantOf(request), request.params.hash, input(request.body)))),
  );

  app.post(
    '/payment-link/:hash/email',
    {
      ...common,
      schema: {
        summary: 'Email a payment link to a buyer',
        description:
          'Sends the link by email (plain text and HTML) to the address given. Only a link that can be paid is sent: an inactive, expired, used-up or deleted one answers 409. Each call sends one message; repeat a request with the same Idempotency-Key to be sure it is sent once.',
        tags: ['payment links'],
        params: hashParam,
        body: z.object({ email: z.email().max(254) }),
        response: {
          200: envelope(z.object({ hash: z.string(), url: z.string(), email: z.string() })),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const link = await links.email(merchantOf(request), request.params.hash, request.body.email);
      return ok({ hash: link.hash, url: links.urlOf(link.hash), email: request.body.email });
    },
  );

  app.delete(
    '/payment-link/:hash',
    {
      ...common,
      schema: {
        summary: 'Delete a payment link (its page answers that it does not exist)',
        tags: ['payment links'],
        params: hashParam,
        body: z.object({}).passthrough().nullish(),
        response: { 200: z.object({ code: z.number().int(), message: z.string() }), ...standardErrors },
      },
    },
    async (request) => {
      await links.delete(merchantOf(request), request.params.hash);
      return { code: 200, message: 'Success' };
    },
  );
}
