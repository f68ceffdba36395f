// Console › Risk › Lists (docs/risk.md, Lists): block and allow lists of a viewer's scope, their items
// paged by value, items added by pasting a CSV file (its first column; a `value` header is left out) or one
// per line, and removed one by one. A rule reads a list by name (`ip in list('blocked_ips')`); each change is
// audited and reaches every process before the answer.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { sendConsolePage } from '../../../platform/console/console-http.ts';
import { details, doneNotice, link, listView } from '../../../platform/console/console-layout.ts';
import { h } from '../../../platform/console/html-template.ts';
import {
  confirmedAction,
  fieldOf,
  textBody,
  textQuery,
  viewerOf,
} from '../../../platform/console/route-kit.ts';
import { when } from '../../../platform/console/values.ts';
import { DomainError } from '../../../platform/errors/domain-error.ts';
import { listItemsOf } from '../../../platform/risk/list-csv.ts';
import { LIST_KINDS, LIST_NAME, MAX_ITEMS_PER_REQUEST } from '../../../platform/risk/risk-lists.ts';
import { tenantChangeSettled } from '../../../platform/tenants/tenant-changes.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';
import { pageAfter, riskScopesOf, riskTabs, writeScope } from './risk-console-kit.ts';

const PAGE = 50;
const listName = z.string().trim().regex(LIST_NAME, 'lower-case letters, digits and _');

export async function registerRiskListsConsoleRoutes(
  app: FastifyInstance,
  deps: PlatformConsoleDeps,
): Promise<void> {
  const { db, risk } = deps.services;

  app.get('/risk/lists', async (request, reply) => {
    const f = textQuery(request);
    const lists = await risk.lists.list(db, riskScopesOf(viewerOf(request, deps)), {
      ...(f.after ? { after: f.after } : {}),
      limit: PAGE,
    });
    const table = listView({
      caption: 'Lists, by id',
      rows: lists,
      empty: 'No lists yet.',
      nextHref: pageAfter('/console/risk/lists', f, lists, PAGE),
      columns: [
        { label: 'List', cell: (l) => link(`/console/risk/lists/${l.id}`, l.name) },
        { label: 'Kind', cell: (l) => l.kind },
        { label: 'Scope', cell: (l) => l.scope },
        { label: 'Created', cell: (l) => when(l.createdAt) },
      ],
    });
    return sendConsolePage(
      request,
      reply,
      deps,
      'Risk lists',
      h`${riskTabs('lists')}${doneNotice(f.done)}<p>${link('/console/risk/lists/new', 'New list…')}</p>${table}`,
    );
  });

  const create = confirmedAction<Record<string, never>>(
    deps,
    async (request) => {
      const viewer = viewerOf(request, deps);
      const q = textBody(request);
      return {
        title: 'New risk list',
        explain: h`${riskTabs('lists')}<p>A rule of the same scope reads it by its name: <code>ip in list('blocked_ips')</code>. Items are normalised to their kind (an email in lower case, an IP range to its prefix).</p>`,
        fields: [
          {
            name: 'name',
            label: 'Name',
            value: q.name ?? '',
            required: true,
            hint: 'lower-case letters, digits and _',
          },
          { name: 'kind', label: 'Kind', options: LIST_KINDS, value: q.kind ?? 'ip' },
          ...(viewer.role === 'operator'
            ? [
                {
                  name: 'scope',
                  label: 'Scope',
                  value: q.scope ?? 'platform',
                  hint: 'platform, merchant:ID, store:ID or partner:ID',
                },
              ]
            : []),
        ],
        submit: 'Create list',
      };
    },
    async (request, _params, body) => {
      const name = fieldOf(listName, body, 'name');
      const kind = fieldOf(z.enum(LIST_KINDS), body, 'kind');
      const scope = await writeScope(db, viewerOf(request, deps), body.scope);
      const list = await risk.lists.create(db, { scope, name, kind });
      return `/console/risk/lists/${list.id}?done=saved`;
    },
  );
  app.get('/risk/lists/new', create.get);
  app.post('/risk/lists/new', create.post);

  app.get<{ Params: { id: string } }>('/risk/lists/:id', async (request, reply) => {
    const f = textQuery(request);
    const list = await risk.lists.get(db, request.params.id, riskScopesOf(viewerOf(request, deps)));
    const items = await risk.lists.items(db, list, {
      ...(f.after !== undefined ? { after: f.after } : {}),
      limit: PAGE,
    });
    const rows = items.map((item) => ({ ...item, id: item.value }));
    const table = listView({
      caption: 'Items, by value',
      rows,
      empty: 'No items yet.',
      nextHref: pageAfter(`/console/risk/lists/${list.id}`, f, rows, PAGE),
      columns: [
        { label: 'Value', cell: (i) => h`<code>${i.value}</code>` },
        { label: 'Added', cell: (i) => when(i.created_at) },
        {
          label: 'Remove',
          cell: (i) =>
            link(`/console/risk/lists/${list.id}/remove?value=${encodeURIComponent(i.value)}`, 'Remove…'),
        },
      ],
    });
    const content = h`${riskTabs('lists')}${doneNotice(f.done)}${details([
      ['Kind', list.kind],
      ['Scope', list.scope],
      ['In a rule', h`<code>list('${list.name}')</code>`],
      ['Created', when(list.createdAt)],
    ])}<p class="inline">${link(`/console/risk/lists/${list.id}/items`, 'Add or import items…')} ${link(`/console/risk/lists/${list.id}/delete`, 'Delete list…')}</p>${table}`;
    return sendConsolePage(request, reply, deps, `List ${list.name}`, content);
  });

  const add = confirmedAction<{ id: string }>(
    deps,
    async (request, { id }) => {
      const list = await risk.lists.get(db, id, riskScopesOf(viewerOf(request, deps)));
      return {
        title: `Add to ${list.name}`,
        explain: h`<p>Paste a CSV file (its first column is read; a first line <code>value</code> is a header) or one ${list.kind} per line, at most ${MAX_ITEMS_PER_REQUEST.toLocaleString('en')} at a time. One that is not a ${list.kind} refuses them all, naming its line.</p>`,
        fields: [
          {
            name: 'items',
            label: 'Items',
            type: 'textarea',
            value: textBody(request).items ?? '',
            required: true,
          },
        ],
        submit: 'Add items',
      };
    },
    async (request, { id }, body) => {
      const list = await risk.lists.get(db, id, riskScopesOf(viewerOf(request, deps)));
      const items = listItemsOf(body.items ?? '');
      if (items.length === 0)
        throw new DomainError('validation_failed', 'items: nothing to add', { field: 'items' });
      if (items.length > MAX_ITEMS_PER_REQUEST) {
        throw new DomainError('validation_failed', `items: at most ${MAX_ITEMS_PER_REQUEST} at a time`, {
          field: 'items',
        });
      }
      // The service names an item by its index; on a form a person finds it by its line.
      await risk.lists.addItems(db, list, items).catch((err: unknown) => {
        const index = err instanceof DomainError ? /^items\[(\d+)\]/.exec(err.field ?? '')?.[1] : undefined;
        if (index === undefined) throw err;
        throw new DomainError(
          'validation_failed',
          `item ${Number(index) + 1} (${items[Number(index)]}) ${err instanceof DomainError ? err.message.replace(/^items\[\d+\] /, '') : ''}`,
          { field: 'items' },
        );
      });
      await tenantChangeSettled(db, request.log);
      return `/console/risk/lists/${list.id}?done=added`;
    },
  );
  app.get('/risk/lists/:id/items', add.get);
  app.post('/risk/lists/:id/items', add.post);

  const removeItem = confirmedAction<{ id: string }>(
    deps,
    async (request, { id }) => {
      const list = await risk.lists.get(db, id, riskScopesOf(viewerOf(request, deps)));
      const value = { ...textQuery(request), ...textBody(request) }.value ?? '';
      return {
        title: `Remove from ${list.name}`,
        explain: h`<p>Rules reading <code>list('${list.name}')</code> no longer find <code>${value}</code>.</p>`,
        fields: [{ name: 'value', label: 'Value', type: 'hidden', value }],
        submit: 'Remove item',
        danger: true,
      };
    },
    async (request, { id }, body) => {
      const list = await risk.lists.get(db, id, riskScopesOf(viewerOf(request, deps)));
      await risk.lists.removeItem(db, list, body.value ?? '');
      await tenantChangeSettled(db, request.log);
      return `/console/risk/lists/${list.id}?done=deleted`;
    },
  );
  app.get('/risk/lists/:id/remove', removeItem.get);
  app.post('/risk/lists/:id/remove', removeItem.post);

  const remove = confirmedAction<{ id: string }>(
    deps,
    async (request, { id }) => {
      const list = await risk.lists.get(db, id, riskScopesOf(viewerOf(request, deps)));
      return {
        title: `Delete list ${list.name}`,
        explain: h`<p>The list and its items go; a rule that names it then reads it as empty.</p>`,
        fields: [],
        submit: 'Delete list',
        danger: true,
      };
    },
    async (request, { id }) => {
      await risk.lists.remove(db, id, riskScopesOf(viewerOf(request, deps)));
      await tenantChangeSettled(db, request.log);
      return '/console/risk/lists?done=deleted';
    },
  );
  app.get('/risk/lists/:id/delete', remove.get);
  app.post('/risk/lists/:id/delete', remove.post);
}
