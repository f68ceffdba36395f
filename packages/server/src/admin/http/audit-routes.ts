// GET /admin/audit-events: the operator reads the audit trail (docs/operations.md, Audit trail), newest
// first, by actor, tenant, object, action and time, a page at a time (`before` the last record's seq), or
// all of a filter as CSV (`format=csv`, at most CSV_LIMIT records: narrow the filter for more).
import { z } from 'zod';
import { type AuditRecord, auditCsv, listAudit } from '../../platform/audit/audit-trail.ts';
import type { Db } from '../../platform/db/database.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { sendCsv } from '../../platform/http/csv-reply.ts';
import { standardErrors, timestamp } from './schemas.ts';

const CSV_LIMIT = 100_000;

const recordView = z.object({
  seq: z.number().int(),
  at: timestamp,
  actorKind: z.string(),
  actor: z.string(),
  source: z.string().nullable(),
  action: z.string(),
  objectId: z.string().nullable(),
  tenant: z.object({ kind: z.string(), id: z.string() }).nullable(),
  detail: z.record(z.string(), z.unknown()),
  outcome: z.enum(['succeeded', 'refused', 'failed']),
  status: z.number().int().nullable(),
  requestId: z.string().nullable(),
  hash: z.string(),
});

const present = ({ prevHash: _prev, ...record }: AuditRecord) => ({ ...record, at: record.at.toISOString() });

export async function registerAuditRoutes(app: ZodApp, deps: { db: Db }): Promise<void> {
  app.get(
    '/audit-events',
    {
      schema: {
        summary:
          'The audit trail: every action a person took through the admin API and the console, newest first',
        tags: ['audit'],
        querystring: z.object({
          actor: z.string().max(254).optional().describe('an email, or "admin token"'),
          tenant: z
            .string()
            .regex(
              /^(partner|merchant|store):[\w-]{1,64}$/,
              'must be partner:<id>, merchant:<id> or store:<id>',
            )
            .optional(),
          objectId: z.string().max(100).optional(),
          action: z
            .string()
            .max(200)
            .optional()
            .describe('as recorded: "console sign-in", "POST /admin/partners"'),
          from: timestamp.optional(),
          to: timestamp.optional(),
          before: z.coerce
            .number()
            .int()
            .positive()
            .optional()
            .describe('the seq the next page starts before'),
          limit: z.coerce.number().int().min(1).max(500).default(100),
          format: z.enum(['json', 'csv']).default('json'),
        }),
        response: {
          200: z.union([
            z.object({ data: z.array(recordView), nextBefore: z.number().int().nullable() }),
            z.string().describe('text/csv'),
          ]),
          ...standardErrors,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const [kind = '', id = ''] = q.tenant?.split(':') ?? [];
      const from = q.from ? new Date(q.from) : undefined;
      const to = q.to ? new Date(q.to) : undefined;
      if (from && to && from >= to)
        throw new DomainError('validation_failed', 'from must be before to', { field: 'from' });
      const filters = {
        actor: q.actor,
        tenant: q.tenant ? { kind, id } : undefined,
        objectId: q.objectId,
        action: q.action,
        from,
        to,
        before: q.before,
      };
      if (q.format === 'csv') {
        const records = await listAudit(deps.db, { ...filters, limit: CSV_LIMIT });
        return sendCsv(reply, 'audit-events.csv', auditCsv(records));
      }
      const records = await listAudit(deps.db, { ...filters, limit: q.limit + 1 });
      const page = records.slice(0, q.limit);
      return {
        data: page.map(present),
        nextBefore: records.length > q.limit ? (page.at(-1)?.seq ?? null) : null,
      };
    },
  );
}
