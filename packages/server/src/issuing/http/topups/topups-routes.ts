// /topups routes (docs/issuing.md, Topups). POST /topups/fiat answers an HTML page, as the real
// service does (docs/wire-compatibility.md), with the bank-transfer instructions, also to a client that
// sends no Accept or `*/*`; a client asking for JSON (Accept: application/json, as the SDK does) gets the
// topup record instead.
import { z } from 'zod';
import { prefersJson } from '../../../platform/http/accept.ts';
import type { ZodApp } from '../../../platform/http/api-scope.ts';
import { formatAmountIn, withClientAmount } from '../../../platform/money/amount.ts';
import { formatRate } from '../../../platform/money/rates.ts';
import { languageOf } from '../../../platform/pages/i18n.ts';
import { topupPage } from '../../pages/topup-page.ts';
import type { CryptoTopups } from '../../topups/crypto-topups.ts';
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
  kind: z.enum(['fiat', 'crypto']),
  method: z.enum(['bank_transfer', 'card', 'crypto']),
  status: z.enum(['pending', 'confirming', 'completed', 'expired']),
  amount: z.string(),
  currency: z.string(),
  reference: z.string(),
  bankTransfer: z
    .object({ beneficiary: z.string(), iban: z.string(), bic: z.string(), reference: z.string() })
    .nullable(),
  paymentUrl: z.string().nullable(),
  lastDecline: z.string().nullable(),
  crypto: z
    .object({
      currency: z.string(),
      network: z.string(),
      amount: z.string(),
      depositAddress: z.string(),
      rate: z.string(),
      fee: z.string(),
      received: z.string().nullable(),
      confirmations: z.number().int(),
      confirmationsRequired: z.number().int(),
    })
    .nullable(),
  creditedAmount: z.string().nullable(),
  expiresAt: z.iso.datetime(),
  createdAt: z.iso.datetime(),
  completedAt: z.iso.datetime().nullable(),
});

export const presentTopup = (t: Topup): z.infer<typeof topupView> => ({
  topupId: t.topupId,
  accountId: t.accountId,
  kind: t.kind,
  method: t.method,
  status: t.status,
  amount: formatAmountIn(t.amount, t.currency),
  currency: t.currency,
  reference: t.reference,
  bankTransfer: t.kind === 'fiat' ? { ...SANDBOX_BANK, reference: t.reference } : null,
  paymentUrl: t.status === 'pending' ? t.paymentUrl : null,
  lastDecline: t.lastDecline,
  crypto: t.crypto
    ? {
        currency: t.crypto.currency,
        network: t.crypto.network,
        amount: formatAmountIn(t.crypto.amount, t.crypto.currency),
        depositAddress: t.crypto.depositAddress,
        rate: formatRate(t.crypto.rateE18),
        fee: formatAmountIn(t.crypto.fee, t.currency),
        received: t.crypto.received === null ? null : formatAmountIn(t.crypto.received, t.crypto.currency),
        confirmations: t.crypto.confirmations,
        confirmationsRequired: t.crypto.confirmationsRequired,
      }
    : null,
  creditedAmount: t.creditedAmount === null ? null : formatAmountIn(t.creditedAmount, t.currency),
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

/**
 * The real service answers this POST with an HTML form; an API answers JSON by default. So JSON (with the
 * hosted page's `paymentUrl`) unless the client asks for HTML, as a browser or a client built for the
 * real service's form does with `Accept: text/html`.
 */

export async function registerTopupsRoutes(
  app: ZodApp,
  topups: TopupsService,
  cryptoTopups: CryptoTopups,
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
          'Top up an account: the hosted page (HTML: pay by card, or the bank-transfer instructions), as the real service answers, by default; the topup as JSON, with that page’s paymentUrl, to a client that asks for it with Accept: application/json',
        tags: ['topups'],
        security,
        body: z.object({ accountId: z.uuid(), amount: z.union([z.string().max(40), z.number()]) }),
        response: {
          201: z.union([topupView, z.string().describe('text/html')]),
          ...errors(400, 401, 403, 404, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const topup = await topups.createFiat(requireCustomer(request), withClientAmount(request.body));
      return prefersJson(request.headers.accept)
        ? reply.code(201).send(presentTopup(topup))
        : reply
            .code(201)
            .type('text/html; charset=utf-8')
            .send(topupPage(topup, undefined, languageOf(request, reply)));
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

  const cryptoPair = {
    currency: z.string().trim().min(2).max(10).meta({ example: 'USDC' }),
    network: z
      .string()
      .trim()
      .min(2)
      .max(10)
      .transform((n) => n.toUpperCase()),
  };
  const accountCurrency = z
    .string()
    .regex(/^[A-Za-z]{3}$/, 'must be a three-letter currency code')
    .transform((c) => c.toUpperCase())
    .default('EUR');
  const amountField = z.union([z.string().max(40), z.number()]);

  app.get(
    '/topups/crypto/currencies',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'The crypto assets and networks a topup can be paid in',
        tags: ['topups'],
        security,
        response: {
          200: z.object({
            data: z.array(
              z.object({
                currency: z.string(),
                network: z.string(),
                networkName: z.string(),
                confirmationsRequired: z.number().int(),
              }),
            ),
          }),
          ...errors(401),
        },
      },
    },
    async () => ({ data: cryptoTopups.currencies() }),
  );

  app.get(
    '/topups/crypto/limits',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'The smallest crypto topup and the daily and monthly limits left, in the account currency',
        tags: ['topups'],
        security,
        querystring: currencyQuery,
        response: {
          200: z.object({ currency: z.string(), minimum: z.string(), daily: period, monthly: period }),
          ...errors(400, 401),
        },
      },
    },
    async (request) => {
      const limits = await cryptoTopups.limits(requireCustomer(request), request.query.currency);
      return { ...presentUsage(limits), minimum: formatAmountIn(limits.minimum, limits.currency) };
    },
  );

  app.post(
    '/topups/crypto/exchange-rate',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'A rate quote (account currency per unit of the asset), valid 15 minutes, usable once',
        tags: ['topups'],
        security,
        body: z.object({ ...cryptoPair, accountCurrency }),
        response: {
          201: z.object({
            quoteId: z.string(),
            currency: z.string(),
            network: z.string(),
            accountCurrency: z.string(),
            rate: z.string(),
            expiresAt: z.iso.datetime(),
          }),
          ...errors(400, 401),
        },
      },
    },
    async (request, reply) => {
      const quote = await cryptoTopups.quote(requireCustomer(request), request.body);
      return reply.code(201).send({
        quoteId: quote.quoteId,
        currency: quote.currency,
        network: quote.network,
        accountCurrency: quote.accountCurrency,
        rate: formatRate(quote.rateE18),
        expiresAt: quote.expiresAt.toISOString(),
      });
    },
  );

  app.post(
    '/topups/crypto/fees',
    {
      onRequest: authn.customer,
      schema: {
        summary:
          'The fee of a crypto topup of `amount` (credited), and the crypto to send at the current rate',
        tags: ['topups'],
        security,
        body: z.object({ ...cryptoPair, accountCurrency, amount: amountField }),
        response: {
          200: z.object({
            currency: z.string(),
            network: z.string(),
            accountCurrency: z.string(),
            amount: z.string(),
            fee: z.string(),
            feePercent: z.string(),
            total: z.string(),
            cryptoAmount: z.string(),
            rate: z.string(),
          }),
          ...errors(400, 401),
        },
      },
    },
    async (request) => {
      const f = await cryptoTopups.fees(withClientAmount(request.body));
      return {
        currency: f.currency,
        network: f.network,
        accountCurrency: f.accountCurrency,
        amount: formatAmountIn(f.amount, f.accountCurrency),
        fee: formatAmountIn(f.fee, f.accountCurrency),
        feePercent: '1',
        total: formatAmountIn(f.total, f.accountCurrency),
        cryptoAmount: formatAmountIn(f.cryptoAmount, f.currency),
        rate: formatRate(f.rateE18),
      };
    },
  );

  app.post(
    '/topups/crypto',
    {
      onRequest: authn.customer,
      schema: {
        summary:
          'A crypto topup: the deposit address and the exact amount to send (the quote’s rate, or the current one)',
        tags: ['topups'],
        security,
        body: z.object({
          accountId: z.uuid(),
          amount: amountField,
          ...cryptoPair,
          quoteId: z.string().max(64).optional(),
        }),
        response: { 201: topupView, ...errors(400, 401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          presentTopup(await cryptoTopups.create(requireCustomer(request), withClientAmount(request.body))),
        ),
  );

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
