// /accounts routes (docs/issuing.md, Accounts; docs/wire-compatibility.md: GET ?currency=EUR, POST {currency}).
// Amounts are decimal strings in the currency's exponent, exactly as the ledger holds them.
import { z } from 'zod';
import type { ZodApp } from '../../../platform/http/api-scope.ts';
import { sendCsv } from '../../../platform/http/csv-reply.ts';
import { formatAmountIn } from '../../../platform/money/amount.ts';
import { reportMonth } from '../../../platform/payouts/reports.ts';
import type { Account, AccountsService } from '../../accounts/accounts-service.ts';
import { type Authenticators, requireCustomer } from '../authenticate.ts';
import { errors } from '../schemas.ts';

const currency = z
  .string()
  .regex(/^[A-Za-z]{3}$/, 'must be a three-letter currency code')
  .transform((c) => c.toUpperCase());

const accountView = z.object({
  accountId: z.string(),
  currency: z.string(),
  status: z.enum(['open', 'closed']),
  balance: z.string(),
  availableBalance: z.string(),
  pendingAmount: z.string(),
  createdAt: z.iso.datetime(),
  closedAt: z.iso.datetime().nullable(),
});

export function presentAccount(account: Account) {
  return {
    accountId: account.accountId,
    currency: account.currency,
    status: account.status,
    balance: formatAmountIn(account.balance, account.currency),
    availableBalance: formatAmountIn(account.available, account.currency),
    pendingAmount: formatAmountIn(account.pending, account.currency),
    createdAt: account.createdAt.toISOString(),
    closedAt: account.closedAt?.toISOString() ?? null,
  };
}

export async function registerAccountsRoutes(
  app: ZodApp,
  accounts: AccountsService,
  authn: Authenticators,
): Promise<void> {
  const security = [{ customerToken: [] }];

  app.get(
    '/accounts',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'The customer’s accounts, optionally of one currency',
        tags: ['accounts'],
        security,
        querystring: z.object({ currency: currency.optional() }),
        response: { 200: z.object({ data: z.array(accountView) }), ...errors(400, 401) },
      },
    },
    async (request) => ({
      data: (
        await accounts.list(
          requireCustomer(request),
          request.query.currency ? { currency: request.query.currency } : {},
        )
      ).map(presentAccount),
    }),
  );

  app.post(
    '/accounts',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'Open an account in a currency (needs approved KYC; one open account per currency)',
        tags: ['accounts'],
        security,
        body: z.object({ currency }),
        response: { 201: accountView, ...errors(400, 401, 409) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(presentAccount(await accounts.open(requireCustomer(request), request.body.currency))),
  );

  app.get(
    '/accounts/:accountId/statement',
    {
      onRequest: authn.customer,
      schema: {
        summary:
          'The account’s statement for a month (Tessera extension): CSV (RFC 4180) of every posted movement with its running balance, between the opening and the closing balance',
        tags: ['accounts'],
        security,
        params: z.object({ accountId: z.string().max(64) }),
        querystring: z.object({
          month: reportMonth,
        }),
        response: { 200: z.string().describe('text/csv'), ...errors(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const { accountId } = request.params;
      const csv = await accounts.statement(requireCustomer(request), accountId, request.query.month);
      return sendCsv(reply, `statement-${accountId}-${request.query.month}.csv`, csv);
    },
  );

  app.post(
    '/accounts/:accountId/close',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'Close an account whose balance is zero and which has no pending authorization',
        tags: ['accounts'],
        security,
        params: z.object({ accountId: z.string().max(64) }),
        response: { 200: accountView, ...errors(401, 404, 409) },
      },
    },
    async (request) =>
      presentAccount(await accounts.close(requireCustomer(request), request.params.accountId)),
  );
}
