// The operator's reports of money out (docs/payouts.md): a tenant's balance by day, an issuing account's
// statement, the platform's revenue, the reconciliation of the ledger with the bank and the rails, and the
// bank files read from the inbox.
import { z } from 'zod';
import { accountStatement } from '../../issuing/accounts/account-statement.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { sendCsv } from '../../platform/http/csv-reply.ts';
import { isUuid } from '../../platform/ids.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';
import { reconcile } from '../../platform/payouts/reconcile.ts';
import { balanceByDay, reportDay, reportMonth, revenueByDay } from '../../platform/payouts/reports.ts';
import { parseOwnerKey } from '../../platform/payouts/terms.ts';
import type { AdminDeps } from './admin-deps.ts';
import { standardErrors } from './schemas.ts';

export async function registerMoneyOutReportRoutes(app: ZodApp, deps: AdminDeps): Promise<void> {
  const dayField = reportDay;
  app.get(
    '/reports/balance',
    {
      schema: {
        summary:
          'A site’s or store’s balance by day (CSV, RFC 4180): gross, fees, net and the closing balance per currency',
        tags: ['payouts'],
        querystring: z.object({
          tenant: z.string().regex(/^(site:\d{1,10}|store:[\w-]{1,64})$/, 'must be site:<id> or store:<id>'),
          from: dayField,
          to: dayField,
        }),
        response: { 200: z.string().describe('text/csv'), ...standardErrors },
      },
    },
    async (request, reply) => {
      const { tenant, from, to } = request.query;
      return sendCsv(
        reply,
        `balance-${tenant.replace(':', '-')}-${from}-${to}.csv`,
        await balanceByDay(deps.db, parseOwnerKey(tenant), from, to),
      );
    },
  );

  app.get(
    '/issuing/accounts/:id/statement',
    {
      schema: {
        summary:
          'An issuing account’s statement for a month (CSV, RFC 4180): every posted movement with its running balance',
        tags: ['payouts'],
        params: z.object({ id: z.string().max(64) }),
        querystring: z.object({
          month: reportMonth,
        }),
        response: { 200: z.string().describe('text/csv'), ...standardErrors },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const account = isUuid(id)
        ? await deps.db
            .selectFrom('issuing_accounts')
            .select(['id', 'ledger_account_id', 'currency'])
            .where('id', '=', id)
            .executeTakeFirst()
        : undefined;
      if (!account) throw new DomainError('not_found', 'account not found');
      const csv = await accountStatement(
        deps.db,
        { accountId: account.id, ledgerAccountId: account.ledger_account_id, currency: account.currency },
        request.query.month,
      );
      return sendCsv(reply, `statement-${id}-${request.query.month}.csv`, csv);
    },
  );

  app.get(
    '/reports/revenue',
    {
      schema: {
        summary: 'Fee revenue per day, tenant and currency (CSV, RFC 4180)',
        tags: ['payouts'],
        querystring: z.object({ from: dayField, to: dayField }),
        response: { 200: z.string().describe('text/csv'), ...standardErrors },
      },
    },
    async (request, reply) => {
      const { from, to } = request.query;
      return sendCsv(reply, `revenue-${from}-${to}.csv`, await revenueByDay(deps.db, from, to));
    },
  );

  app.get(
    '/reconcile',
    {
      schema: {
        summary:
          'Reconcile a day: ledger balances, payouts, bank files and statements (what `tessera reconcile` prints)',
        tags: ['payouts'],
        querystring: z.object({
          date: dayField.optional(),
          full: z
            .enum(['true', 'false'])
            .optional()
            .describe(
              'true: prove every day again from the first, not from the newest day proved (slow on a year of data)',
            ),
        }),
        response: {
          200: z.object({
            date: z.string(),
            clean: z.boolean(),
            checked: z.record(z.string(), z.number()),
            findings: z.array(
              z.object({ check: z.string(), subject: z.string(), expected: z.string(), actual: z.string() }),
            ),
          }),
          ...standardErrors,
        },
      },
    },
    async (request) =>
      reconcile(deps.db, request.query.date ?? deps.clock.now().toISOString().slice(0, 10), {
        now: deps.clock.now(),
        full: request.query.full === 'true',
      }),
  );

  app.get(
    '/bank-files',
    {
      schema: {
        summary:
          'The newest bank files: written to the outbox, and read from the inbox (with lines that matched no payout)',
        tags: ['payouts'],
        response: {
          200: z.object({
            written: z.array(
              z.object({
                id: z.string(),
                fileName: z.string(),
                currency: z.string(),
                payouts: z.number().int(),
                total: z.string(),
                status: z.string(),
                createdAt: z.string(),
              }),
            ),
            read: z.array(
              z.object({
                fileName: z.string(),
                kind: z.string(),
                status: z.string(),
                detail: z.string(),
                unmatched: z.array(z.unknown()),
                receivedAt: z.string(),
              }),
            ),
          }),
          ...standardErrors,
        },
      },
    },
    async () => {
      const written = await deps.db
        .selectFrom('bank_files')
        .selectAll()
        .orderBy('id', 'desc')
        .limit(50)
        .execute();
      const read = await deps.db
        .selectFrom('bank_inbox_files')
        .selectAll()
        .orderBy('received_at', 'desc')
        .limit(50)
        .execute();
      return {
        written: written.map((f) => ({
          id: f.id,
          fileName: f.file_name,
          currency: f.currency,
          payouts: f.payout_count,
          total: formatAmountIn(BigInt(f.total), f.currency),
          status: f.status,
          createdAt: f.created_at.toISOString(),
        })),
        read: read.map((f) => ({
          fileName: f.file_name,
          kind: f.kind,
          status: f.status,
          detail: f.detail,
          unmatched: f.unmatched,
          receivedAt: f.received_at.toISOString(),
        })),
      };
    },
  );
}
