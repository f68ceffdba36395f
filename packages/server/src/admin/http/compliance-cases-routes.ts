// /admin/compliance/alerts and /cases (docs/compliance.md, Alerts and cases): what screening raised, the
// cases the alerts gather in, and a compliance officer's work on each — notes, an assignee, the decision.
// Clearing a case releases what it holds in the decision's transaction; confirming keeps it held. Each
// write is audited; deciding a decided case (other than clearing a confirmed one) is a 409.
import { z } from 'zod';
import type { Clock } from '../../platform/clock/clock.ts';
import { type CaseDetail, TIMELINE_KINDS, timelineOf } from '../../platform/compliance/case-timeline.ts';
import type { Compliance } from '../../platform/compliance/compliance.ts';
import type { Alert, CaseSummary } from '../../platform/compliance/compliance-cases.ts';
import {
  caseAsGoaml,
  goamlIndicators,
  goamlReportCode,
  goamlRequestOf,
} from '../../platform/compliance/goaml-report.ts';
import type { Db } from '../../platform/db/database.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { sendCsv } from '../../platform/http/csv-reply.ts';
import { int8Cursor } from '../../platform/http/fields.ts';
import { toCsv } from '../../platform/payouts/reports.ts';
import { pageQuery } from './risk-scope.ts';
import { idParam, standardErrors, timestamp } from './schemas.ts';

const caseStatus = z.enum(['open', 'cleared', 'confirmed']);
const tenantQuery = z.string().max(120).optional().describe('partner:<id>, merchant:<id> or store:<id>');

const caseView = z.object({
  id: z.string(),
  subject: z
    .string()
    .describe('whose money the case holds: customer:<id> (a cardholder), site:<id> or store:<id> (payouts)'),
  tenant: z.string(),
  status: caseStatus,
  assignee: z.string().nullable(),
  openedAt: timestamp,
  decidedAt: timestamp.nullable(),
  decidedBy: z.string().nullable(),
  decisionReason: z.string().nullable(),
  alerts: z.number().int(),
  proposal: z
    .object({
      decision: z.enum(['cleared', 'confirmed']),
      reason: z.string(),
      by: z.string(),
      at: timestamp,
    })
    .nullable()
    .describe('a decision waiting for a second person (TESSERA_COMPLIANCE_FOUR_EYES, docs/compliance.md)'),
});
const presentCase = (c: CaseSummary) => ({
  ...c,
  openedAt: c.openedAt.toISOString(),
  decidedAt: c.decidedAt?.toISOString() ?? null,
  proposal: c.proposal ? { ...c.proposal, at: c.proposal.at.toISOString() } : null,
});

const alertView = z.object({
  id: z.string(),
  caseId: z.string(),
  kind: z.string().describe('sanctions_match, or scenario:<name> (a monitoring scenario met)'),
  partyId: z.string().nullable().describe('the party screened (a sanctions match)'),
  entryId: z.string().nullable().describe('the version of the list entry matched (a sanctions match)'),
  score: z.number(),
  evidence: z
    .record(z.string(), z.unknown())
    .describe(
      'a match: the party as screened and the list entry, side by side; a scenario: its parameters and what met it (docs/compliance.md)',
    ),
  createdAt: timestamp,
});
const presentAlert = (a: Alert) => ({ ...a, createdAt: a.createdAt.toISOString() });

const noteView = z.object({ id: z.string(), author: z.string(), body: z.string(), createdAt: timestamp });
const presentNote = (n: { id: string; author: string; body: string; created_at: Date }) => ({
  id: n.id,
  author: n.author,
  body: n.body,
  createdAt: n.created_at.toISOString(),
});

const holdView = z.object({
  objectKind: z.string().describe('subject (no card issued, no payout leaves), card or payout'),
  objectId: z.string(),
  previousStatus: z.string().nullable().describe('what the object is given back as, when cleared'),
  placedAt: timestamp,
  releasedAt: timestamp.nullable(),
});

const caseQuery = {
  before: int8Cursor('a case id').optional(),
  limit: pageQuery.limit,
};

export async function registerComplianceCaseRoutes(
  app: ZodApp,
  deps: { db: Db; clock: Clock; compliance: Compliance },
): Promise<void> {
  const { db } = deps;
  const { cases } = deps.compliance;

  app.get(
    '/compliance/alerts',
    {
      schema: {
        summary: 'What screening and monitoring raised, newest first',
        tags: ['compliance'],
        querystring: z.object({
          caseId: int8Cursor('a case id').optional().describe('only this case’s, in the order raised'),
          tenant: tenantQuery,
          ...caseQuery,
        }),
        response: {
          200: z.object({ data: z.array(alertView), nextBefore: z.string().nullable() }),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const { caseId, tenant, before, limit } = request.query;
      const alerts = await cases.alerts(db, {
        ...(caseId ? { caseId } : {}),
        ...(tenant ? { tenant } : {}),
        ...(before ? { before } : {}),
        limit,
      });
      return {
        data: alerts.map(presentAlert),
        nextBefore: alerts.length === limit && !caseId ? (alerts.at(-1)?.id ?? null) : null,
      };
    },
  );

  app.get(
    '/compliance/cases',
    {
      schema: {
        summary: 'The cases, newest first',
        tags: ['compliance'],
        querystring: z.object({ status: caseStatus.optional(), tenant: tenantQuery, ...caseQuery }),
        response: {
          200: z.object({ data: z.array(caseView), nextBefore: z.string().nullable() }),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const { status, tenant, before, limit } = request.query;
      const found = await cases.list(db, {
        ...(status ? { status } : {}),
        ...(tenant ? { tenant } : {}),
        ...(before ? { before } : {}),
        limit,
      });
      return {
        data: found.map(presentCase),
        nextBefore: found.length === limit ? (found.at(-1)?.id ?? null) : null,
      };
    },
  );

  const caseDetail = z.object({
    case: caseView,
    alerts: z.array(alertView),
    notes: z.array(noteView),
    holds: z.array(holdView),
  });
  const presentDetail = (found: CaseDetail) => {
    return {
      case: presentCase(found.case),
      alerts: found.alerts.map(presentAlert),
      notes: found.notes.map(presentNote),
      holds: found.holds.map((h) => ({
        objectKind: h.object_kind,
        objectId: h.object_id,
        previousStatus: h.previous_status,
        placedAt: h.placed_at.toISOString(),
        releasedAt: h.released_at?.toISOString() ?? null,
      })),
    };
  };

  app.get(
    '/compliance/cases/:id',
    {
      schema: {
        summary: 'A case: its alerts with their evidence, its notes, and what it holds',
        tags: ['compliance'],
        params: idParam,
        response: { 200: caseDetail, ...standardErrors },
      },
    },
    async (request) => presentDetail(await cases.get(db, request.params.id)),
  );

  const timelineView = z.object({
    at: timestamp,
    kind: z.enum(TIMELINE_KINDS),
    object: z.string().nullable().describe('the list entry (source:id), the object held, the note’s author'),
    detail: z.string(),
  });
  const exportView = caseDetail.extend({
    exportedAt: timestamp,
    timeline: z.array(timelineView).describe('everything that happened to the case, in time order'),
  });

  app.get(
    '/compliance/cases/:id/export',
    {
      schema: {
        summary:
          'A case for a suspicious-activity report: its detail and its timeline as JSON, its timeline as CSV (at, kind, object, detail), or a goAML report (XML)',
        description:
          'format=goaml writes the case as a goAML activity report for the FIU: reportCode (default SAR) and indicators (the FIU’s own indicator codes, comma-separated, at least one) are the compliance officer’s choice; the reporting entity is TESSERA_GOAML_RENTITY_ID (a 409 until it is set).',
        tags: ['compliance'],
        params: idParam,
        querystring: z.object({
          format: z.enum(['json', 'csv', 'goaml']).default('json'),
          reportCode: goamlReportCode,
          indicators: goamlIndicators,
        }),
        response: {
          200: z.union([exportView, z.string().describe('text/csv'), z.string().describe('application/xml')]),
          ...standardErrors,
        },
      },
    },
    async (request, reply) => {
      const { format, reportCode, indicators } = request.query;
      const found = await cases.get(db, request.params.id);
      if (format === 'goaml') {
        const report = await caseAsGoaml(db, deps.compliance.goaml, found, {
          ...goamlRequestOf(reportCode, indicators),
          at: deps.clock.now(),
        });
        return reply
          .type('application/xml; charset=utf-8')
          .header('content-disposition', `attachment; filename="goaml-case-${found.case.id}.xml"`)
          .send(report);
      }
      const detail = presentDetail(found);
      const timeline = timelineOf(found).map((t) => ({ ...t, at: t.at.toISOString() }));
      if (format === 'csv') {
        return sendCsv(
          reply,
          `compliance-case-${detail.case.id}.csv`,
          toCsv(
            ['at', 'kind', 'object', 'detail'],
            timeline.map((t) => [t.at, t.kind, t.object ?? '', t.detail]),
          ),
        );
      }
      return { ...detail, exportedAt: deps.clock.now().toISOString(), timeline };
    },
  );

  app.post(
    '/compliance/cases/:id/notes',
    {
      schema: {
        summary: 'Add a note to a case (decided ones too: what was learned later)',
        tags: ['compliance'],
        params: idParam,
        body: z.strictObject({ body: z.string().trim().min(1).max(10_000) }),
        response: { 201: noteView, ...standardErrors },
      },
    },
    async (request, reply) => {
      const note = await db
        .transaction()
        .execute((tx) => cases.addNote(tx, request.params.id, 'admin token', request.body.body));
      return reply.code(201).send(presentNote(note));
    },
  );

  app.post(
    '/compliance/cases/:id/assign',
    {
      schema: {
        summary: 'Give an open case to someone (null: to no one)',
        tags: ['compliance'],
        params: idParam,
        body: z.strictObject({ assignee: z.string().trim().min(1).max(200).nullable() }),
        response: { 200: caseDetail, ...standardErrors },
      },
    },
    async (request) => {
      await db.transaction().execute((tx) => cases.assign(tx, request.params.id, request.body.assignee));
      return presentDetail(await cases.get(db, request.params.id));
    },
  );

  app.post(
    '/compliance/cases/:id/decision',
    {
      schema: {
        summary:
          'Decide a case: cleared (a false positive: what it holds is released) or confirmed (held until a later decision clears it). Under four eyes (TESSERA_COMPLIANCE_FOUR_EYES) the first person’s decision is proposed (202) and made when a second person makes the same one (200)',
        tags: ['compliance'],
        params: idParam,
        body: z.strictObject({
          decision: z.enum(['cleared', 'confirmed']),
          reason: z.string().trim().min(1).max(2000),
        }),
        response: { 200: caseDetail, 202: caseDetail, ...standardErrors },
      },
    },
    async (request, reply) => {
      const { proposed } = await db
        .transaction()
        .execute((tx) => cases.decide(tx, request.params.id, { ...request.body, by: 'admin token' }));
      // Under four eyes the first person's decision is accepted, not done: it waits for a second
      return reply.code(proposed ? 202 : 200).send(presentDetail(await cases.get(db, request.params.id)));
    },
  );
}
