// Console › Issuing: partners, customers with their KYC state and documents, accounts and balances (with
// their statements), 3-D Secure challenges and topups; the cards and card transactions are in
// issuing-cards-routes.ts.

import type { FastifyInstance } from 'fastify';
import { sendConsolePage } from '../../platform/console/console-http.ts';
import { details, link, listView } from '../../platform/console/console-layout.ts';
import { ownsTenant, sees } from '../../platform/console/console-scope.ts';
import { h } from '../../platform/console/html-template.ts';
import { eventsAbout, listRoute, textQuery, viewerOf } from '../../platform/console/route-kit.ts';
import { money, status, statusFact, when } from '../../platform/console/values.ts';
import { notFound } from '../../platform/errors/domain-error.ts';
import { sendCsv } from '../../platform/http/csv-reply.ts';
import { isUuid } from '../../platform/ids.ts';
import { accountStatement } from '../accounts/account-statement.ts';
import type { IssuingConsoleDeps } from './console-deps.ts';
import { cardTable, registerIssuingCardsConsoleRoutes } from './issuing-cards-routes.ts';
import {
  getIssuingCustomer,
  KYC_STATUSES,
  kycDocumentsOf,
  listAccounts,
  listChallenges,
  listIssuedCards,
  listIssuingCustomers,
  listTopups,
} from './issuing-reads.ts';

type IdParams = { id: string };

export async function registerIssuingConsoleRoutes(
  app: FastifyInstance,
  deps: IssuingConsoleDeps,
): Promise<void> {
  const { db, partners } = deps.services;

  app.get('/issuing/partners', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    if (!sees(viewer, 'partner')) throw notFound('page');
    const all =
      viewer.role === 'operator' ? await partners.list(db) : [await partners.get(db, viewer.tenant.id)];
    return sendConsolePage(
      request,
      reply,
      deps,
      'Partners',
      listView({
        caption: 'Card issuing partners',
        rows: all,
        columns: [
          { label: 'Partner', cell: (p) => link(`/console/issuing/partners/${p.id}`, p.id) },
          { label: 'Name', cell: (p) => p.name },
          { label: 'Partner id (public)', cell: (p) => p.partnerId },
          { label: 'Webhook URL', cell: (p) => p.webhookUrl },
          { label: 'Created', cell: (p) => when(p.createdAt) },
        ],
      }),
    );
  });

  app.get<{ Params: IdParams }>('/issuing/partners/:id', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    if (!ownsTenant(viewer, 'partner', request.params.id)) {
      throw notFound('partner');
    }
    const p = await partners.get(db, request.params.id);
    const customers = await listIssuingCustomers(db, viewer, { partnerId: p.id });
    return sendConsolePage(
      request,
      reply,
      deps,
      `Partner ${p.name}`,
      h`${details([
        ['Partner', p.id],
        ['Partner id (public)', p.partnerId],
        ['Webhook URL', p.webhookUrl],
        ['Created', when(p.createdAt)],
      ])}<h2>Newest customers</h2>${customerTable(customers.rows, customers.nextCursor ? `/console/issuing/customers?partnerId=${p.id}` : null)}`,
    );
  });

  listRoute(app, deps, '/issuing/customers', {
    title: 'Issuing customers',
    read: listIssuingCustomers,
    filters: [
      { name: 'kyc', label: 'KYC', options: KYC_STATUSES, labels: 'issuing.kyc' },
      { name: 'email', label: 'Email contains' },
    ],
    table: customerTable,
  });

  app.get<{ Params: IdParams }>('/issuing/customers/:id', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const c = await getIssuingCustomer(db, viewer, request.params.id);
    const by = { customerId: c.id };
    const [documents, accounts, cards, topups] = await Promise.all([
      kycDocumentsOf(db, c.id),
      listAccounts(db, viewer, by),
      listIssuedCards(db, viewer, by),
      listTopups(db, viewer, by),
    ]);
    return sendConsolePage(
      request,
      reply,
      deps,
      `Customer ${c.email ?? c.external_user_id ?? c.id}`,
      h`${details([
        ['Customer', c.id],
        ['Partner', link(`/console/issuing/partners/${c.partner_id}`, c.partner_id)],
        ['Email', c.email],
        ['Partner’s user id', c.external_user_id],
        ['Wallet', c.wallet_address],
        ['Status', statusFact(c.status, 'issuing.customer')],
        ['Two-step sign-in', c.two_factor_enabled ? 'on' : 'off'],
        ['KYC', statusFact(c.kyc_status ?? 'not_started', 'issuing.kyc')],
        ['KYC rejection', c.reject_reason],
        ['Created', when(c.created_at)],
      ])}
<h2>KYC documents</h2>${listView({
        caption: 'Verifications and the documents they saw',
        rows: documents,
        empty: 'No documents yet.',
        columns: [
          { label: 'Verification', cell: (d) => d.id },
          { label: 'Kind', cell: (d) => d.kind },
          { label: 'Status', cell: (d) => status(d.status, 'issuing.kycVerification') },
          {
            label: 'Document',
            cell: (d) =>
              d.document_name
                ? `${d.document_name} (${d.document_type ?? '?'}, ${d.document_bytes ?? 0} bytes)`
                : '',
          },
          { label: 'Rejection', cell: (d) => d.reject_reason },
          { label: 'Completed', cell: (d) => when(d.completed_at) },
        ],
      })}
<h2>Accounts</h2>${accountTable(accounts.rows)}
<h2>Cards</h2>${cardTable(cards.rows)}
<h2>Topups</h2>${topupTable(topups.rows)}
<h2>What happened</h2>${await eventsAbout(deps, viewer, c.id)}`,
    );
  });

  app.get<{ Params: { id: string } }>('/issuing/accounts/:id/statement.csv', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const { id } = request.params;
    const account = isUuid(id)
      ? await db
          .selectFrom('issuing_accounts')
          .select(['id', 'partner_id', 'ledger_account_id', 'currency'])
          .where('id', '=', id)
          .executeTakeFirst()
      : undefined;
    if (!account || !ownsTenant(viewer, 'partner', account.partner_id)) throw notFound('account');
    const month = textQuery(request).month ?? deps.services.clock.now().toISOString().slice(0, 7);
    const csv = await accountStatement(
      db,
      { accountId: account.id, ledgerAccountId: account.ledger_account_id, currency: account.currency },
      month,
    );
    return sendCsv(reply, `statement-${account.id}-${month}.csv`, csv);
  });

  listRoute(app, deps, '/issuing/accounts', {
    title: 'Issuing accounts',
    read: listAccounts,
    filters: [{ name: 'customerId', label: 'Customer id' }],
    table: accountTable,
  });

  await registerIssuingCardsConsoleRoutes(app, deps);

  listRoute(app, deps, '/issuing/challenges', {
    title: '3-D Secure challenges',
    read: listChallenges,
    filters: [
      {
        name: 'status',
        label: 'Status',
        options: ['pending', 'authorized', 'declined', 'cancelled', 'timeout', 'failed'],
        labels: 'issuing.threeDs',
      },
    ],
    table: (rows, next) =>
      listView({
        caption: 'Challenges, newest first',
        rows,
        columns: [
          { label: 'Challenge', cell: (c) => c.id },
          {
            label: 'Transaction',
            cell: (c) => link(`/console/issuing/transactions/${c.transaction_id}`, c.transaction_id),
          },
          { label: 'Status', cell: (c) => status(c.status, 'issuing.threeDs') },
          { label: 'Amount', cell: (c) => money(c.amount, c.currency) },
          { label: 'Merchant', cell: (c) => c.merchant },
          { label: 'Expires', cell: (c) => when(c.expires_at) },
        ],
        nextHref: next,
      }),
  });

  listRoute(app, deps, '/issuing/topups', {
    title: 'Topups',
    read: listTopups,
    filters: [
      {
        name: 'status',
        label: 'Status',
        options: ['pending', 'confirming', 'completed', 'expired'],
        labels: 'issuing.topup',
      },
      { name: 'customerId', label: 'Customer id' },
    ],
    table: topupTable,
  });
}

function customerTable(
  rows: Awaited<ReturnType<typeof listIssuingCustomers>>['rows'],
  next: string | null = null,
) {
  return listView({
    caption: 'Customers, newest first',
    rows,
    empty: 'No customers.',
    columns: [
      { label: 'Customer', cell: (c) => link(`/console/issuing/customers/${c.id}`, c.id) },
      { label: 'Email or user id', cell: (c) => c.email ?? c.external_user_id ?? c.wallet_address },
      { label: 'Status', cell: (c) => status(c.status, 'issuing.customer') },
      { label: 'KYC', cell: (c) => status(c.kyc_status ?? 'not_started', 'issuing.kyc') },
      { label: 'Created', cell: (c) => when(c.created_at) },
    ],
    nextHref: next,
  });
}

function accountTable(rows: Awaited<ReturnType<typeof listAccounts>>['rows'], next: string | null = null) {
  return listView({
    caption: 'Accounts and their balances',
    rows,
    empty: 'No accounts.',
    columns: [
      { label: 'Account', cell: (a) => a.id },
      { label: 'Customer', cell: (a) => link(`/console/issuing/customers/${a.customer_id}`, a.customer_id) },
      { label: 'Status', cell: (a) => status(a.status, 'issuing.account') },
      { label: 'Balance', cell: (a) => money(a.posted, a.currency) },
      { label: 'Held', cell: (a) => money(a.pending_debits, a.currency) },
      {
        label: 'Ledger',
        cell: (a) => link(`/console/ledger/accounts/${a.ledger_account_id}`, a.ledger_account_id),
      },
      {
        label: 'Statement',
        cell: (a) => link(`/console/issuing/accounts/${a.id}/statement.csv`, 'This month (CSV)'),
      },
    ],
    nextHref: next,
  });
}

function topupTable(rows: Awaited<ReturnType<typeof listTopups>>['rows'], next: string | null = null) {
  return listView({
    caption: 'Topups, newest first',
    rows,
    empty: 'No topups.',
    columns: [
      { label: 'Topup', cell: (t) => t.id },
      { label: 'Customer', cell: (t) => link(`/console/issuing/customers/${t.customer_id}`, t.customer_id) },
      { label: 'Method', cell: (t) => t.method },
      { label: 'Status', cell: (t) => status(t.status, 'issuing.topup') },
      { label: 'Amount', cell: (t) => money(t.amount, t.currency) },
      { label: 'Credited', cell: (t) => (t.credited_amount ? money(t.credited_amount, t.currency) : '') },
      { label: 'Created', cell: (t) => when(t.created_at) },
    ],
    nextHref: next,
  });
}
