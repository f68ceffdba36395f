// /admin/risk/reviews (docs/risk.md, Reviews): the payments that rules sent to review, per tenant, and the
// operator's decision on each: approve (the charge is captured) or refuse (it is voided, the payer told as
// the wire tells any void). Each decision is audited; a review already decided or expired is a 409.
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
  objectId: z.string().describe('the payments transaction held'),
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
        summary: 'The payments held for review (pending unless asked for another status), by id',
        tags: ['risk'],
        querystring: z.object({
          tenant: z.string().max(120).optional().describe('merchant:<id>'),
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
            ? 'Approve a held payment: it is captured'
            : 'Refuse a held payment: it is voided and the payer told',
          tags: ['risk'],
          params: idParam,
          response: { 200: reviewView, ...standardErrors },
        },
      },
      async (request) => present(await risk.reviews.decide(request.params.id, approved, 'admin token')),
    );
  }
}
