// What every console route module is given and the few helpers they share: the query's text parameters,
// the next page's address, and a confirmation page whose form re-renders with the error when an action is
// refused (the same services' validation, named field and all).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { NewApproval, PolicyAction } from '../approvals/approvals.ts';
import type { Db } from '../db/database.ts';
import { DomainError } from '../errors/domain-error.ts';
import type { EventScope, EventsService } from '../events/events-service.ts';
import { asDomainError } from '../http/as-domain-error.ts';
import { sendCsv } from '../http/csv-reply.ts';
import { type ConsoleFrame, contextOf, sendConsolePage } from './console-http.ts';
import {
  type FilterField,
  type FormField,
  filterForm,
  link,
  plainConsolePage,
  postForm,
} from './console-layout.ts';
import type { Viewer } from './console-users.ts';
import { eventLabel } from './event-labels.ts';
import { type Html, h } from './html-template.ts';
import { EXPORT_ROWS, listCsv, tableText } from './list-export.ts';
import { SORTS, type Sort } from './list-narrowing.ts';
import type { Page } from './paging.ts';
import { status, when } from './values.ts';

/** What the kit's helpers read; each room's pages ask for the services they use besides. */
export interface ConsoleKitServices {
  db: Db;
  events: EventsService;
}

export interface ConsoleRouteDeps<Services extends ConsoleKitServices = ConsoleKitServices>
  extends ConsoleFrame {
  services: Services;
}

/** What the console hands each API's module for its pages: the frame, and four eyes on money. */
export interface ConsoleContext {
  frame: ConsoleFrame;
  eyes: FourEyes;
}

/**
 * Four eyes on money (the console's Approvals): an action runs now, or waits as a request for a second
 * person when the tenant's policy asks for one. The console passes it to the pages that move money.
 */
export interface FourEyes {
  runOrAsk(
    request: FastifyRequest,
    asked: Omit<NewApproval, 'requester' | 'requestId'> & { action: PolicyAction },
  ): Promise<{ asked: boolean; href: string }>;
}

/** The query's single text values (a repeated or nested parameter is ignored). */
export function textQuery(request: FastifyRequest): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries((request.query ?? {}) as Record<string, unknown>)) {
    if (typeof v === 'string') out[k] = v;
  }
  return out;
}

/** A form field read through the API's own schema: a bad value is refused naming the field. */
export function fieldOf<T>(schema: z.ZodType<T>, body: Record<string, string | undefined>, name: string): T {
  const parsed = schema.safeParse(body[name] ?? '');
  if (!parsed.success) {
    throw new DomainError('validation_failed', `${name}: ${parsed.error.issues[0]?.message ?? 'invalid'}`, {
      field: name,
    });
  }
  return parsed.data;
}

export function textBody(request: FastifyRequest): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries((request.body ?? {}) as Record<string, unknown>)) {
    if (typeof v === 'string') out[k] = v;
  }
  return out;
}

/** The address of the next page of a list: the same filters and the cursor (under `key`). */
export function nextHref(
  path: string,
  filters: Record<string, string | undefined>,
  cursor: string | null,
  key = 'cursor',
): string | null {
  if (!cursor) return null;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v && k !== key) params.set(k, v);
  params.set(key, cursor);
  return `${path}?${params.toString()}`;
}

export const viewerOf = (request: FastifyRequest, deps: ConsoleFrame): Viewer =>
  contextOf(request, deps).viewer;

export interface Confirmation {
  title: string;
  /** What the action does, said before it is done */
  explain: Html;
  fields: FormField[];
  submit: string;
  danger?: boolean;
  /** What the page shows after the form (a reference to write it with) */
  trailer?: Html;
}

/**
 * An action behind a confirmation: GET shows what it will do and its form; POST does it through the
 * services and goes to the object's page (or shows a secret made once), or shows the form again with the
 * refusal, its field marked.
 */
export function confirmedAction<P>(
  deps: ConsoleRouteDeps,
  describe: (request: FastifyRequest, params: P) => Promise<Confirmation>,
  act: (
    request: FastifyRequest,
    params: P,
    body: Record<string, string | undefined>,
  ) => Promise<string | { title: string; content: Html }>,
) {
  const show = async (
    request: FastifyRequest,
    reply: FastifyReply,
    error?: { field?: string; message: string },
    status = 200,
  ) => {
    const params = request.params as P;
    const c = await describe(request, params);
    const path = request.url.split('?')[0] ?? '';
    const form = postForm(contextOf(request, deps), path, c.fields, c.submit, {
      idempotent: true,
      ...(c.danger ? { danger: true } : {}),
      ...(error ? { error } : {}),
    });
    return sendConsolePage(request, reply, deps, c.title, h`${c.explain}${form}${c.trailer ?? ''}`, status);
  };
  return {
    get: async (request: FastifyRequest, reply: FastifyReply) => show(request, reply),
    post: async (request: FastifyRequest, reply: FastifyReply) => {
      try {
        const done = await act(request, request.params as P, textBody(request));
        // A secret shown once is answered here (a resubmitted form replays this same answer); anything
        // else goes to the object's page.
        if (typeof done !== 'string') return sendConsolePage(request, reply, deps, done.title, done.content);
        // The body says where it went too: a resubmitted form replays this answer without its Location.
        return reply
          .code(303)
          .header('location', done)
          .type('text/html; charset=utf-8')
          .send(plainConsolePage('Done', h`<p>Done. <a href="${done}">Continue</a></p>`));
      } catch (err) {
        const error = asDomainError(err);
        if (error.status >= 500 || error.status === 404) throw err;
        return show(
          request,
          reply,
          { message: error.message, ...(error.field ? { field: error.field } : {}) },
          error.status,
        );
      }
    },
  };
}

/** The events a viewer may list (the events service's own tenant scope; none for an operator). */
export async function eventScopeOf(deps: ConsoleRouteDeps, viewer: Viewer): Promise<EventScope | undefined> {
  if (viewer.role === 'operator') return undefined;
  const { kind, id } = viewer.tenant;
  if (kind === 'merchant') {
    const sites = await deps.services.db
      .selectFrom('sites')
      .select('id')
      .where('merchant_id', '=', Number(id))
      .execute();
    return { api: 'payments', tenantIds: sites.map((s) => String(s.id)) };
  }
  return { api: kind === 'store' ? 'crypto' : 'issuing', tenantIds: [id] };
}

/**
 * What happened to one object, oldest first: each event about it (the event log's GIN index on its object
 * ids) in words, when, its webhook's state and a link to the event, its type kept as the wire says it.
 */
export async function eventsAbout(deps: ConsoleRouteDeps, viewer: Viewer, objectId: string): Promise<Html> {
  const { events } = await deps.services.events.list(
    { objectId, limit: TIMELINE_EVENTS },
    await eventScopeOf(deps, viewer),
  );
  if (events.length === 0) return h`<p class="empty">Nothing has happened to it yet.</p>`;
  // A payments transaction's state told again (its IPN sent once more when a refund of it changed its
  // amounts: the type is the state) says so. Other APIs' types name a change, not a state: never "again".
  const told = new Set<string>();
  const said = (e: (typeof events)[number]) => {
    const transaction = (e.payload as { transactionId?: unknown } | null)?.transactionId;
    const key = `${e.type} ${String(transaction)}`;
    const again = e.api === 'payments' && transaction !== undefined && told.has(key);
    told.add(key);
    return `${eventLabel(e.type, e.payload)}${again ? ' (the same state, told again)' : ''}`;
  };
  return h`${events.length === TIMELINE_EVENTS ? h`<p>The newest ${TIMELINE_EVENTS} events.</p>` : ''}<ol class="timeline">${[
    ...events,
  ]
    .reverse()
    .map(
      (e) =>
        h`<li><span class="when">${when(e.createdAt)}</span> <strong>${said(e)}</strong> <span class="meta">webhook ${status(e.deliveryState, 'webhook')} · ${link(`/console/developers/events/${e.eventId}`, 'event')} <code class="wire">${e.type}</code></span></li>`,
    )}</ol>`;
}
const TIMELINE_EVENTS = 50;

/** Every list narrows to the rows created between two dates and sorts newest or oldest first (list-narrowing.ts) */
const CREATED_FILTERS: FilterField[] = [
  { name: 'from', label: 'Created from', type: 'date' },
  { name: 'to', label: 'Created to', type: 'date' },
];
const SORT_WORDS: Record<Sort, string> = {
  newest: 'Newest first',
  oldest: 'Oldest first',
  amount_desc: 'Largest amount first',
  amount_asc: 'Smallest amount first',
};
/** A list with an amount narrows by it too, and sorts by it over a period of at most a month */
const AMOUNT_FILTERS: FilterField[] = [
  { name: 'minAmount', label: 'Amount at least' },
  { name: 'maxAmount', label: 'Amount at most' },
];
const sortField = (amounts: boolean): FilterField => ({
  name: 'sort',
  label: 'Sort',
  options: amounts ? SORTS : SORTS.filter((s) => !s.startsWith('amount')),
  optionLabels: SORT_WORDS,
  required: true,
});

/**
 * A list page: its filters (GET form), the rows the read gives for the viewer, and the next page's link —
 * the shape every console list shares.
 */
export function listRoute<R>(
  app: FastifyInstance,
  deps: ConsoleRouteDeps,
  path: string,
  page: {
    title: string;
    read: (db: Db, viewer: Viewer, filters: Record<string, string | undefined>) => Promise<Page<R>>;
    filters?: FilterField[];
    /** Its rows have an amount (the read gives pageOf one): narrowed and sorted by it */
    amounts?: boolean;
    /** The rows as a table: `viewer` for what its role may read (a customer's name beside its id) */
    table: (rows: NoInfer<R>[], next: string | null, viewer: Viewer) => Html;
  },
): void {
  const href = `/console${path}`;
  app.get(path, async (request, reply) => {
    const f = textQuery(request);
    const viewer = viewerOf(request, deps);
    const found = await page.read(deps.services.db, viewer, f);
    const narrowing = [
      ...(page.filters ?? []),
      ...CREATED_FILTERS,
      ...(page.amounts ? AMOUNT_FILTERS : []),
      sortField(page.amounts ?? false),
    ];
    const filters = filterForm(href, narrowing, f);
    const table = page.table(found.rows, nextHref(href, f, found.nextCursor), viewer);
    const filtered = new URLSearchParams(
      Object.entries(f).filter((e): e is [string, string] => e[0] !== 'cursor' && Boolean(e[1])),
    ).toString();
    const download =
      found.rows.length > 0
        ? h`<p class="export"><a href="${href}.csv${filtered ? `?${filtered}` : ''}" download>Download this list as CSV</a></p>`
        : '';
    return sendConsolePage(request, reply, deps, page.title, h`${filters}${download}${table}`);
  });
  // The filtered list whole (from its first page), as the page shows its cells
  app.get(`${path}.csv`, async (request, reply) => {
    const { cursor: _first, ...f } = textQuery(request);
    const viewer = viewerOf(request, deps);
    const header: string[] = [];
    const rows: string[][] = [];
    let cursor: string | undefined;
    do {
      const found = await page.read(deps.services.db, viewer, { ...f, cursor });
      const table = tableText(page.table(found.rows, null, viewer));
      if (header.length === 0) header.push(...table.header);
      rows.push(...table.rows);
      cursor = found.nextCursor ?? undefined;
    } while (cursor && rows.length < EXPORT_ROWS);
    return sendCsv(
      reply,
      `${path.slice(1).replace(/\//g, '-')}.csv`,
      listCsv(header, rows.slice(0, EXPORT_ROWS)),
    );
  });
}
