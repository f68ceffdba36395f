// Money out for sites (Tessera's own routes, docs/payouts.md): balances, balance transactions, payouts
// and their settlement reports. A merchant's key sees its own sites; a key that covers several sites
// names one with `siteId` (a site's own key needs not). Another merchant's site or payout is not found.
// The lists are keyset pages, newest first: `startingAfter` is the last id of the page before.
import { z } from 'zod';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Db } from '../../platform/db/database.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { sendCsv } from '../../platform/http/csv-reply.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import { ClientAmount, formatAmountIn } from '../../platform/money/amount.ts';
import { BALANCE_TRANSACTION_TYPES, balancesOf } from '../../platform/payouts/balance-transactions.ts';
import { payoutView } from '../../platform/payouts/payout-view.ts';
import type { PayoutsService } from '../../platform/payouts/payouts-service.ts';
import {
  balanceByDay,
  balanceTransactionView,
  listBalanceTransactions,
  reportDay,
  settlementReport,
} from '../../platform/payouts/reports.ts';
import type { MerchantScope } from '../sites.ts';
import { type MerchantAuthenticator, merchantOf } from './authenticate.ts';
import { envelope, errorEnvelope, ok, standardErrors } from './envelope.ts';
import { currencyField, decimalField, intField } from './fields.ts';

const balanceView = z.object({
  siteId: z.number().int(),
  currency: z.string(),
  available: z
    .string()
    .describe('may be negative: refunds beyond what was available, recovered from the next payouts'),
  pending: z.string(),
  reserved: z.string(),
});
const balanceTransactionSchema = z.object({
  id: z.string(),
  type: z.enum(BALANCE_TRANSACTION_TYPES),
  source: z.object({ type: z.string(), id: z.string() }),
  currency: z.string(),
  gross: z.string(),
  fee: z.string(),
  net: z.string(),
  createdAt: z.string(),
  availableAt: z.string(),
  payoutId: z.string().nullable(),
});
const payoutSchema = z.object({
  id: z.string(),
  status: z.enum(['held', 'pending', 'in_transit', 'paid', 'failed', 'returned']),
  amount: z.string(),
  currency: z.string(),
  siteId: z.number().int(),
  arrivalDate: z.string().nullable(),
  bankAccount: z.object({ iban: z.string(), bic: z.string().nullable(), holderName: z.string() }),
  itemized: z.boolean(),
  failureCode: z.string().nullable(),
  createdAt: z.string(),
});
const keysetEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({ code: z.number().int(), message: z.string(), data: z.array(item), hasMore: z.boolean() });
const keysetQuery = {
  perPage: z.coerce.number().int().min(1).max(100).optional(),
  startingAfter: z.string().max(64).optional(),
};

export interface PayoutRoutesDeps {
  db: Db;
  ledger: Ledger;
  clock: Clock;
  payouts: PayoutsService;
  authenticate: MerchantAuthenticator;
}

export async function registerPayoutRoutes(app: ZodApp, deps: PayoutRoutesDeps): Promise<void> {
  const common = { onRequest: deps.authenticate };
  const siteOf = (merchant: MerchantScope, siteId: number | undefined) => {
    if (siteId === undefined) {
      if (merchant.siteIds.length === 1)
        return { kind: 'site' as const, siteId: merchant.siteIds[0] as number };
      throw new DomainError('validation_failed', 'siteId is required: the key covers several sites', {
        field: 'siteId',
      });
    }
    if (!merchant.siteIds.includes(siteId)) throw notFound('site');
    return { kind: 'site' as const, siteId };
  };
  const keyset = <T extends { id: string }>(rows: T[], limit: number) => ({
    items: rows.slice(0, limit),
    hasMore: rows.length > limit,
  });

  app.get(
    '/balance',
    {
      ...common,
      schema: {
        summary: 'The site’s balance per currency: available, pending and reserved (Tessera extension)',
        tags: ['payouts'],
        querystring: z.object({ siteId: intField.optional() }),
        response: { 200: envelope(z.array(balanceView)), ...standardErrors },
      },
    },
    async (request) => {
      const owner = siteOf(merchantOf(request), request.query.siteId);
      const balances = await balancesOf(deps.db, deps.ledger, owner, deps.clock.now());
      return ok(
        balances.map((b) => ({
          siteId: owner.siteId,
          currency: b.currency,
          available: formatAmountIn(b.available, b.currency),
          pending: formatAmountIn(b.pending, b.currency),
          reserved: formatAmountIn(b.reserved, b.currency),
        })),
      );
    },
  );

  app.get(
    '/balance/report',
    {
      ...common,
      schema: {
        summary:
          'The site’s balance by day (Tessera extension): CSV (RFC 4180) of gross, fees, net and the closing balance per currency',
        tags: ['payouts'],
        querystring: z.object({ siteId: intField.optional(), from: reportDay, to: reportDay }),
        response: { 200: z.string().describe('text/csv'), ...standardErrors },
      },
    },
    async (request, reply) => {
      const { siteId, from, to } = request.query;
      const owner = siteOf(merchantOf(request), siteId);
      return sendCsv(
        reply,
        `balance-${owner.siteId}-${from}-${to}.csv`,
        await balanceByDay(deps.db, owner, from, to),
      );
    },
  );

  app.get(
    '/balance-transaction',
    {
      ...common,
      schema: {
        summary: 'The site’s balance transactions, newest first (Tessera extension)',
        tags: ['payouts'],
        querystring: z.object({
          siteId: intField.optional(),
          type: z.enum(BALANCE_TRANSACTION_TYPES).optional(),
          payoutId: z.string().max(64).optional(),
          currency: currencyField.optional(),
          ...keysetQuery,
        }),
        response: { 200: keysetEnvelope(balanceTransactionSchema), ...standardErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const owner = siteOf(merchantOf(request), q.siteId);
      const limit = q.perPage ?? 100;
      const rows = await listBalanceTransactions(deps.db, owner, q, {
        limit: limit + 1,
        before: q.startingAfter,
      });
      const { items, hasMore } = keyset(rows, limit);
      return { ...ok(items.map(balanceTransactionView)), hasMore };
    },
  );

  app.get(
    '/payout',
    {
      ...common,
      schema: {
        summary: 'The site’s payouts, newest first (Tessera extension)',
        tags: ['payouts'],
        querystring: z.object({ siteId: intField.optional(), ...keysetQuery }),
        response: { 200: keysetEnvelope(payoutSchema), ...standardErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const owner = siteOf(merchantOf(request), q.siteId);
      const limit = q.perPage ?? 100;
      const { items, hasMore } = keyset(
        await deps.payouts.list(deps.db, owner, { limit: limit + 1, before: q.startingAfter }),
        limit,
      );
      return { ...ok(items.map((p) => sitePayout(p))), hasMore };
    },
  );

  app.post(
    '/payout',
    {
      ...common,
      schema: {
        summary:
          'Pay out now (Tessera extension): everything available (itemized), or an amount no larger than the available balance',
        tags: ['payouts'],
        body: z.object({
          siteId: intField.optional(),
          currency: currencyField,
          amount: decimalField.optional(),
        }),
        response: { 201: envelope(payoutSchema), 403: errorEnvelope, ...standardErrors },
      },
    },
    async (request, reply) => {
      const { siteId, currency, amount } = request.body;
      const owner = siteOf(merchantOf(request), siteId);
      const payout = await deps.payouts.payNow(owner, {
        currency,
        ...(amount !== undefined ? { amount: ClientAmount.read(amount) } : {}),
      });
      return reply.code(201).send({ code: 201, message: 'Created', data: sitePayout(payout) });
    },
  );

  const payoutParams = z.object({ id: z.string().max(64) });
  const ownPayout = async (merchant: MerchantScope, id: string) => {
    const payout = await deps.db.selectFrom('payouts').selectAll().where('id', '=', id).executeTakeFirst();
    const siteId = payout?.owner.startsWith('site:') ? Number(payout.owner.slice(5)) : undefined;
    if (!payout || siteId === undefined || !merchant.siteIds.includes(siteId)) throw notFound('payout');
    return payout;
  };

  app.get(
    '/payout/:id',
    {
      ...common,
      schema: {
        summary: 'A payout (Tessera extension)',
        tags: ['payouts'],
        params: payoutParams,
        response: { 200: envelope(payoutSchema), ...standardErrors },
      },
    },
    async (request) => ok(sitePayout(await ownPayout(merchantOf(request), request.params.id))),
  );

  app.get(
    '/payout/:id/report',
    {
      ...common,
      schema: {
        summary:
          'The payout’s settlement report (Tessera extension): CSV (RFC 4180) of every balance transaction it pays, summing to its amount',
        tags: ['payouts'],
        params: payoutParams,
        response: { 200: z.string().describe('text/csv'), ...standardErrors },
      },
    },
    async (request, reply) =>
      sendCsv(
        reply,
        `${request.params.id}.csv`,
        settlementReport(deps.db, await ownPayout(merchantOf(request), request.params.id)),
      ),
  );
}

function sitePayout(row: Parameters<typeof payoutView>[0]): z.infer<typeof payoutSchema> {
  const { storeId: _storeId, ...view } = payoutView(row);
  return { ...view, siteId: view.siteId as number };
}
