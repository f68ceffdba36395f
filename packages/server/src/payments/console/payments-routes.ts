// Console › Payments: orders, transactions (their actions and card in transaction-actions.ts), customers,
// stored cards and payment links; the sites (IPN URL, secret key rotation) are in sites-routes.ts. Actions call the payments services the API
// calls, with the merchant's scope, so validation, ledger postings and IPNs are the same.

import type { FastifyInstance } from 'fastify';
import { sendConsolePage } from '../../platform/console/console-http.ts';
import { details, doneNotice, link, listView, objectHead } from '../../platform/console/console-layout.ts';
import { h } from '../../platform/console/html-template.ts';
import { labelOf } from '../../platform/console/labels.ts';
import { eventsAbout, listRoute, textQuery, viewerOf } from '../../platform/console/route-kit.ts';
import {
  money,
  objectLink,
  status,
  statusFact,
  term,
  termFact,
  when,
} from '../../platform/console/values.ts';
import { PAYMENTS_ORDER_STATUSES, PAYMENTS_TRANSACTION_STATUSES } from '../../platform/db/schema.ts';
import type { PaymentsConsoleDeps } from './console-deps.ts';
import { customerLink } from './customer-link.ts';
import {
  getCustomer,
  getOrder,
  getTransaction,
  listCustomers,
  listLinks,
  listOrders,
  listStoredCards,
  listTransactions,
} from './payments-reads.ts';
import { registerPaymentsSitesConsoleRoutes } from './sites-routes.ts';
import { cardPanel, registerTransactionActions, transactionActions } from './transaction-actions.ts';

type IdParams = { id: string };

export async function registerPaymentsConsoleRoutes(
  app: FastifyInstance,
  deps: PaymentsConsoleDeps,
): Promise<void> {
  const { db } = deps.services;
  const payments = deps.services.payments;

  listRoute(app, deps, '/payments/orders', {
    title: 'Payments orders',
    read: listOrders,
    amounts: true,
    filters: [
      { name: 'status', label: 'Status', options: PAYMENTS_ORDER_STATUSES, labels: 'payments.order' },
      { name: 'siteId', label: 'Site id' },
      { name: 'customerId', label: 'Customer id' },
      { name: 'currency', label: 'Currency' },
    ],
    table: (rows, next, viewer) =>
      listView({
        caption: 'Orders, newest first',
        rows,
        columns: [
          { label: 'Order', cell: (o) => objectLink('order', `/console/payments/orders/${o.id}`, o.id) },
          { label: 'Created', cell: (o) => when(o.created_at) },
          { label: 'Site', cell: (o) => o.site_name },
          { label: 'Customer', cell: (o) => customerLink(o, viewer) },
          { label: 'Type', cell: (o) => term(o.order_type, 'payments.orderType') },
          { label: 'Status', cell: (o) => status(o.status, 'payments.order') },
          { label: 'Amount', cell: (o) => money(o.amount, o.currency) },
          { label: 'Description', cell: (o) => o.description },
        ],
        nextHref: next,
      }),
  });

  app.get<{ Params: IdParams }>('/payments/orders/:id', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const o = await getOrder(db, viewer, request.params.id);
    const transactions = await listTransactions(db, viewer, { orderId: String(o.id) });
    return sendConsolePage(
      request,
      reply,
      deps,
      { tab: `Order ${o.id}`, heading: o.description ? `Order — ${o.description}` : 'Order' },
      h`${objectHead(viewer, {
        amount: money(o.amount, o.currency),
        status: status(o.status, 'payments.order'),
        id: String(o.id),
        // The order's payment acts on its newest deposit (a recurring order's latest bill)
        actions: ((d) => (d ? transactionActions(d) : []))(
          transactions.rows.find((t) => t.type === 'deposit'),
        ),
      })}${details([
        ['Status', statusFact(o.status, 'payments.order')],
        ['Amount', money(o.amount, o.currency)],
        ['Type', h`${termFact(o.order_type, 'payments.orderType')} (${o.card_transaction_mode})`],
        ['Site', link(`/console/payments/sites/${o.site_id}`, `${o.site_name} (${o.site_id})`)],
        ['Customer', customerLink(o, viewer)],
        ['Description', o.description],
        ['Merchant’s order id', o.external_order_id],
        ['Back URL', o.back_url],
        ['Invoice email', o.invoice_email],
        [
          'Recurring',
          o.interval_type
            ? `every ${o.interval_value} ${o.interval_type}(s); next bill ${o.next_bill_at?.toISOString() ?? '—'}`
            : 'no',
        ],
        ['Payment link', o.payment_link_hash],
        ['Cancel reason', o.cancel_reason],
        ['Created', when(o.created_at)],
      ])}<h2>Transactions</h2>${transactionTable(transactions.rows)}<h2>What happened</h2>${await eventsAbout(deps, viewer, String(o.id))}`,
    );
  });

  listRoute(app, deps, '/payments/transactions', {
    title: 'Payments transactions',
    read: listTransactions,
    amounts: true,
    filters: [
      {
        name: 'status',
        label: 'Status',
        options: PAYMENTS_TRANSACTION_STATUSES,
        labels: 'payments.transaction',
      },
      {
        name: 'type',
        label: 'Type',
        options: ['deposit', 'refund', 'credit'],
        labels: 'payments.transactionType',
      },
      { name: 'orderId', label: 'Order id' },
    ],
    table: transactionTable,
  });

  app.get<{ Params: IdParams; Querystring: { done?: string } }>(
    '/payments/transactions/:id',
    async (request, reply) => {
      const viewer = viewerOf(request, deps);
      const t = await getTransaction(db, viewer, request.params.id);
      const refunds = await listTransactions(db, viewer, { parentId: String(t.id) });
      return sendConsolePage(
        request,
        reply,
        deps,
        { tab: `Transaction ${t.id}`, heading: labelOf('payments.transactionType', t.type).label },
        h`${doneNotice(textQuery(request).done)}
${objectHead(viewer, {
  amount: money(t.amount, t.currency),
  status: status(t.status, 'payments.transaction'),
  id: String(t.id),
  actions: transactionActions(t),
})}
${details(
  // A deposit shows what was authorized, captured and refunded; a refund, chargeback or representment
  // is money going one way for one reason: its amount, what it is of, and why.
  t.type === 'deposit'
    ? [
        ['Status', statusFact(t.status, 'payments.transaction')],
        ['Type', h`${termFact(t.type, 'payments.transactionType')} (${t.mode})`],
        ['Amount', money(t.amount, t.currency)],
        ['Captured', money(t.captured_amount, t.currency)],
        ['Refunded', money(t.refunded_amount, t.currency)],
        ['Order', objectLink('order', `/console/payments/orders/${t.order_id}`, t.order_id)],
        ['Customer', customerLink(t, viewer)],
        ['Decline', t.decline_reason ? statusFact(t.decline_reason, 'payments.decline') : t.error_message],
        ['Authorization expires', when(t.auth_expires_at)],
        ['Created', when(t.created_at)],
      ]
    : [
        ['Status', statusFact(t.status, 'payments.transaction')],
        ['Type', termFact(t.type, 'payments.transactionType')],
        ['Amount', money(t.amount, t.currency)],
        [
          `${t.type[0]?.toUpperCase()}${t.type.slice(1)} of`,
          t.parent_id
            ? link(`/console/payments/transactions/${t.parent_id}`, `transaction ${t.parent_id}`)
            : null,
        ],
        ['Reason', t.reason],
        ['Order', objectLink('order', `/console/payments/orders/${t.order_id}`, t.order_id)],
        ['Customer', customerLink(t, viewer)],
        ['Created', when(t.created_at)],
      ],
)}
${t.type === 'deposit' ? cardPanel(t, viewer, payments.cards) : ''}
${t.type === 'deposit' ? h`<h2>Refunds</h2>${transactionTable(refunds.rows)}` : ''}
<h2>What happened</h2>${await eventsAbout(deps, viewer, String(t.id))}`,
      );
    },
  );

  registerTransactionActions(app, deps);

  listRoute(app, deps, '/payments/customers', {
    title: 'Payments customers',
    read: listCustomers,
    filters: [
      { name: 'email', label: 'Email contains' },
      { name: 'siteId', label: 'Site id' },
    ],
    table: (rows, next) =>
      listView({
        caption: 'Customers, newest first',
        rows,
        columns: [
          {
            label: 'Customer',
            cell: (c) => objectLink('customer', `/console/payments/customers/${c.id}`, c.id),
          },
          { label: 'Identifier', cell: (c) => c.identifier },
          { label: 'Email', cell: (c) => c.email },
          { label: 'Name', cell: (c) => [c.first_name, c.last_name].filter(Boolean).join(' ') },
          { label: 'Site', cell: (c) => c.site_id },
          { label: 'Created', cell: (c) => when(c.created_at) },
        ],
        nextHref: next,
      }),
  });

  app.get<{ Params: IdParams }>('/payments/customers/:id', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const c = await getCustomer(db, viewer, request.params.id);
    const orders = await listOrders(db, viewer, { customerId: String(c.id) });
    const cards = await listStoredCards(db, viewer, { customerId: String(c.id) });
    return sendConsolePage(
      request,
      reply,
      deps,
      `Customer ${c.id}`,
      h`${details([
        ['Identifier', c.identifier],
        ['Email', c.email],
        ['Name', [c.first_name, c.last_name].filter(Boolean).join(' ') || null],
        ['Country / city', [c.country, c.city].filter(Boolean).join(' / ') || null],
        ['Site', objectLink('site', `/console/payments/sites/${c.site_id}`, c.site_id)],
        ['Deleted', when(c.deleted_at)],
        ['Created', when(c.created_at)],
      ])}<h2>Stored cards</h2>${storedCardTable(cards.rows)}<h2>Orders</h2>${listView({
        caption: 'Orders of this customer',
        rows: orders.rows,
        columns: [
          { label: 'Order', cell: (o) => objectLink('order', `/console/payments/orders/${o.id}`, o.id) },
          { label: 'Status', cell: (o) => status(o.status, 'payments.order') },
          { label: 'Amount', cell: (o) => money(o.amount, o.currency) },
          { label: 'Created', cell: (o) => when(o.created_at) },
        ],
      })}`,
    );
  });

  listRoute(app, deps, '/payments/cards', {
    title: 'Stored cards',
    read: listStoredCards,
    filters: [{ name: 'customerId', label: 'Customer id' }],
    table: storedCardTable,
  });

  listRoute(app, deps, '/payments/links', {
    title: 'Payment links',
    read: listLinks,
    table: (rows, next) =>
      listView({
        caption: 'Payment links, newest first',
        rows,
        columns: [
          { label: 'Link', cell: (l) => h`<a href="/pay/${l.hash}">${l.hash}</a>` },
          { label: 'Site', cell: (l) => l.site_id },
          { label: 'Type', cell: (l) => l.order_type },
          { label: 'Amount', cell: (l) => money(l.amount, l.currency) },
          { label: 'Description', cell: (l) => l.description },
          { label: 'Active', cell: (l) => (l.active ? 'yes' : 'no') },
          { label: 'Expires', cell: (l) => when(l.expires_at) },
          { label: 'Created', cell: (l) => when(l.created_at) },
        ],
        nextHref: next,
      }),
  });

  await registerPaymentsSitesConsoleRoutes(app, deps);
}

type TransactionRows = Awaited<ReturnType<typeof listTransactions>>['rows'];

function transactionTable(rows: TransactionRows, next: string | null = null) {
  return listView({
    caption: 'Transactions, newest first',
    rows,
    empty: 'No transactions.',
    columns: [
      {
        label: 'Transaction',
        cell: (t) => objectLink('transaction', `/console/payments/transactions/${t.id}`, t.id),
      },
      { label: 'Created', cell: (t) => when(t.created_at) },
      {
        label: 'Order',
        cell: (t) => objectLink('order', `/console/payments/orders/${t.order_id}`, t.order_id),
      },
      { label: 'Type', cell: (t) => term(t.type, 'payments.transactionType') },
      { label: 'Status', cell: (t) => status(t.status, 'payments.transaction') },
      { label: 'Amount', cell: (t) => money(t.amount, t.currency) },
      { label: 'Refunded', cell: (t) => money(t.refunded_amount, t.currency) },
      { label: 'Card', cell: (t) => (t.card_last4 ? `•••• ${t.card_last4}` : '') },
    ],
    nextHref: next,
  });
}

function storedCardTable(
  rows: Awaited<ReturnType<typeof listStoredCards>>['rows'],
  next: string | null = null,
) {
  return listView({
    caption: 'Stored cards (masked)',
    rows,
    empty: 'No stored cards.',
    columns: [
      { label: 'Card', cell: (k) => k.id },
      {
        label: 'Customer',
        cell: (k) => objectLink('customer', `/console/payments/customers/${k.customer_id}`, k.customer_id),
      },
      { label: 'Number', cell: (k) => `${k.brand} ${k.bin.slice(0, 6)}•• •••• ${k.last4}` },
      { label: 'Expiry', cell: (k) => `${String(k.expiry_month).padStart(2, '0')}/${k.expiry_year}` },
      { label: 'Status', cell: (k) => status(k.status, 'payments.storedCard') },
      { label: 'Saved', cell: (k) => when(k.created_at) },
    ],
    nextHref: next,
  });
}
