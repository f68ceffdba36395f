// Money out for stores (Tessera's own routes, docs/payouts.md), as JSON:API documents: the store's fiat
// balance, its balance transactions, payouts to its bank account and their settlement reports. A store
// sees its own only. Lists are cursor pages, newest first: pass meta.next_cursor (or follow links.next).
import { z } from 'zod';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Db } from '../../platform/db/database.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { sendCsv } from '../../platform/http/csv-reply.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import { ClientAmount, formatAmountIn } from '../../platform/money/amount.ts';
import { BALANCE_TRANSACTION_TYPES, balancesOf } from '../../platform/payouts/balance-transactions.ts';
import { type PayoutView, payoutView } from '../../platform/payouts/payout-view.ts';
import type { PayoutsService } from '../../platform/payouts/payouts-service.ts';
import {
  type BalanceTransactionView,
  balanceByDay,
  balanceTransactionView,
  listBalanceTransactions,
  reportDay,
  settlementReport,
} from '../../platform/payouts/reports.ts';
import { type StoreAuthenticator, storeOf } from './authenticate.ts';
import { errors, JSON_API } from './jsonapi.ts';

const balanceResource = z.object({
  type: z.literal('balances'),
  id: z.string(),
  attributes: z.object({
    currency: z.string(),
    available: z.string(),
    pending: z.string(),
    reserved: z.string(),
  }),
});
const balanceTransactionResource = z.object({
  type: z.literal('balance_transactions'),
  id: z.string(),
  attributes: z.object({
    type: z.enum(BALANCE_TRANSACTION_TYPES),
    source_type: z.string(),
    source_id: z.string(),
    currency: z.string(),
    gross: z.string(),
    fee: z.string(),
    net: z.string(),
    created_at: z.string(),
    available_at: z.string(),
    payout_id: z.string().nullable(),
  }),
});
const payoutResource = z.object({
  type: z.literal('payouts'),
  id: z.string(),
  attributes: z.object({
    status: z.enum(['held', 'pending', 'in_transit', 'paid', 'failed', 'returned']),
    amount: z.string(),
    currency: z.string(),
    store_id: z.string(),
    arrival_date: z.string().nullable(),
    bank_account: z.object({ iban: z.string(), bic: z.string().nullable(), holder_name: z.string() }),
    itemized: z.boolean(),
    failure_code: z.string().nullable(),
    created_at: z.string(),
  }),
});
const listOf = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    meta: z.object({ next_cursor: z.string().nullable() }),
    links: z.object({ next: z.string().nullable() }),
  });
const pageQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(100),
  cursor: z.string().max(64).optional(),
};

const presentTransaction = (b: BalanceTransactionView): z.infer<typeof balanceTransactionResource> => ({
  type: 'balance_transactions',
  id: b.id,
  attributes: {
    type: b.type,
    source_type: b.source.type,
    source_id: b.source.id,
    currency: b.currency,
    gross: b.gross,
    fee: b.fee,
    net: b.net,
    created_at: b.createdAt,
    available_at: b.availableAt,
    payout_id: b.payoutId,
  },
});
const presentPayout = (p: PayoutView): z.infer<typeof payoutResource> => ({
  type: 'payouts',
  id: p.id,
  attributes: {
    status: p.status,
    amount: p.amount,
    currency: p.currency,
    store_id: p.storeId as string,
    arrival_date: p.arrivalDate,
    bank_account: { iban: p.bankAccount.iban, bic: p.bankAccount.bic, holder_name: p.bankAccount.holderName },
    itemized: p.itemized,
    failure_code: p.failureCode,
    created_at: p.createdAt,
  },
});

export interface StorePayoutRoutesDeps {
  db: Db;
  ledger: Ledger;
  clock: Clock;
  payouts: PayoutsService;
  authenticate: StoreAuthenticator;
}

export async function registerPayoutRoutes(app: ZodApp, deps: StorePayoutRoutesDeps): Promise<void> {
  const common = { onRequest: deps.authenticate };
  const ownerOf = (request: Parameters<typeof storeOf>[0]) => ({
    kind: 'store' as const,
    storeId: storeOf(request).id,
  });
  /** A page of rows fetched one over the limit: the last id kept is the next cursor. */
  const page = <T extends { id: string }>(
    url: string,
    rows: T[],
    limit: number,
    query: Record<string, unknown>,
  ) => {
    const items = rows.slice(0, limit);
    const next = rows.length > limit ? (items.at(-1)?.id ?? null) : null;
    const params = new URLSearchParams(
      Object.entries({ ...query, cursor: next ?? '' }).flatMap(([k, v]): [string, string][] =>
        v === undefined || v === '' ? [] : [[k, String(v)]],
      ),
    );
    return {
      items,
      meta: { next_cursor: next },
      links: { next: next ? `${url.split('?')[0]}?${params}` : null },
    };
  };

  app.get(
    '/stores/balance',
    {
      ...common,
      schema: {
        summary:
          'The store’s fiat balance per settlement currency: available, pending and reserved (Tessera extension)',
        tags: ['payouts'],
        response: { 200: z.object({ data: z.array(balanceResource) }), ...errors },
      },
    },
    async (request, reply) => {
      const balances = await balancesOf(deps.db, deps.ledger, ownerOf(request), deps.clock.now());
      return reply.type(JSON_API).send({
        data: balances.map((b) => ({
          type: 'balances' as const,
          id: b.currency,
          attributes: {
            currency: b.currency,
            available: formatAmountIn(b.available, b.currency),
            pending: formatAmountIn(b.pending, b.currency),
            reserved: formatAmountIn(b.reserved, b.currency),
          },
        })),
      });
    },
  );

  app.get(
    '/stores/balance/report',
    {
      ...common,
      schema: {
        summary:
          'The store’s balance by day (Tessera extension): CSV (RFC 4180) of gross, fees, net and the closing balance per currency',
        tags: ['payouts'],
        querystring: z.object({ from: reportDay, to: reportDay }),
        response: { 200: z.string().describe('text/csv'), ...errors },
      },
    },
    async (request, reply) => {
      const { from, to } = request.query;
      const owner = ownerOf(request);
      return sendCsv(
        reply,
        `balance-${owner.storeId}-${from}-${to}.csv`,
        await balanceByDay(deps.db, owner, from, to),
      );
    },
  );

  app.get(
    '/stores/balance_transactions',
    {
      ...common,
      schema: {
        summary: 'The store’s balance transactions, newest first (Tessera extension)',
        tags: ['payouts'],
        querystring: z.object({
          type: z.enum(BALANCE_TRANSACTION_TYPES).optional(),
          payout_id: z.string().max(64).optional(),
          ...pageQuery,
        }),
        response: { 200: listOf(balanceTransactionResource), ...errors },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const rows = await listBalanceTransactions(
        deps.db,
        ownerOf(request),
        { type: q.type, payoutId: q.payout_id },
        { limit: q.limit + 1, before: q.cursor },
      );
      const { items, meta, links } = page(request.url, rows, q.limit, q);
      return reply
        .type(JSON_API)
        .send({ data: items.map((r) => presentTransaction(balanceTransactionView(r))), meta, links });
    },
  );

  app.get(
    '/stores/payouts',
    {
      ...common,
      schema: {
        summary: 'The store’s payouts, newest first (Tessera extension)',
        tags: ['payouts'],
        querystring: z.object(pageQuery),
        response: { 200: listOf(payoutResource), ...errors },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const rows = await deps.payouts.list(deps.db, ownerOf(request), {
        limit: q.limit + 1,
        before: q.cursor,
      });
      const { items, meta, links } = page(request.url, rows, q.limit, q);
      return reply.type(JSON_API).send({ data: items.map((p) => presentPayout(payoutView(p))), meta, links });
    },
  );

  app.post(
    '/stores/payouts',
    {
      ...common,
      schema: {
        summary:
          'Pay out now (Tessera extension): everything available in the currency (itemized), or an amount no larger than the available balance',
        tags: ['payouts'],
        body: z.object({
          data: z.object({
            type: z.literal('payouts'),
            attributes: z.object({
              currency: z
                .string()
                .regex(/^[A-Za-z]{3}$/, 'must be an ISO 4217 code')
                .transform((c) => c.toUpperCase()),
              amount: z
                .string()
                .regex(/^\d{1,12}(\.\d{1,8})?$/, 'must be a decimal amount such as 10.90')
                .optional(),
            }),
          }),
        }),
        response: { 201: z.object({ data: payoutResource }), ...errors },
      },
    },
    async (request, reply) => {
      const { currency, amount } = request.body.data.attributes;
      try {
        const payout = await deps.payouts.payNow(ownerOf(request), {
          currency,
          ...(amount !== undefined ? { amount: ClientAmount.read(amount) } : {}),
        });
        return reply
          .code(201)
          .type(JSON_API)
          .send({ data: presentPayout(payoutView(payout)) });
      } catch (err) {
        // The field as this API names it.
        if (err instanceof DomainError && err.field && !err.field.startsWith('data.')) {
          throw new DomainError(err.code, err.message, {
            field: `data.attributes.${err.field}`,
            ...(err.details ? { details: err.details } : {}),
          });
        }
        throw err;
      }
    },
  );

  const ownPayout = async (storeId: string, id: string) => {
    const payout = await deps.db
      .selectFrom('payouts')
      .selectAll()
      .where('id', '=', id)
      .where('owner', '=', `store:${storeId}`)
      .executeTakeFirst();
    if (!payout) throw notFound('payout');
    return payout;
  };
  const params = z.object({ id: z.string().max(64) });

  app.get(
    '/stores/payouts/:id',
    {
      ...common,
      schema: {
        summary: 'A payout (Tessera extension)',
        tags: ['payouts'],
        params,
        response: { 200: z.object({ data: payoutResource }), ...errors },
      },
    },
    async (request, reply) =>
      reply
        .type(JSON_API)
        .send({ data: presentPayout(payoutView(await ownPayout(storeOf(request).id, request.params.id))) }),
  );

  app.get(
    '/stores/payouts/:id/report',
    {
      ...common,
      schema: {
        summary:
          'The payout’s settlement report (Tessera extension): CSV (RFC 4180) of every balance transaction it pays, summing to its amount',
        tags: ['payouts'],
        params,
        response: { 200: z.string().describe('text/csv'), ...errors },
      },
    },
    async (request, reply) =>
      sendCsv(
        reply,
        `${request.params.id}.csv`,
        settlementReport(deps.db, await ownPayout(storeOf(request).id, request.params.id)),
      ),
  );
}
