// Console › Audit trail (docs/operations.md, Audit trail): what people did, newest first — for a tenant's
// admin, the records of their own tenant (their people's sign-ins and actions, the approvals about
// them); for operators, every record. Filtered by person, action and object; the whole filter as CSV.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type AuditFilters, auditCsv, listAudit } from '../../../platform/audit/audit-trail.ts';
import { sendConsolePage } from '../../../platform/console/console-http.ts';
import { filterForm, link, listView } from '../../../platform/console/console-layout.ts';
import type { Viewer } from '../../../platform/console/console-users.ts';
import { h } from '../../../platform/console/html-template.ts';
import { PAGE_SIZE } from '../../../platform/console/paging.ts';
import { nextHref, textQuery, viewerOf } from '../../../platform/console/route-kit.ts';
import { status, when } from '../../../platform/console/values.ts';
import { DomainError } from '../../../platform/errors/domain-error.ts';
import { sendCsv } from '../../../platform/http/csv-reply.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';

const CSV_LIMIT = 100_000;

/** The filters a viewer may use: a member's are always within their own tenant. */
function filtersOf(request: FastifyRequest, viewer: Viewer): Omit<AuditFilters, 'limit'> {
  const f = textQuery(request);
  const text = (name: string, max: number) => {
    const value = f[name]?.trim();
    if (!value) return undefined;
    if (value.length > max)
      throw new DomainError('validation_failed', `${name} is too long`, { field: name });
    return value;
  };
  const before = f.cursor && /^\d{1,18}$/.test(f.cursor) ? Number(f.cursor) : undefined;
  let tenant: AuditFilters['tenant'];
  if (viewer.role === 'member') tenant = viewer.tenant;
  else if (f.tenant?.trim()) {
    const match = /^(partner|merchant|store):([\w-]{1,64})$/.exec(f.tenant.trim());
    if (!match) {
      throw new DomainError('validation_failed', 'tenant must be partner:<id>, merchant:<id> or store:<id>', {
        field: 'tenant',
      });
    }
    tenant = { kind: match[1] as string, id: match[2] as string };
  }
  return {
    tenant,
    actor: text('actor', 254),
    action: text('action', 200),
    objectId: text('objectId', 100),
    before,
  };
}

export async function registerAuditConsoleRoutes(
  app: FastifyInstance,
  deps: PlatformConsoleDeps,
): Promise<void> {
  const { db } = deps.services;

  app.get('/audit', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const filters = filtersOf(request, viewer);
    const records = await listAudit(db, { ...filters, limit: PAGE_SIZE + 1 });
    const page = records.slice(0, PAGE_SIZE);
    const f = textQuery(request);
    const next = records.length > PAGE_SIZE ? String(page.at(-1)?.seq) : null;
    const fields = [
      { name: 'actor', label: 'Person (email)' },
      { name: 'action', label: 'Action' },
      { name: 'objectId', label: 'Object id' },
      ...(viewer.role === 'operator' ? [{ name: 'tenant', label: 'Tenant (merchant:ID…)' }] : []),
    ];
    const csv = new URLSearchParams(
      Object.entries(f).filter((e): e is [string, string] => !!e[1] && e[0] !== 'cursor'),
    ).toString();
    const content = h`${filterForm('/console/audit', fields, f)}<p>${link(
      `/console/audit.csv${csv ? `?${csv}` : ''}`,
      'Download these records (CSV)',
    )}</p>${listView({
      caption: 'What people did, newest first',
      rows: page,
      empty: 'Nothing recorded yet.',
      columns: [
        { label: '#', cell: (r) => r.seq },
        { label: 'When', cell: (r) => when(r.at) },
        { label: 'Who', cell: (r) => r.actor },
        { label: 'From', cell: (r) => r.source ?? '—' },
        { label: 'Action', cell: (r) => r.action },
        { label: 'Object', cell: (r) => r.objectId ?? '—' },
        { label: 'Outcome', cell: (r) => status(r.outcome, 'audit.outcome') },
      ],
      nextHref: nextHref('/console/audit', f, next),
    })}`;
    return sendConsolePage(request, reply, deps, 'Audit trail', content);
  });

  app.get('/audit.csv', async (request, reply) => {
    const records = await listAudit(db, { ...filtersOf(request, viewerOf(request, deps)), limit: CSV_LIMIT });
    return sendCsv(reply, 'audit-events.csv', auditCsv(records));
  });
}
