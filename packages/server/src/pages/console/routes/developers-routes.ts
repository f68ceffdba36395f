// Console › Developers: API keys (a merchant's keys made here are shown once, and revoked here; a store's
// keys live on its page), webhook endpoints with how their last deliveries went, and events with every
// delivery attempt (answer code, latency, body excerpt) and a button that sends one again.

import type { FastifyInstance } from 'fastify';
import { listMerchantKeys } from '../../../payments/console/payments-reads.ts';
import { noteAuditObject } from '../../../platform/audit/audit-actions.ts';
import { sendConsolePage } from '../../../platform/console/console-http.ts';
import { details, doneNotice, filterForm, link, listView } from '../../../platform/console/console-layout.ts';
import { ownsTenant, sees } from '../../../platform/console/console-scope.ts';
import type { Viewer } from '../../../platform/console/console-users.ts';
import { h } from '../../../platform/console/html-template.ts';
import { UUID } from '../../../platform/console/paging.ts';
import {
  confirmedAction,
  eventScopeOf,
  nextHref,
  textQuery,
  viewerOf,
} from '../../../platform/console/route-kit.ts';
import { labelledIds, status, statusFact, when } from '../../../platform/console/values.ts';
import { runTransaction } from '../../../platform/db/transact.ts';
import { DomainError, notFound } from '../../../platform/errors/domain-error.ts';
import type { DeliveryState } from '../../../platform/events/events-service.ts';
import { tenantChangeSettled } from '../../../platform/tenants/tenant-changes.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';

const DELIVERY_STATES: readonly DeliveryState[] = ['pending', 'succeeded', 'failed', 'waiting', 'none'];

export async function registerDevelopersConsoleRoutes(
  app: FastifyInstance,
  deps: PlatformConsoleDeps,
): Promise<void> {
  const { db, events, merchants, partners, stores } = deps.services;

  /** The merchant whose keys the viewer manages here (a member: their own; the operator: any). */
  const merchantFor = async (viewer: Viewer, id: string) => {
    if (!ownsTenant(viewer, 'merchant', id) || !/^\d{1,15}$/.test(id)) {
      throw notFound('merchant');
    }
    return merchants.get(db, Number(id));
  };

  app.get('/developers/keys', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const f = textQuery(request);
    const parts = [];
    if (sees(viewer, 'merchant')) {
      const keys = await listMerchantKeys(db, viewer, f);
      const mine = viewer.role === 'member' ? viewer.tenant.id : undefined;
      parts.push(h`<h2>Payments: merchant API keys</h2>
<p>${mine ? link(`/console/developers/keys/merchants/${mine}/new`, 'Create a key…') : 'To create a key, open it from a merchant: '}
${mine ? '' : (await merchants.list(db)).map((m) => h`${link(`/console/developers/keys/merchants/${m.id}/new`, `${m.name} (${m.id})`)} `)}</p>
${listView({
  caption: 'Merchant API keys (only their ids: a key is shown once, when made)',
  rows: keys.rows,
  empty: 'No keys.',
  columns: [
    { label: 'Key id', cell: (k) => k.id },
    { label: 'Merchant', cell: (k) => `${k.merchant_name} (${k.merchant_id})` },
    { label: 'Created', cell: (k) => when(k.created_at) },
    {
      label: 'Revoked',
      cell: (k) =>
        k.revoked_at
          ? when(k.revoked_at)
          : link(`/console/developers/keys/merchants/${k.merchant_id}/${k.id}/revoke`, 'Revoke…'),
    },
  ],
  nextHref: nextHref('/console/developers/keys', f, keys.nextCursor),
})}`);
    }
    if (sees(viewer, 'store')) {
      parts.push(
        h`<h2>Crypto: store keys</h2><p>A store’s session keys are made and revoked on its page: ${link('/console/crypto/stores', 'Stores')}.</p>`,
      );
    }
    if (sees(viewer, 'partner')) {
      parts.push(h`<h2>Card issuing: partner API key</h2><p>A partner has one API key, shown once when the operator
created the partner; it is not rotated from the console.</p>`);
    }
    return sendConsolePage(request, reply, deps, 'API keys', h`${doneNotice(f.done)}${parts}`);
  });

  const newKey = confirmedAction<{ merchantId: string }>(
    deps,
    async (request, params) => {
      const m = await merchantFor(viewerOf(request, deps), params.merchantId);
      return {
        title: `New API key for ${m.name}`,
        explain: h`<p>Makes a merchant API key (<code>Authorization: Bearer …</code>) and shows it once. Other keys keep working until revoked.</p>`,
        fields: [],
        submit: 'Create the key',
      };
    },
    async (request, params) => {
      const m = await merchantFor(viewerOf(request, deps), params.merchantId);
      const { apiKey, apiKeyId } = await runTransaction(db, (tx) => merchants.issueApiKey(tx, m.id));
      noteAuditObject(request, apiKeyId);
      return {
        title: `New API key for ${m.name}`,
        content: h`<p>Copy it now: it is not shown again.</p><p class="secret" data-field="api-key">${apiKey}</p>
<p>Key id: ${apiKeyId}</p><p>${link('/console/developers/keys', 'Back to the keys')}</p>`,
      };
    },
  );
  app.get('/developers/keys/merchants/:merchantId/new', newKey.get);
  app.post('/developers/keys/merchants/:merchantId/new', newKey.post);

  const revoke = confirmedAction<{ merchantId: string; keyId: string }>(
    deps,
    async (request, params) => {
      const m = await merchantFor(viewerOf(request, deps), params.merchantId);
      return {
        title: `Revoke key ${params.keyId}`,
        explain: h`<p>Requests with this key of ${m.name} are refused from now on. This cannot be undone.</p>`,
        fields: [],
        submit: 'Revoke the key',
        danger: true,
      };
    },
    async (request, params) => {
      const m = await merchantFor(viewerOf(request, deps), params.merchantId);
      if (!UUID.test(params.keyId)) throw notFound('API key');
      await merchants.revokeApiKey(db, m.id, params.keyId);
      await tenantChangeSettled(db);
      return '/console/developers/keys?done=revoked';
    },
  );
  app.get('/developers/keys/merchants/:merchantId/:keyId/revoke', revoke.get);
  app.post('/developers/keys/merchants/:merchantId/:keyId/revoke', revoke.post);

  app.get('/developers/webhooks', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const rows: { api: string; tenant: string; url: string | null; edit: string }[] = [];
    if (sees(viewer, 'partner')) {
      const list =
        viewer.role === 'operator' ? await partners.list(db) : [await partners.get(db, viewer.tenant.id)];
      for (const p of list)
        rows.push({
          api: 'issuing',
          tenant: `partner ${p.name}`,
          url: p.webhookUrl,
          edit: `/console/issuing/partners/${p.id}`,
        });
    }
    if (sees(viewer, 'merchant')) {
      const list =
        viewer.role === 'operator'
          ? await merchants.list(db)
          : [await merchants.get(db, Number(viewer.tenant.id))];
      for (const m of list) {
        for (const s of m.sites)
          rows.push({
            api: 'payments',
            tenant: `site ${s.name} (${m.name})`,
            url: s.ipnUrl,
            edit: `/console/payments/sites/${s.id}/ipn-url`,
          });
      }
    }
    if (sees(viewer, 'store')) {
      const list =
        viewer.role === 'operator' ? await stores.list(db) : [await stores.get(db, viewer.tenant.id)];
      for (const s of list)
        rows.push({
          api: 'crypto',
          tenant: `store ${s.name}`,
          url: s.webhookUrl,
          edit: `/console/crypto/stores/${s.id}`,
        });
    }
    return sendConsolePage(
      request,
      reply,
      deps,
      'Webhook endpoints',
      h`${listView({
        caption: 'Where each tenant’s events are sent',
        rows,
        columns: [
          { label: 'API', cell: (r) => r.api },
          { label: 'Tenant', cell: (r) => r.tenant },
          { label: 'URL', cell: (r) => r.url ?? 'none: events are kept, not sent' },
          { label: '', cell: (r) => link(r.edit, 'Open') },
        ],
      })}<p>${link('/console/developers/events?delivery=failed', 'Events whose webhook failed')}</p>`,
    );
  });

  app.get('/developers/events', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const f = textQuery(request);
    const delivery = DELIVERY_STATES.find((s) => s === f.delivery);
    if (f.delivery && !delivery)
      throw new DomainError('validation_failed', 'the filter delivery is not valid', { field: 'delivery' });
    if (f.cursor && !/^evt_[0-9A-Z]{26}$/.test(f.cursor))
      throw new DomainError('validation_failed', 'the cursor is not valid', { field: 'cursor' });
    const page = await events.list(
      {
        limit: 25,
        ...(f.type ? { type: f.type.slice(0, 100) } : {}),
        ...(f.objectId ? { objectId: f.objectId.slice(0, 100) } : {}),
        ...(delivery ? { deliveryState: delivery } : {}),
        ...(f.cursor ? { cursor: f.cursor } : {}),
      },
      await eventScopeOf(deps, viewer),
    );
    return sendConsolePage(
      request,
      reply,
      deps,
      'Events',
      listView({
        caption: 'Events, newest first',
        filters: filterForm(
          '/console/developers/events',
          [
            { name: 'type', label: 'Type' },
            { name: 'objectId', label: 'About object id' },
            { name: 'delivery', label: 'Webhook', options: DELIVERY_STATES },
          ],
          f,
        ),
        rows: page.events,
        columns: [
          { label: 'Event', cell: (e) => link(`/console/developers/events/${e.eventId}`, e.eventId) },
          { label: 'API', cell: (e) => e.api },
          { label: 'Type', cell: (e) => e.type },
          { label: 'Webhook', cell: (e) => status(e.deliveryState, 'webhook') },
          { label: 'About', cell: (e) => labelledIds(e.objectIds, e.payload) },
          { label: 'Created', cell: (e) => when(e.createdAt) },
        ],
        nextHref: page.nextCursor
          ? `/console/developers/events?${new URLSearchParams({ ...Object.fromEntries(Object.entries(f).filter((e): e is [string, string] => !!e[1] && e[0] !== 'cursor')), cursor: page.nextCursor }).toString()}`
          : null,
      }),
    );
  });

  app.get<{ Params: { id: string } }>('/developers/events/:id', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const e = await events.get(request.params.id, await eventScopeOf(deps, viewer));
    const base = `/console/developers/events/${e.eventId}`;
    return sendConsolePage(
      request,
      reply,
      deps,
      `Event ${e.type}`,
      h`${doneNotice(textQuery(request).done)}
<p class="inline">${link(`${base}/redeliver`, 'Send again…')}</p>
${details([
  ['Event id', e.eventId],
  ['API', e.api],
  ['Tenant', e.tenantId],
  ['Webhook', statusFact(e.deliveryState, 'webhook')],
  ['About', labelledIds(e.objectIds, e.payload)],
  ['Created', when(e.createdAt)],
])}
<h2>Payload</h2><pre tabindex="0">${JSON.stringify(e.payload, null, 2)}</pre>
<h2>Deliveries</h2>${
        e.deliveries.length === 0
          ? h`<p>No delivery: no webhook URL was set when it happened.</p>`
          : e.deliveries.map(
              (d) => h`
<h3>${d.reason} to ${d.url}: ${status(d.status, 'webhook')} (${d.attemptCount} of ${d.maxAttempts} attempts)</h3>
${listView({
  caption: `Attempts of delivery ${d.deliveryId}`,
  rows: d.attempts,
  empty: d.nextAttemptAt ? `First attempt due ${d.nextAttemptAt.toISOString()}` : 'No attempts yet.',
  columns: [
    { label: '#', cell: (a) => a.attemptNumber },
    { label: 'Started', cell: (a) => when(a.startedAt) },
    {
      label: 'Answer',
      cell: (a) => (a.statusCode === null ? (a.abandoned ? 'abandoned' : 'no answer') : a.statusCode),
    },
    { label: 'Latency', cell: (a) => `${a.durationMs} ms` },
    { label: 'Body excerpt or error', cell: (a) => h`<code>${a.error ?? a.responseExcerpt ?? ''}</code>` },
  ],
})}`,
            )
      }`,
    );
  });

  const redeliver = confirmedAction<{ id: string }>(
    deps,
    async (request, params) => {
      const e = await events.get(params.id, await eventScopeOf(deps, viewerOf(request, deps)));
      return {
        title: `Send event ${e.eventId} again`,
        explain: h`<p>Sends this ${e.type} event again to its tenant’s current webhook URL, with a fresh set of attempts.
The event id stays the same, so a receiver that already has it can tell.</p>`,
        fields: [],
        submit: 'Send again',
      };
    },
    async (request, params) => {
      await events.redeliver(params.id, await eventScopeOf(deps, viewerOf(request, deps)));
      return `/console/developers/events/${params.id}?done=redelivered`;
    },
  );
  app.get('/developers/events/:id/redeliver', redeliver.get);
  app.post('/developers/events/:id/redeliver', redeliver.post);
}
