// /admin/risk/lists (docs/risk.md): block and allow lists for the platform and for any tenant, read by
// rules as list("name"); items normalised by kind, one not of the list's kind refusing the request by its
// index. Each write is audited, and answers once every process has heard of it.
import { z } from 'zod';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import type { Risk } from '../../platform/risk/risk.ts';
import {
  LIST_KINDS,
  LIST_NAME,
  type ListInfo,
  MAX_ITEMS_PER_REQUEST,
} from '../../platform/risk/risk-lists.ts';
import { checkedScope, scopeRefOf } from '../../platform/risk/risk-scope.ts';
import { tenantChangeSettled } from '../../platform/tenants/tenant-changes.ts';
import type { AdminDeps } from './admin-deps.ts';
import { pageQuery, scopeField, scopeView } from './risk-scope.ts';
import { idParam, standardErrors, timestamp } from './schemas.ts';

const listView = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.string(),
  scope: scopeView,
  createdAt: timestamp,
});
const presentList = (l: ListInfo) => ({
  id: l.id,
  name: l.name,
  kind: l.kind,
  scope: scopeRefOf(l.scope),
  createdAt: l.createdAt.toISOString(),
});

export async function registerRiskListRoutes(app: ZodApp, deps: AdminDeps & { risk: Risk }): Promise<void> {
  const { db, risk } = deps;

  app.post(
    '/risk/lists',
    {
      schema: {
        summary: 'Make a block or allow list that rules read as list("name")',
        tags: ['risk'],
        body: z
          .strictObject({
            name: z.string().regex(LIST_NAME, 'lower case letters, digits and _'),
            kind: z.enum(LIST_KINDS),
            scope: scopeField,
          })
          .meta({ example: { name: 'blocked_ips', kind: 'ip', scope: { kind: 'platform' } } }),
        response: { 201: listView, ...standardErrors },
      },
    },
    async (request, reply) => {
      const { scope, ...input } = request.body;
      const list = await risk.lists.create(db, { ...input, scope: await checkedScope(db, scope) });
      return reply.code(201).send(presentList(list));
    },
  );

  app.get(
    '/risk/lists',
    {
      schema: {
        summary: 'List block and allow lists, by id',
        tags: ['risk'],
        querystring: z.object({ scope: z.string().max(120).optional(), ...pageQuery }),
        response: {
          200: z.object({ data: z.array(listView), nextAfter: z.string().nullable() }),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const q = request.query;
      const lists = await risk.lists.list(db, q.scope ? [q.scope] : undefined, {
        ...(q.after ? { after: q.after } : {}),
        limit: q.limit,
      });
      return {
        data: lists.map(presentList),
        nextAfter: lists.length === q.limit ? (lists.at(-1)?.id ?? null) : null,
      };
    },
  );

  app.get(
    '/risk/lists/:id',
    {
      schema: {
        summary: 'Retrieve a list',
        tags: ['risk'],
        params: idParam,
        response: { 200: listView, ...standardErrors },
      },
    },
    async (request) => presentList(await risk.lists.get(db, request.params.id)),
  );

  app.delete(
    '/risk/lists/:id',
    {
      schema: {
        summary: 'Delete a list and its items (a rule naming it then reads it as empty)',
        tags: ['risk'],
        params: idParam,
        response: { 204: z.null(), ...standardErrors },
      },
    },
    async (request, reply) => {
      await risk.lists.remove(db, request.params.id);
      await tenantChangeSettled(db, request.log);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/risk/lists/:id/items',
    {
      schema: {
        summary: `Add items to a list (at most ${MAX_ITEMS_PER_REQUEST} a request; one not of the list’s kind refuses all)`,
        tags: ['risk'],
        params: idParam,
        body: z
          .strictObject({ items: z.array(z.string().max(200)).min(1).max(MAX_ITEMS_PER_REQUEST) })
          .meta({ example: { items: ['203.0.113.7', '198.51.100.0/24'] } }),
        response: { 200: z.object({ added: z.number().int() }), ...standardErrors },
      },
    },
    async (request) => {
      const list = await risk.lists.get(db, request.params.id);
      const added = await risk.lists.addItems(db, list, request.body.items);
      await tenantChangeSettled(db, request.log);
      return { added };
    },
  );

  app.get(
    '/risk/lists/:id/items',
    {
      schema: {
        summary: 'A list’s items, in order',
        tags: ['risk'],
        params: idParam,
        querystring: z.object(pageQuery),
        response: {
          200: z.object({
            data: z.array(z.object({ value: z.string(), createdAt: timestamp })),
            nextAfter: z.string().nullable(),
          }),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const q = request.query;
      const list = await risk.lists.get(db, request.params.id);
      const items = await risk.lists.items(db, list, {
        ...(q.after !== undefined ? { after: q.after } : {}),
        limit: q.limit,
      });
      return {
        data: items.map((i) => ({ value: i.value, createdAt: i.created_at.toISOString() })),
        nextAfter: items.length === q.limit ? (items.at(-1)?.value ?? null) : null,
      };
    },
  );

  app.delete(
    '/risk/lists/:id/items',
    {
      schema: {
        summary: 'Remove one item from a list',
        tags: ['risk'],
        params: idParam,
        querystring: z.object({ value: z.string().min(1).max(200).meta({ example: '203.0.113.7' }) }),
        response: { 204: z.null(), ...standardErrors },
      },
    },
    async (request, reply) => {
      const list = await risk.lists.get(db, request.params.id);
      await risk.lists.removeItem(db, list, request.query.value);
      await tenantChangeSettled(db, request.log);
      return reply.code(204).send(null);
    },
  );
}
