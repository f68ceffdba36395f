// /admin/risk/reviews (docs/risk.md, Reviews): what rules sent to review or held, per tenant, and the
// operator's decision on each. Approved, a payments charge is captured, a payout released to the bank, a
// bank account change applied; refused, the charge is voided (the payer told as the wire tells any void),
// the payout failed with its money back, the change dropped. Each decision is audited; a review already
// decided or expired is a 409.
import { z } from 'zod';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import type { Review } from '../../platform/risk/reviews.ts';
import type { Risk } from '../../platform/risk/risk.ts';
import type { AdminDeps } from './admin-deps.ts';
import { pageQuery } from './risk-scope.ts';
import { idParam, standardErrors, timestamp } from './schemas.ts';

const statuses = z.enum(['pending', 'approved', 'refused', 'expired']);
const reviewView = z.object({
  id: z.string(),
  tenant: z.string(),
  decisionPoint: z.string(),
  objectId: z
    .string()
    .describe('what is held: a payments transaction (payments.charge), a payout, a bank account change'),
  ruleId: z.string(),
  ruleName: z.string(),
  status: statuses,
  createdAt: timestamp,
  expiresAt: timestamp.describe('undecided by then, the refusal applies'),
  decidedAt: timestamp.nullable(),
  decidedBy: z.string().nullable(),
});

const present = (r: Review) => ({
  ...r,
  createdAt: r.createdAt.toISOString(),
  expiresAt: r.expiresAt.toISOString(),
  decidedAt: r.decidedAt?.toISOString() ?? null,
});

export async function registerRiskReviewRoutes(app: ZodApp, deps: AdminDeps & { risk: Risk }): Promise<void> {
  const { db, risk } = deps;

  app.get(
    '/risk/reviews',
    {
      schema: {
        summary: 'What rules held for review (pending unless asked for another status), by id',
        tags: ['risk'],
        querystring: z.object({
          tenant: z.string().max(120).optional().describe('merchant:<id>, store:<id> or partner:<id>'),
          status: statuses.default('pending').describe('the queue by default: pending'),
          ...pageQuery,
        }),
        response: {
          200: z.object({ data: z.array(reviewView), nextAfter: z.string().nullable() }),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const q = request.query;
      const reviews = await risk.reviews.list(
        db,
        { ...(q.tenant ? { tenants: [q.tenant] } : {}), status: q.status },
        { ...(q.after ? { after: q.after } : {}), limit: q.limit },
      );
      return {
        data: reviews.map(present),
        nextAfter: reviews.length === q.limit ? (reviews.at(-1)?.id ?? null) : null,
      };
    },
  );

  for (const [verb, approved] of [
    ['approve', true],
    ['refuse', false],
  ] as const) {
    app.post(
      `/risk/reviews/:id/${verb}`,
      {
        schema: {
          summary: approved
            ? 'Approve what a rule held: a charge is captured, a payout released, a bank account change applied'
            : 'Refuse what a rule held: a charge is voided (the payer told), a payout failed, a change dropped',
          tags: ['risk'],
          params: idParam,
          response: { 200: reviewView, ...standardErrors },
        },
      },
      async (request) => present(await risk.reviews.decide(request.params.id, approved, 'admin token')),
    );
  }
}
