// /transaction (spec, Transactions; docs/wire-compatibility.md for filters and the capture and refund bodies).

import { z } from 'zod';
import { PAYMENTS_TRANSACTION_STATUSES as STATUSES } from '../../platform/db/schema.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { text } from '../../platform/http/fields.ts';
import { ClientAmount, parseAmountField } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { PaymentTransactionsService } from '../transactions/transactions-service.ts';
import { type MerchantAuthenticator, merchantOf } from './authenticate.ts';
import { envelope, ok, paged, pagedEnvelope, pageOf, standardErrors } from './envelope.ts';
import { currencyField, decimalField, intField, isoDateTime, pageQuery } from './fields.ts';
import { presentTransaction, transactionView } from './views.ts';

const REFUND_REASONS = [
  'fraud-confirm',
  'highly-suspicious',
  'duplicated-transaction',
  'customer-demand',
  'test-transaction',
  'card-expired',
] as const;

export async function registerTransactionsRoutes(
  app: ZodApp,
  deps: { transactions: PaymentTransactionsService; authenticate: MerchantAuthenticator },
): Promise<void> {
  const { transactions } = deps;
  const common = { onRequest: deps.authenticate };
  const idParam = z.object({ id: intField });

  app.get(
    '/transaction',
    {
      ...common,
      schema: {
        summary: 'List transactions',
        tags: ['transactions'],
        querystring: z.object({
          orderId: intField.optional(),
          customerId: intField.optional(),
          email: z.string().max(254).optional(),
          transactionMethod: z.enum(['card', 'wallet']).optional(),
          currency: currencyField.optional(),
          amountFrom: decimalField.optional(),
          amountTo: decimalField.optional(),
          transactionType: z.enum(['deposit', 'refund', 'credit', 'chargeback', 'representment']).optional(),
          transactionStatus: z
            .union([z.enum(STATUSES), z.array(z.enum(STATUSES)).max(STATUSES.length)])
            .transform((v) => (Array.isArray(v) ? v : [v]))
            .optional(),
          createdAtFrom: isoDateTime.optional(),
          createdAtTo: isoDateTime.optional(),
          ...pageQuery,
        }),
        response: { 200: pagedEnvelope(transactionView), ...standardErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const page = pageOf(q);
      // Amount filters need a currency to be exact; without one they are read as two-decimal amounts.
      const asset = findAsset(q.currency ?? 'EUR') ?? findAsset('EUR');
      const amount = (text: string | undefined, field: string) =>
        text === undefined || !asset ? undefined : parseAmountField(text, asset, field);
      const amountFrom = amount(q.amountFrom, 'amountFrom');
      const amountTo = amount(q.amountTo, 'amountTo');
      const { items, total } = await transactions.list(
        merchantOf(request),
        {
          ...(q.orderId !== undefined ? { orderId: q.orderId } : {}),
          ...(q.customerId !== undefined ? { customerId: q.customerId } : {}),
          ...(q.email ? { email: q.email } : {}),
          ...(q.transactionMethod ? { transactionMethod: q.transactionMethod } : {}),
          ...(q.currency ? { currency: q.currency } : {}),
          ...(amountFrom !== undefined ? { amountFrom } : {}),
          ...(amountTo !== undefined ? { amountTo } : {}),
          ...(q.transactionType ? { transactionType: q.transactionType } : {}),
          ...(q.transactionStatus ? { transactionStatus: q.transactionStatus } : {}),
          ...(q.createdAtFrom ? { createdAtFrom: new Date(q.createdAtFrom) } : {}),
          ...(q.createdAtTo ? { createdAtTo: new Date(q.createdAtTo) } : {}),
        },
        page,
      );
      return paged(items.map(presentTransaction), total, page);
    },
  );

  app.get(
    '/transaction/:id',
    {
      ...common,
      schema: {
        summary: 'Retrieve a transaction',
        tags: ['transactions'],
        params: idParam,
        response: { 200: envelope(transactionView), ...standardErrors },
      },
    },
    async (request) => ok(presentTransaction(await transactions.get(merchantOf(request), request.params.id))),
  );

  app.put(
    '/transaction/:id',
    {
      ...common,
      schema: {
        summary: 'Capture an authorized transaction, in full or in part (the rest is released)',
        tags: ['transactions'],
        params: idParam,
        body: z.object({ amount: decimalField }),
        response: { 200: envelope(transactionView), ...standardErrors },
      },
    },
    async (request) => {
      const merchant = merchantOf(request);
      const t = await transactions.capture(
        merchant,
        request.params.id,
        ClientAmount.read(request.body.amount),
      );
      return ok(presentTransaction(await transactions.get(merchant, t.id)));
    },
  );

  app.delete(
    '/transaction/:id',
    {
      ...common,
      schema: {
        summary:
          'Refund a captured transaction (in full when amount is omitted), or void one that is only authorized',
        tags: ['transactions'],
        params: idParam,
        body: z
          .object({
            reason: z.enum(REFUND_REASONS).optional(),
            message: text(500).optional(),
            amount: decimalField.optional(),
          })
          .nullish(),
        // Shop modules (Twispay's WHMCS and Magento 2) record the refund by data.transactionId.
        response: {
          200: envelope(
            transactionView.extend({
              transactionId: z
                .number()
                .int()
                .describe('The refund transaction’s id (the voided transaction’s for a void): same as id'),
            }),
          ),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const body = request.body ?? {};
      const merchant = merchantOf(request);
      const t = await transactions.refund(merchant, request.params.id, {
        ...(body.amount !== undefined ? { amount: ClientAmount.read(body.amount) } : {}),
        ...(body.reason ? { reason: body.reason } : {}),
        ...(body.message ? { message: body.message } : {}),
      });
      return ok({ ...presentTransaction(await transactions.get(merchant, t.id)), transactionId: t.id });
    },
  );
}
