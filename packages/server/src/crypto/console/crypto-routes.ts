// Console › Crypto: orders with their deposits and the chain transfers behind them, refund proposals, and
// stores with their session keys (a key made here is shown once; revoking one refuses it at once).

import type { FastifyInstance } from 'fastify';
import { noteAuditObject } from '../../platform/audit/audit-actions.ts';
import { sendConsolePage } from '../../platform/console/console-http.ts';
import { details, doneNotice, link, listView, objectHead } from '../../platform/console/console-layout.ts';
import { ownsTenant, sees } from '../../platform/console/console-scope.ts';
import type { Viewer } from '../../platform/console/console-users.ts';
import { h } from '../../platform/console/html-template.ts';
import {
  confirmedAction,
  eventsAbout,
  listRoute,
  nextHref,
  textQuery,
  viewerOf,
} from '../../platform/console/route-kit.ts';
import { idLink, money, status, statusFact, when } from '../../platform/console/values.ts';
import { CRYPTO_ORDER_STATUSES } from '../../platform/db/schema.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { tenantChangeSettled } from '../../platform/tenants/tenant-changes.ts';
import { readEvmWallet } from '../../rails/chain/hd-addresses.ts';
import { REFUND_REFERENCE } from '../refunds/refunds-service.ts';
import type { CryptoConsoleDeps } from './console-deps.ts';
import {
  CRYPTO_REFUND_STATUSES,
  chainTransfers,
  depositsOf,
  getCryptoOrder,
  getCryptoRefund,
  listCryptoOrders,
  listCryptoRefunds,
  listStoreKeys,
} from './crypto-reads.ts';

type IdParams = { id: string };

export async function registerCryptoConsoleRoutes(
  app: FastifyInstance,
  deps: CryptoConsoleDeps,
): Promise<void> {
  const { db } = deps.services;
  const { stores } = deps.services;

  /** A store the viewer may see, or not found. */
  const storeFor = async (viewer: Viewer, id: string) => {
    if (!ownsTenant(viewer, 'store', id)) throw notFound('store');
    return stores.get(db, id);
  };

  listRoute(app, deps, '/crypto/orders', {
    title: 'Crypto orders',
    read: listCryptoOrders,
    amounts: true,
    filters: [
      { name: 'status', label: 'Status', options: CRYPTO_ORDER_STATUSES, labels: 'crypto.order' },
      { name: 'reference', label: 'Store’s reference' },
    ],
    table: (rows, next) =>
      listView({
        caption: 'Crypto orders, newest first',
        rows,
        columns: [
          { label: 'Order', cell: (o) => link(`/console/crypto/orders/${o.id}`, o.id) },
          { label: 'Created', cell: (o) => when(o.created_at) },
          { label: 'Store', cell: (o) => o.store_name },
          { label: 'Reference', cell: (o) => o.reference },
          { label: 'Status', cell: (o) => status(o.status, 'crypto.order') },
          { label: 'Total', cell: (o) => money(o.total, o.currency) },
          { label: 'Paying in', cell: (o) => (o.pay_asset ? `${o.pay_asset} on ${o.pay_network}` : '') },
        ],
        nextHref: next,
      }),
  });

  app.get<{ Params: IdParams }>('/crypto/orders/:id', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const o = await getCryptoOrder(db, viewer, request.params.id);
    const [deposits, transfers, refunds] = await Promise.all([
      depositsOf(db, o.id),
      o.deposit_address ? chainTransfers(db, { address: o.deposit_address }) : Promise.resolve([]),
      listCryptoRefunds(db, viewer, { orderId: o.id }),
    ]);
    return sendConsolePage(
      request,
      reply,
      deps,
      `Crypto order ${o.reference}`,
      h`${objectHead(viewer, { amount: money(o.total, o.currency), status: status(o.status, 'crypto.order'), id: o.id })}${details(
        [
          ['Status', statusFact(o.status, 'crypto.order')],
          ['Total', money(o.total, o.currency)],
          ['Store', link(`/console/crypto/stores/${o.store_id}`, o.store_name)],
          ['Paying in', o.pay_asset ? `${o.pay_asset} on ${o.pay_network}` : null],
          ['Deposit address', o.deposit_address ? h`<code>${o.deposit_address}</code>` : null],
          ['Payment', idLink(o.payment_id)],
          ['Expires', when(o.expires_at)],
          ['Created', when(o.created_at)],
        ],
      )}
<h2>Deposits</h2>${listView({
        caption: 'What the buyer sent, as the order counted it',
        rows: deposits,
        empty: 'Nothing received yet.',
        columns: [
          { label: 'Deposit', cell: (d) => d.id },
          { label: 'Amount', cell: (d) => money(d.amount, d.asset) },
          { label: 'Network', cell: (d) => d.network },
          { label: 'Status', cell: (d) => status(d.status, 'crypto.deposit') },
          { label: 'Late', cell: (d) => (d.late ? 'yes' : 'no') },
          { label: 'Confirmations needed', cell: (d) => d.confirmations_required },
          { label: 'Detected', cell: (d) => when(d.detected_at) },
          { label: 'Confirmed', cell: (d) => when(d.confirmed_at) },
        ],
      })}
<h2>Chain transfers</h2>${transferTable(transfers)}
<h2>Refunds</h2>${refundTable(refunds.rows)}
<h2>What happened</h2>${await eventsAbout(deps, viewer, o.id)}`,
    );
  });

  listRoute(app, deps, '/crypto/refunds', {
    title: 'Crypto refunds',
    read: listCryptoRefunds,
    filters: [{ name: 'status', label: 'Status', options: CRYPTO_REFUND_STATUSES, labels: 'crypto.refund' }],
    table: refundTable,
  });

  app.get<{ Params: IdParams }>('/crypto/refunds/:id', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const r = await getCryptoRefund(db, viewer, request.params.id);
    // The payout is the transfer the refund sent (its reference names the refund, whichever rail sent it).
    const payout = r.payout_id ? await chainTransfers(db, { reference: `${REFUND_REFERENCE}:${r.id}` }) : [];
    return sendConsolePage(
      request,
      reply,
      deps,
      { tab: `Crypto refund ${r.id}`, heading: 'Crypto refund' },
      h`${objectHead(viewer, { amount: money(r.amount, r.currency), status: status(r.status, 'crypto.refund'), id: r.id })}${details(
        [
          ['Status', statusFact(r.status, 'crypto.refund')],
          ['Amount', money(r.amount, r.currency)],
          ['In crypto', money(r.crypto_amount, r.asset)],
          ['Network', r.network],
          ['Order', link(`/console/crypto/orders/${r.order_id}`, r.order_id)],
          ['Payment', idLink(r.payment_id)],
          ['Buyer’s address', r.refund_address],
          ['Reason', r.reason],
          ['Expires', when(r.expires_at)],
          ['Proposed', when(r.created_at)],
        ],
      )}<h2>Payout</h2>${transferTable(payout)}<h2>What happened</h2>${await eventsAbout(deps, viewer, r.id)}`,
    );
  });

  app.get('/crypto/stores', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    if (!sees(viewer, 'store')) throw notFound('page');
    const all = viewer.role === 'operator' ? await stores.list(db) : [await stores.get(db, viewer.tenant.id)];
    return sendConsolePage(
      request,
      reply,
      deps,
      'Stores',
      listView({
        caption: 'Stores',
        rows: all,
        columns: [
          { label: 'Store', cell: (s) => link(`/console/crypto/stores/${s.id}`, s.id) },
          { label: 'Name', cell: (s) => s.name },
          { label: 'Client id', cell: (s) => s.clientId },
          { label: 'Webhook URL', cell: (s) => s.webhookUrl },
          { label: 'Refunds', cell: (s) => (s.refundsEnabled ? 'enabled' : 'disabled') },
          { label: 'Created', cell: (s) => when(s.createdAt) },
        ],
      }),
    );
  });

  app.get<{ Params: IdParams }>('/crypto/stores/:id', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const s = await storeFor(viewer, request.params.id);
    const keys = await listStoreKeys(db, viewer, { ...textQuery(request), storeId: s.id });
    const base = `/console/crypto/stores/${s.id}`;
    return sendConsolePage(
      request,
      reply,
      deps,
      `Store ${s.name}`,
      h`${doneNotice(textQuery(request).done)}${details([
        ['Store id', s.id],
        ['Client id', s.clientId],
        ['Webhook URL', s.webhookUrl],
        ['Refunds', s.refundsEnabled ? 'enabled' : 'disabled'],
        ['Currencies', s.currencies.map((c) => `${c.currency} on ${c.network}`).join(', ')],
        ['EVM wallet', s.evmAccountKey ?? 'the operator’s (TESSERA_EVM_XPUB)'],
        ['Its first address', s.evmAccountKey ? firstAddressOf(s.evmAccountKey) : null],
        ['Created', when(s.createdAt)],
      ])}<p>${link(`${base}/evm-wallet`, 'Change the EVM wallet…')}</p>
<h2>API keys</h2><p>${link(`${base}/keys/new`, 'Create a key…')}</p>
${listView({
  caption: 'Session keys of this store (only their ids: a key is shown once, when made)',
  rows: keys.rows,
  empty: 'No keys yet.',
  columns: [
    { label: 'Key id', cell: (k) => k.id },
    { label: 'Mode', cell: (k) => k.mode },
    { label: 'Created', cell: (k) => when(k.created_at) },
    {
      label: 'Revoked',
      cell: (k) => (k.revoked_at ? when(k.revoked_at) : link(`${base}/keys/${k.id}/revoke`, 'Revoke…')),
    },
  ],
  nextHref: nextHref(base, {}, keys.nextCursor),
})}`,
    );
  });

  const evmWallet = confirmedAction<IdParams>(
    deps,
    async (request, params) => {
      const s = await storeFor(viewerOf(request, deps), params.id);
      return {
        title: `EVM wallet of ${s.name}`,
        explain: h`<p>The account-level extended public key (xpub, m/44’/60’/0’) of the wallet that receives this store’s
payments on a real EVM chain: each order gets a new address derived from it, and Tessera never holds its private key.
Addresses already given to orders stay as they are. Leave empty to use the operator’s wallet.</p>
<p>After saving, compare the store’s first address with the first address your wallet shows for this account.</p>`,
        fields: [{ name: 'evmXpub', label: 'Extended public key', value: s.evmAccountKey ?? '' }],
        submit: 'Save the wallet',
        danger: true,
      };
    },
    async (request, params, body) => {
      const s = await storeFor(viewerOf(request, deps), params.id);
      const key = body.evmXpub?.trim() ?? '';
      const wallet = key ? readEvmWallet(key) : undefined;
      if (wallet && 'problem' in wallet) {
        throw new DomainError('validation_failed', `evmXpub: ${wallet.problem}`, { field: 'evmXpub' });
      }
      await stores.update(db, s.id, { evmAccountKey: key || null });
      await tenantChangeSettled(db);
      return `/console/crypto/stores/${s.id}?done=saved`;
    },
  );
  app.get('/crypto/stores/:id/evm-wallet', evmWallet.get);
  app.post('/crypto/stores/:id/evm-wallet', evmWallet.post);

  const newKey = confirmedAction<IdParams>(
    deps,
    async (request, params) => {
      const s = await storeFor(viewerOf(request, deps), params.id);
      return {
        title: `New API key for ${s.name}`,
        explain: h`<p>Makes a session key (<code>Authorization: Bearer u_…</code>) and shows it once. Other keys keep working.</p>`,
        fields: [],
        submit: 'Create the key',
      };
    },
    async (request, params) => {
      const s = await storeFor(viewerOf(request, deps), params.id);
      const { key, keyId } = await deps.services.crypto.sessions.issueKey(s.id);
      noteAuditObject(request, keyId);
      return {
        title: `New API key for ${s.name}`,
        content: h`<p>Copy it now: it is not shown again.</p><p class="secret" data-field="api-key">${key}</p>
<p>Key id: ${keyId}</p><p>${link(`/console/crypto/stores/${s.id}`, 'Back to the store')}</p>`,
      };
    },
  );
  app.get('/crypto/stores/:id/keys/new', newKey.get);
  app.post('/crypto/stores/:id/keys/new', newKey.post);

  const revoke = confirmedAction<{ id: string; keyId: string }>(
    deps,
    async (request, params) => {
      const s = await storeFor(viewerOf(request, deps), params.id);
      return {
        title: `Revoke key ${params.keyId}`,
        explain: h`<p>Requests with this key of ${s.name} are refused from now on. This cannot be undone.</p>`,
        fields: [],
        submit: 'Revoke the key',
        danger: true,
      };
    },
    async (request, params) => {
      const s = await storeFor(viewerOf(request, deps), params.id);
      await deps.services.crypto.sessions.revokeKey(s.id, params.keyId);
      return `/console/crypto/stores/${s.id}?done=revoked`;
    },
  );
  app.get('/crypto/stores/:id/keys/:keyId/revoke', revoke.get);
  app.post('/crypto/stores/:id/keys/:keyId/revoke', revoke.post);
}

/** The first receive address of a stored key (checked when it was saved). */
function firstAddressOf(key: string): string | null {
  const wallet = readEvmWallet(key);
  return 'firstAddress' in wallet ? wallet.firstAddress : null;
}

function transferTable(rows: Awaited<ReturnType<typeof chainTransfers>>) {
  return listView({
    caption: 'Transfers on the chain',
    rows,
    empty: 'No transfers.',
    columns: [
      { label: 'Transaction', cell: (t) => t.tx_hash ?? 'not signed yet' },
      { label: 'Direction', cell: (t) => t.direction },
      { label: 'Amount', cell: (t) => money(t.amount, t.asset) },
      { label: 'Network', cell: (t) => t.network },
      { label: 'Status', cell: (t) => status(t.status, 'crypto.transfer') },
      { label: 'Confirmations needed', cell: (t) => t.confirmations_required },
      { label: 'Broadcast', cell: (t) => when(t.broadcast_at) },
      { label: 'Confirmed', cell: (t) => when(t.confirmed_at) },
    ],
  });
}

function refundTable(
  rows: Awaited<ReturnType<typeof listCryptoRefunds>>['rows'],
  next: string | null = null,
) {
  return listView({
    caption: 'Refund proposals, newest first',
    rows,
    empty: 'No refunds.',
    columns: [
      { label: 'Refund', cell: (r) => link(`/console/crypto/refunds/${r.id}`, r.id) },
      { label: 'Order', cell: (r) => link(`/console/crypto/orders/${r.order_id}`, r.order_id) },
      { label: 'Status', cell: (r) => status(r.status, 'crypto.refund') },
      { label: 'Amount', cell: (r) => money(r.amount, r.currency) },
      { label: 'In crypto', cell: (r) => money(r.crypto_amount, r.asset) },
      { label: 'Expires', cell: (r) => when(r.expires_at) },
    ],
    nextHref: next,
  });
}
