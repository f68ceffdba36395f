// The operator's side of money out (docs/payouts.md): each site's and store's pricing and payout
// schedule, their balances and payouts, and the payout run on demand. The reports, the bank files and the
// reconciliation are in money-out-report-routes.ts.
import { z } from 'zod';
import { DomainError } from '../../platform/errors/domain-error.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { sendCsv } from '../../platform/http/csv-reply.ts';
import { ClientAmount, formatAmountIn } from '../../platform/money/amount.ts';
import { balancesOf } from '../../platform/payouts/balance-transactions.ts';
import { payoutView } from '../../platform/payouts/payout-view.ts';
import { settlementReport } from '../../platform/payouts/reports.ts';
import { PAYOUT_INTERVALS, type Terms, WEEKDAYS } from '../../platform/payouts/terms.ts';
import {
  amountText,
  pricingInput,
  scheduleInput,
  toFeeSchedule,
  toPayoutSchedule,
} from '../../platform/payouts/terms-input.ts';
import type { AdminDeps } from './admin-deps.ts';
import { errorBody, standardErrors } from './schemas.ts';
import { ownerRoutes } from './tenant-owners.ts';

const pricingView = z.object({
  percentBps: z.number().int(),
  fixed: z.record(z.string(), z.string()),
  brands: z.record(
    z.string(),
    z.object({ percentBps: z.number().int(), fixed: z.record(z.string(), z.string()) }),
  ),
  refundFees: z.boolean(),
});
const scheduleView = z.object({
  interval: z.enum(PAYOUT_INTERVALS),
  weeklyAnchor: z.enum(WEEKDAYS),
  monthlyAnchor: z.number().int(),
  minimum: z.string(),
  delayDays: z.number().int(),
  reservePercent: z.string(),
  reserveDays: z.number().int(),
});
const balanceView = z.object({
  currency: z.string(),
  available: z.string(),
  pending: z.string(),
  reserved: z.string(),
});
const payoutSchema = z.object({
  id: z.string(),
  status: z.string(),
  amount: z.string(),
  currency: z.string(),
  siteId: z.number().int().optional(),
  storeId: z.string().optional(),
  arrivalDate: z.string().nullable(),
  bankAccount: z.object({ iban: z.string(), bic: z.string().nullable(), holderName: z.string() }),
  itemized: z.boolean(),
  failureCode: z.string().nullable(),
  createdAt: z.string(),
});

const presentPricing = (terms: Terms) => ({
  percentBps: terms.fees.percentBps,
  fixed: fixedText(terms.fees.fixed),
  brands: Object.fromEntries(
    Object.entries(terms.fees.brands).map(([brand, rate]) => [
      brand,
      { percentBps: rate.percentBps, fixed: fixedText(rate.fixed) },
    ]),
  ),
  refundFees: terms.fees.refundFees,
});
const presentSchedule = ({ schedule: s }: Terms) => ({
  interval: s.interval,
  weeklyAnchor: s.weeklyAnchor,
  monthlyAnchor: s.monthlyAnchor,
  minimum: s.minimum,
  delayDays: s.delayDays,
  reservePercent: (s.reserveBps / 100).toFixed(2),
  reserveDays: s.reserveDays,
});

export async function registerMoneyOutRoutes(app: ZodApp, deps: AdminDeps): Promise<void> {
  const { terms, payouts } = deps.moneyOut;
  for (const route of ownerRoutes(deps)) {
    const base = { tags: [route.tag], params: route.params };
    app.get(
      `${route.path}/pricing`,
      {
        schema: {
          ...base,
          summary: `The ${route.whose}’s fee schedule`,
          response: { 200: pricingView, ...standardErrors },
        },
      },
      async (request) => presentPricing(await terms.get(deps.db, await route.ownerOf(request.params))),
    );
    app.put(
      `${route.path}/pricing`,
      {
        schema: {
          ...base,
          summary: `Set the ${route.whose}’s fee schedule: basis points plus a fixed amount per currency, optionally per card brand`,
          body: pricingInput,
          response: { 200: pricingView, ...standardErrors },
        },
      },
      async (request) => {
        const owner = await route.ownerOf(request.params);
        return presentPricing(await terms.putFees(deps.db, owner, toFeeSchedule(request.body)));
      },
    );
    app.get(
      `${route.path}/payout-schedule`,
      {
        schema: {
          ...base,
          summary: `When the ${route.whose} is paid`,
          response: { 200: scheduleView, ...standardErrors },
        },
      },
      async (request) => presentSchedule(await terms.get(deps.db, await route.ownerOf(request.params))),
    );
    app.put(
      `${route.path}/payout-schedule`,
      {
        schema: {
          ...base,
          summary: `Set when the ${route.whose} is paid: interval, anchor, minimum, settlement delay and rolling reserve`,
          body: scheduleInput,
          response: { 200: scheduleView, ...standardErrors },
        },
      },
      async (request) => {
        const owner = await route.ownerOf(request.params);
        return presentSchedule(await terms.putSchedule(deps.db, owner, toPayoutSchedule(request.body)));
      },
    );
    app.get(
      `${route.path}/balance`,
      {
        schema: {
          ...base,
          summary: `The ${route.whose}’s balance per currency`,
          response: { 200: z.object({ data: z.array(balanceView) }), ...standardErrors },
        },
      },
      async (request) => {
        const owner = await route.ownerOf(request.params);
        const balances = await balancesOf(deps.db, deps.ledger, owner, deps.clock.now());
        return {
          data: balances.map((b) => ({
            currency: b.currency,
            available: formatAmountIn(b.available, b.currency),
            pending: formatAmountIn(b.pending, b.currency),
            reserved: formatAmountIn(b.reserved, b.currency),
          })),
        };
      },
    );
    app.get(
      `${route.path}/payouts`,
      {
        schema: {
          ...base,
          summary: `The ${route.whose}’s payouts, newest first`,
          querystring: z.object({
            limit: z.coerce.number().int().min(1).max(100).default(50),
            startingAfter: z.string().max(64).optional(),
          }),
          response: {
            200: z.object({ data: z.array(payoutSchema), hasMore: z.boolean() }),
            ...standardErrors,
          },
        },
      },
      async (request) => {
        const owner = await route.ownerOf(request.params);
        const { limit, startingAfter } = request.query;
        const rows = await payouts.list(deps.db, owner, { limit: limit + 1, before: startingAfter });
        return { data: rows.slice(0, limit).map(payoutView), hasMore: rows.length > limit };
      },
    );
    app.post(
      `${route.path}/payouts`,
      {
        schema: {
          ...base,
          summary: `Pay the ${route.whose} now: everything available, or an amount no larger than the available balance`,
          body: z.object({
            currency: z
              .string()
              .regex(/^[A-Za-z]{3}$/)
              .transform((c) => c.toUpperCase()),
            amount: amountText.optional(),
          }),
          response: { 201: payoutSchema, 403: errorBody, ...standardErrors },
        },
      },
      async (request, reply) => {
        const owner = await route.ownerOf(request.params);
        const { currency, amount } = request.body;
        const payout = await payouts.payNow(owner, {
          currency,
          ...(amount !== undefined ? { amount: ClientAmount.read(amount) } : {}),
        });
        return reply.code(201).send(payoutView(payout));
      },
    );
  }

  app.post(
    '/payout-runs',
    {
      // Each payout is its own transaction and a bank file is recorded before it is written: a run
      // cannot be one replayable unit of work, so an Idempotency-Key is refused rather than ignored.
      config: { idempotency: 'refuse' },
      schema: {
        summary:
          'Run the payout schedule now: pay every tenant due today, then hand the new payouts to the bank',
        tags: ['payouts'],
        response: {
          200: z.object({
            payouts: z.array(payoutSchema),
            sent: z.number().int(),
            failures: z
              .array(z.object({ tenant: z.string(), currency: z.string(), error: z.string() }))
              .describe('tenants whose step threw: logged, counted, and tried again by the next run'),
          }),
          ...standardErrors,
        },
      },
    },
    async () => {
      const { made, failed } = await payouts.runDue({ explicit: true });
      const sent = await deps.moneyOut.bank.dispatch();
      return { payouts: made.map(payoutView), sent, failures: failed };
    },
  );

  const payoutParams = z.object({ id: z.string().max(64) });
  const anyPayout = async (id: string) => {
    const row = await deps.db.selectFrom('payouts').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw new DomainError('not_found', 'payout not found');
    return row;
  };
  app.get(
    '/payouts/:id',
    {
      schema: {
        summary: 'A payout of any site or store',
        tags: ['payouts'],
        params: payoutParams,
        response: { 200: payoutSchema, ...standardErrors },
      },
    },
    async (request) => payoutView(await anyPayout(request.params.id)),
  );
  app.get(
    '/payouts/:id/report',
    {
      schema: {
        summary:
          'A payout’s settlement report (CSV, RFC 4180): every balance transaction it pays, summing to its amount',
        tags: ['payouts'],
        params: payoutParams,
        response: { 200: z.string().describe('text/csv'), ...standardErrors },
      },
    },
    async (request, reply) =>
      sendCsv(
        reply,
        `${request.params.id}.csv`,
        settlementReport(deps.db, await anyPayout(request.params.id)),
      ),
  );
}

const fixedText = (fixed: Record<string, bigint>) =>
  Object.fromEntries(Object.entries(fixed).map(([code, minor]) => [code, formatAmountIn(minor, code)]));
