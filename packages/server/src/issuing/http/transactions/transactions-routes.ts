// /transactions routes (docs/issuing.md, Transactions (3D Secure); docs/wire-compatibility.md list with page/size
// and type, status, startDate, endDate filters; the decision body {authType, authStatus}).
import { z } from 'zod';
import type { ZodApp } from '../../../platform/http/api-scope.ts';
import { formatAmountIn } from '../../../platform/money/amount.ts';
import {
  AUTH_TYPES,
  type IssuingTransaction,
  type PendingChallenge,
  type TransactionsService,
} from '../../transactions/transactions-service.ts';
import { type Authenticators, requireCustomer } from '../authenticate.ts';
import { errors } from '../schemas.ts';

const transactionStatus = z.enum(['pending_3ds', 'authorized', 'declined', 'settled', 'reversed', 'expired']);
export const transactionView = z.object({
  transactionId: z.string(),
  type: z.enum(['card_payment', 'refund']),
  status: transactionStatus,
  cardId: z.string(),
  accountId: z.string(),
  amount: z.string(),
  settledAmount: z.string().nullable(),
  /** Tessera additions (docs/issuing.md, Clearing) */
  heldAmount: z.string().nullable(),
  refundedAmount: z.string(),
  forcePost: z.boolean(),
  originalTransactionId: z.string().nullable(),
  currency: z.string(),
  merchant: z.string(),
  declineReason: z.string().nullable(),
  /** Tessera addition, only on a decline by a spending control: which scope's which control refused */
  spendingControl: z.object({ scope: z.string(), control: z.string() }).optional(),
  threeDS: z
    .object({
      transactionAuthId: z.string(),
      status: z.string(),
      authType: z.string().nullable(),
      expiresAt: z.iso.datetime(),
    })
    .nullable(),
  createdAt: z.iso.datetime(),
  authorizedAt: z.iso.datetime().nullable(),
  settledAt: z.iso.datetime().nullable(),
  holdExpiresAt: z.iso.datetime().nullable(),
});

export const presentTransaction = (t: IssuingTransaction) => ({
  transactionId: t.transactionId,
  type: t.type,
  status: t.status,
  cardId: t.cardId,
  accountId: t.accountId,
  amount: formatAmountIn(t.amount, t.currency),
  settledAmount: t.settledAmount === null ? null : formatAmountIn(t.settledAmount, t.currency),
  heldAmount: t.heldAmount === null ? null : formatAmountIn(t.heldAmount, t.currency),
  refundedAmount: formatAmountIn(t.refundedAmount, t.currency),
  forcePost: t.forcePost,
  originalTransactionId: t.originalTransactionId,
  currency: t.currency,
  merchant: t.merchant,
  declineReason: t.declineReason,
  ...(t.declinedBy ? { spendingControl: spendingControlOf(t.declinedBy) } : {}),
  threeDS: t.threeDS && { ...t.threeDS, expiresAt: t.threeDS.expiresAt.toISOString() },
  createdAt: t.createdAt.toISOString(),
  authorizedAt: t.authorizedAt?.toISOString() ?? null,
  settledAt: t.settledAt?.toISOString() ?? null,
  holdExpiresAt: t.holdExpiresAt?.toISOString() ?? null,
});

/** '<scope>.<control>' as stored; a control's name may itself hold a dot ('limits.per_day') */
function spendingControlOf(declinedBy: string) {
  const dot = declinedBy.indexOf('.');
  return { scope: declinedBy.slice(0, dot), control: declinedBy.slice(dot + 1) };
}

const presentChallenge = (c: PendingChallenge) => ({
  ...c,
  amount: formatAmountIn(c.amount, c.currency),
  requestedAt: c.requestedAt.toISOString(),
  expiresAt: c.expiresAt.toISOString(),
});

export async function registerTransactionsRoutes(
  app: ZodApp,
  transactions: TransactionsService,
  authn: Authenticators,
): Promise<void> {
  const security = [{ customerToken: [] }];
  const timestamp = z.iso.datetime({ offset: true });

  app.get(
    '/transactions/3d-secure',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'Pending 3D Secure challenges of the customer, oldest first',
        tags: ['transactions'],
        security,
        response: {
          200: z.object({
            data: z.array(
              z.object({
                transactionAuthId: z.string(),
                transactionId: z.string(),
                cardId: z.string(),
                amount: z.string(),
                currency: z.string(),
                merchant: z.string(),
                requestedAt: z.iso.datetime(),
                expiresAt: z.iso.datetime(),
              }),
            ),
          }),
          ...errors(401),
        },
      },
    },
    async (request) => ({
      data: (await transactions.pendingChallenges(requireCustomer(request))).map(presentChallenge),
    }),
  );

  app.patch(
    '/transactions/3d-secure/:transactionAuthId',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'The cardholder’s decision on a 3D Secure challenge',
        description:
          'authStatus success → authorized, failed → declined, canceled → cancelled, timeout → timeout. A second decision, or one after expiry, is a 409.',
        tags: ['transactions'],
        security,
        params: z.object({ transactionAuthId: z.string().max(64) }),
        body: z.object({
          authType: z.enum(AUTH_TYPES),
          authStatus: z.enum(['success', 'failed', 'canceled', 'timeout']),
        }),
        response: { 200: transactionView, ...errors(400, 401, 404, 409) },
      },
    },
    async (request) =>
      presentTransaction(
        await transactions.decideChallenge(
          requireCustomer(request),
          request.params.transactionAuthId,
          request.body,
        ),
      ),
  );

  app.get(
    '/transactions',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'The customer’s transactions, newest first',
        tags: ['transactions'],
        security,
        querystring: z.object({
          page: z.coerce.number().int().min(1).default(1),
          size: z.coerce.number().int().min(1).max(100).default(20),
          type: z.enum(['card_payment', 'refund']).optional(),
          status: transactionStatus.optional(),
          startDate: timestamp.optional(),
          endDate: timestamp.optional(),
        }),
        response: {
          200: z.object({
            data: z.array(transactionView),
            page: z.number().int(),
            size: z.number().int(),
            total: z.number().int(),
          }),
          ...errors(400, 401),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const result = await transactions.list(requireCustomer(request), {
        page: q.page,
        size: q.size,
        ...(q.type ? { type: q.type } : {}),
        ...(q.status ? { status: q.status } : {}),
        ...(q.startDate ? { startDate: new Date(q.startDate) } : {}),
        ...(q.endDate ? { endDate: new Date(q.endDate) } : {}),
      });
      return { data: result.items.map(presentTransaction), page: q.page, size: q.size, total: result.total };
    },
  );

  app.get(
    '/transactions/:transactionId',
    {
      onRequest: authn.customer,
      schema: {
        summary: 'The full record of a transaction',
        tags: ['transactions'],
        security,
        params: z.object({ transactionId: z.string().max(64) }),
        response: { 200: transactionView, ...errors(401, 404) },
      },
    },
    async (request) =>
      presentTransaction(await transactions.get(requireCustomer(request), request.params.transactionId)),
  );
}
