// Console › Payments › Sites: a merchant's sites, and the two changes a site's people make here: its IPN
// URL and its secret key's rotation (each confirmed first, four eyes where the tenant asks for them).

import type { FastifyInstance } from 'fastify';
import { sendConsolePage } from '../../platform/console/console-http.ts';
import { details, doneNotice, link, listView } from '../../platform/console/console-layout.ts';
import { h } from '../../platform/console/html-template.ts';
import { confirmedAction, listRoute, textQuery, viewerOf } from '../../platform/console/route-kit.ts';
import { objectLink, when } from '../../platform/console/values.ts';
import { runTransaction } from '../../platform/db/transact.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { tenantChangeSettled } from '../../platform/tenants/tenant-changes.ts';
import type { PaymentsConsoleDeps } from './console-deps.ts';
import { getSite, listSites } from './payments-reads.ts';

type IdParams = { id: string };

export async function registerPaymentsSitesConsoleRoutes(
  app: FastifyInstance,
  deps: PaymentsConsoleDeps,
): Promise<void> {
  const { db } = deps.services;

  listRoute(app, deps, '/payments/sites', {
    title: 'Sites',
    read: listSites,
    filters: [{ name: 'merchantId', label: 'Merchant id' }],
    table: (rows, next) =>
      listView({
        caption: 'Sites',
        rows,
        columns: [
          { label: 'Site', cell: (s) => objectLink('site', `/console/payments/sites/${s.id}`, s.id) },
          { label: 'Name', cell: (s) => s.name },
          { label: 'Merchant', cell: (s) => `${s.merchant_name} (${s.merchant_id})` },
          { label: 'IPN URL', cell: (s) => s.ipn_url },
          { label: 'Created', cell: (s) => when(s.created_at) },
        ],
        nextHref: next,
      }),
  });

  app.get<{ Params: IdParams }>('/payments/sites/:id', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const s = await getSite(db, viewer, request.params.id);
    const base = `/console/payments/sites/${s.id}`;
    return sendConsolePage(
      request,
      reply,
      deps,
      `Site ${s.name}`,
      h`${doneNotice(textQuery(request).done)}${details([
        ['Site id', s.id],
        ['Merchant', `${s.merchant_name} (${s.merchant_id})`],
        ['Public key', deps.services.merchants.publicKeyOf(s.id)],
        ['IPN URL', s.ipn_url],
        [
          'Category code (MCC) and country',
          s.mcc || s.country ? `${s.mcc ?? '—'}, ${s.country ?? '—'}` : 'not set',
        ],
        ['Previous secret key valid until', when(s.previous_secret_key_until)],
        ['Created', when(s.created_at)],
      ])}<p class="inline">${link(`${base}/ipn-url`, 'Change the IPN URL…')} ${link(`${base}/rotate-key`, 'Rotate the secret key…')}</p>`,
    );
  });

  const ipnUrl = confirmedAction<IdParams>(
    deps,
    async (request, params) => {
      const s = await getSite(db, viewerOf(request, deps), params.id);
      return {
        title: `IPN URL of ${s.name}`,
        explain: h`<p>Where Tessera posts this site’s payment notifications. Leave empty to send none.</p>`,
        fields: [{ name: 'ipnUrl', label: 'IPN URL', type: 'url', value: s.ipn_url ?? '' }],
        submit: 'Save',
      };
    },
    async (request, params, body) => {
      const s = await getSite(db, viewerOf(request, deps), params.id);
      const url = body.ipnUrl?.trim() ?? '';
      const problem = url ? deps.services.ssrf.checkUrl(url) : undefined;
      if (problem) throw new DomainError('validation_failed', `ipnUrl ${problem}`, { field: 'ipnUrl' });
      await deps.services.merchants.updateSite(db, s.merchant_id, s.id, { ipnUrl: url || null });
      await tenantChangeSettled(db);
      return `/console/payments/sites/${s.id}?done=saved`;
    },
  );
  app.get('/payments/sites/:id/ipn-url', ipnUrl.get);
  app.post('/payments/sites/:id/ipn-url', ipnUrl.post);

  const rotate = confirmedAction<IdParams>(
    deps,
    async (request, params) => {
      const s = await getSite(db, viewerOf(request, deps), params.id);
      return {
        title: `Rotate the secret key of ${s.name}`,
        explain: h`<p>A new secret key is made and shown once. The current key keeps working for the overlap you choose,
so the shop can switch without downtime; IPNs use the new key at once.</p>`,
        fields: [
          {
            name: 'overlapSeconds',
            label: 'Overlap (seconds)',
            value: '86400',
            required: true,
            inputmode: 'numeric',
            hint: '0 to stop the current key at once; at most 30 days',
          },
        ],
        submit: 'Rotate the key',
        danger: true,
      };
    },
    async (request, params, body) => {
      const s = await getSite(db, viewerOf(request, deps), params.id);
      const overlap = body.overlapSeconds?.trim() ?? '';
      if (!/^\d{1,7}$/.test(overlap) || Number(overlap) > 30 * 86_400) {
        throw new DomainError(
          'validation_failed',
          'overlapSeconds must be a whole number of seconds up to 30 days',
          { field: 'overlapSeconds' },
        );
      }
      const rotated = await runTransaction(db, (tx) =>
        deps.services.merchants.rotateSecretKey(tx, s.merchant_id, s.id, Number(overlap)),
      );
      await tenantChangeSettled(db);
      return {
        title: `New secret key of ${s.name}`,
        content: h`<p>Copy it now: it is not shown again.</p><p class="secret" data-field="secret-key">${rotated.secretKey}</p>
${details([
  ['Public key', rotated.publicKey],
  ['Previous key valid until', when(rotated.previousKeyValidUntil)],
])}<p>${link(`/console/payments/sites/${s.id}`, 'Back to the site')}</p>`,
      };
    },
  );
  app.get('/payments/sites/:id/rotate-key', rotate.get);
  app.post('/payments/sites/:id/rotate-key', rotate.post);
}
