// /topups routes (spec/card-issuing.md, Topups). POST /topups/fiat answers an HTML page, as the real
// service does (COMPAT.md), with the bank-transfer instructions; a client asking for JSON
// (Accept: application/json) gets the topup record instead.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { escapeHtml, page } from '../../../pages/html.ts';
import type { ZodApp } from '../../../platform/http/api-scope.ts';
import { formatAmountIn } from '../../../platform/money/amount.ts';
import {
  SANDBOX_BANK,
  type Topup,
  type TopupsService,
  type TopupUsage,
} from '../../topups/topups-service.ts';
import { type Authenticators, requireCustomer } from '../authenticate.ts';
import { errors } from '../schemas.ts';

export const topupView = z.object({
  topupId: z.string(),
  accountId: z.string(),
  kind: z.literal('fiat'),
  method: z.literal('bank_transfer'),
  status: z.enum(['pending', 'completed', 'expired']),
  amount: z.string(),
  currency: z.string(),
  reference: z.string(),
  bankTransfer: z.object({
    beneficiary: z.string(),
    iban: z.string(),
    bic: z.string(),
    reference: z.string(),
  }),
  expiresAt: z.iso.datetime(),
  createdAt: z.iso.datetime(),
  completedAt: z.iso.datetime().nullable(),
});

export const presentTopup = (t: Topup) => ({
  topupId: t.topupId,
  accountId: t.accountId,
  kind: t.kind,
  method: t.method,
  status: t.status,
  amount: formatAmountIn(t.amount, t.currency),
  currency: t.currency,
  reference: t.reference,
  bankTransfer: { ...SANDBOX_BANK, reference: t.reference },
  expiresAt: t.expiresAt.toISOString(),
  createdAt: t.createdAt.toISOString(),
  completedAt: t.completedAt?.toISOString() ?? null,
});

const period = z.object({ limit: z.string(), used: z.string(), remaining: z.string() });
const presentUsage = (u: TopupUsage) => {
  const show = (p: TopupUsage['daily']) => ({
    limit: formatAmountIn(p.limit, u.currency),
    used: formatAmountIn(p.used, u.currency),
    remaining: formatAmountIn(p.remaining, u.currency),
  });
  return { currency: u.currency, daily: show(u.daily), monthly: show(u.monthly) };
};

function instructionsPage(reply: FastifyReply, t: Topup): FastifyReply {
  const amount = `${formatAmountIn(t.amount, t.currency)} ${t.currency}`;
  const rows = [
    ['Beneficiary', SANDBOX_BANK.beneficiary],
    ['IBAN', SANDBOX_BANK.iban],
    ['BIC', SANDBOX_BANK.bic],
    ['Amount', amount],
    ['Reference (required)', t.reference],
    ['Valid until', t.expiresAt.toISOString().slice(0, 10)],
  ]
    .map(
      ([k, v]) =>
        `<tr><th scope="row">${escapeHtml(k ?? '')}</th><td data-field="${escapeHtml((k ?? '').toLowerCase())}">${escapeHtml(v ?? '')}</td></tr>`,
    )
    .join('');
  return reply
    .code(201)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(
      page(
        'Top up your account',
        `<h1>Top up ${escapeHtml(amount)}</h1><p>Send a bank transfer with exactly this reference; your account is credited when it arrives.</p><table>${rows}</table><p data-topup-id="${escapeHtml(t.topupId)}">Topup ${escapeHtml(t.topupId)}</p>`,
      ),
    );
}

const wantsJson = (request: FastifyRequest) => /application\/json/.test(String(request.headers.accept ?? ''));

export async function registerTopupsRoutes(
  app: ZodApp,
  topups: TopupsService,
  authn: Authenticators,
): Promise<void> {
  const security = [{ customerToken: [] }];
  const currencyQuery = z.object({
    currency: z
      .string()
      .regex(/^[A-Za-z]{3}$/, 'must be a three-letter currency code')
      .transform((c) => c.toUpperCase())
      .default('EUR'),
  });

  app.post(
    '/topups/fiat',
    {
      onRequest: authn.customer,
      schema: {
        summary:
          'Top up an account by bank transfer: answers the instructions page (HTML), or JSON on request',
        tags: ['topups'],
        security,
        body: z.object({ accountId: z.uuid(), amount: z.union([z.string().max(40), z.number()]) }),
        response: { 201: z.union([topupView, z.string()]), ...errors(400, 401, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const topup = await topups.createFiat(requireCustomer(request), request.body);
      return wantsJson(request) ? reply.code(201).send(presentTopup(topup)) : instructionsPage(reply, topup);
    },
  );

  app.get(
    '/topups',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'The customer’s topups, newest first',
        tags: ['topups'],
        security,
        response: { 200: z.object({ data: z.array(topupView) }), ...errors(401) },
      },
    },
    async (request) => ({ data: (await topups.list(requireCustomer(request))).map(presentTopup) }),
  );

  for (const [path, summary] of [
    ['/topups/limits', 'Daily and monthly topup limits of a currency (and what is left of them)'],
    ['/topups/usage', 'What the customer topped up today and this month, against the limits'],
  ] as const) {
    app.get(
      path,
      {
        onRequest: authn.customer,
        schema: {
          summary,
          tags: ['topups'],
          security,
          querystring: currencyQuery,
          response: {
            200: z.object({ currency: z.string(), daily: period, monthly: period }),
            ...errors(400, 401),
          },
        },
      },
      async (request) => presentUsage(await topups.usage(requireCustomer(request), request.query.currency)),
    );
  }

  app.get(
    '/topups/:topupId',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'One topup',
        tags: ['topups'],
        security,
        params: z.object({ topupId: z.string().max(64) }),
        response: { 200: topupView, ...errors(401, 404) },
      },
    },
    async (request) => presentTopup(await topups.get(requireCustomer(request), request.params.topupId)),
  );
}
