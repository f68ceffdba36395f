// Console › Payments: orders, transactions (capture, refund, void — each confirmed first), customers, stored
// cards and payment links; the sites (IPN URL, secret key rotation) are in payments-sites-routes.ts. Actions call the payments services the API
// calls, with the merchant's scope, so validation, ledger postings and IPNs are the same.

import type { FastifyInstance } from 'fastify';
import { sendConsolePage } from '../../platform/console/console-http.ts';
import { details, doneNotice, link, listView } from '../../platform/console/console-layout.ts';
import { h } from '../../platform/console/html-template.ts';
import {
  confirmedAction,
  eventsAbout,
  listRoute,
  textQuery,
  viewerOf,
} from '../../platform/console/route-kit.ts';
import { money, status, statusFact, term, termFact, when } from '../../platform/console/values.ts';
import { PAYMENTS_ORDER_STATUSES, PAYMENTS_TRANSACTION_STATUSES } from '../../platform/db/schema.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { ClientAmount, formatAmountIn, parseAmountField } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import { loadMerchantScope } from '../sites.ts';
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

type IdParams = { id: string };

export async function registerPaymentsConsoleRoutes(
  app: FastifyInstance,
  deps: PaymentsConsoleDeps,
): Promise<void> {
  const { db } = deps.services;
  const { eyes } = deps;
  const payments = deps.services.payments;

  listRoute(app, deps, '/payments/orders', {
    title: 'Payments orders',
    read: listOrders,
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
          { label: 'Order', cell: (o) => link(`/console/payments/orders/${o.id}`, o.id) },
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
      `Order ${o.id}`,
      h`${details([
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
      const base = `/console/payments/transactions/${t.id}`;
      const actions = [
        t.type === 'deposit' && t.status === 'in-progress' ? link(`${base}/capture`, 'Capture…') : '',
        t.type === 'deposit' && t.status === 'in-progress' ? link(`${base}/void`, 'Void…') : '',
        t.type === 'deposit' &&
        (t.status === 'complete-ok' || t.status === 'refund-ok') &&
        BigInt(t.captured_amount) > BigInt(t.refunded_amount)
          ? link(`${base}/refund`, 'Refund…')
          : '',
      ].filter((a) => a !== '');
      return sendConsolePage(
        request,
        reply,
        deps,
        `Transaction ${t.id}`,
        h`${doneNotice(textQuery(request).done)}
${actions.length ? h`<p class="inline">${actions}</p>` : ''}
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
        ['Order', link(`/console/payments/orders/${t.order_id}`, t.order_id)],
        ['Customer', customerLink(t, viewer)],
        ['Card', t.card_bin ? `${t.card_brand ?? ''} ${t.card_bin}•• •••• ${t.card_last4 ?? ''}` : null],
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
        ['Order', link(`/console/payments/orders/${t.order_id}`, t.order_id)],
        ['Customer', customerLink(t, viewer)],
        ['Created', when(t.created_at)],
      ],
)}
${t.type === 'deposit' ? h`<h2>Refunds</h2>${transactionTable(refunds.rows)}` : ''}
<h2>What happened</h2>${await eventsAbout(deps, viewer, String(t.id))}`,
      );
    },
  );

  const transactionAction = (kind: 'capture' | 'refund' | 'void') =>
    confirmedAction<IdParams>(
      deps,
      async (request, params) => {
        const t = await getTransaction(db, viewerOf(request, deps), params.id);
        const left = BigInt(t.captured_amount) - BigInt(t.refunded_amount);
        if (kind === 'capture') {
          return {
            title: `Capture transaction ${t.id}`,
            explain: h`<p>Captures up to the authorized ${money(t.amount, t.currency)}; what is not captured is released.</p>`,
            fields: [
              {
                name: 'amount',
                label: `Amount (${t.currency})`,
                value: formatAmountIn(BigInt(t.amount), t.currency),
                required: true,
                inputmode: 'decimal',
              },
            ],
            submit: 'Capture',
          };
        }
        if (kind === 'void') {
          return {
            title: `Void transaction ${t.id}`,
            explain: h`<p>Releases the authorization of ${money(t.amount, t.currency)}: nothing will be charged.</p>`,
            fields: [{ name: 'reason', label: 'Reason (optional)' }],
            submit: 'Void the authorization',
            danger: true,
          };
        }
        return {
          title: `Refund transaction ${t.id}`,
          explain: h`<p>${money(left, t.currency)} of ${money(t.captured_amount, t.currency)} can still be refunded. The money goes
back to the buyer’s card and the site’s balance is debited.</p>`,
          fields: [
            {
              name: 'amount',
              label: `Amount (${t.currency})`,
              value: formatAmountIn(left, t.currency),
              required: true,
              inputmode: 'decimal',
            },
            { name: 'reason', label: 'Reason (optional)' },
          ],
          submit: 'Refund',
          danger: true,
        };
      },
      async (request, params, body) => {
        const viewer = viewerOf(request, deps);
        const t = await getTransaction(db, viewer, params.id);
        const merchant = await loadMerchantScope(db, t.merchant_id);
        const base = `/console/payments/transactions/${t.id}`;
        if (kind === 'capture') {
          await payments.transactions.capture(merchant, t.id, ClientAmount.read(body.amount ?? ''));
          return `${base}?done=captured`;
        }
        if (kind === 'void') {
          if (t.status !== 'in-progress')
            throw new DomainError('invalid_state', `a ${t.status} transaction cannot be voided`);
          await payments.transactions.refund(merchant, t.id, {
            ...(body.reason ? { reason: body.reason } : {}),
          });
          return `${base}?done=voided`;
        }
        if (t.status === 'in-progress') {
          throw new DomainError('invalid_state', 'an authorization not captured yet is voided, not refunded');
        }
        // Above the merchant's threshold the refund waits for a second person (approvals-routes.ts).
        const asked = {
          merchantId: String(t.merchant_id),
          transactionId: String(t.id),
          amount: body.amount ?? '',
        };
        const asset = findAsset(t.currency);
        if (!asset)
          throw new DomainError('invalid_state', `${t.currency} is not a currency this build knows`);
        const amount = parseAmountField(body.amount ?? '', asset);
        const done = await eyes.runOrAsk(request, {
          tenant: { kind: 'merchant', id: String(t.merchant_id) },
          action: 'refund',
          objectId: String(t.id),
          money: { currency: t.currency, amount },
          summary: `refund ${money(amount, t.currency)} of transaction ${t.id}${body.reason ? ` (${body.reason})` : ''}`,
          payload: { ...asked, ...(body.reason ? { reason: body.reason } : {}) },
        });
        return done.asked ? done.href : `${done.href}?done=refunded`;
      },
    );
  for (const kind of ['capture', 'refund', 'void'] as const) {
    const action = transactionAction(kind);
    app.get(`/payments/transactions/:id/${kind}`, action.get);
    app.post(`/payments/transactions/:id/${kind}`, action.post);
  }

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
          { label: 'Customer', cell: (c) => link(`/console/payments/customers/${c.id}`, c.id) },
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
        ['Site', link(`/console/payments/sites/${c.site_id}`, c.site_id)],
        ['Deleted', when(c.deleted_at)],
        ['Created', when(c.created_at)],
      ])}<h2>Stored cards</h2>${storedCardTable(cards.rows)}<h2>Orders</h2>${listView({
        caption: 'Orders of this customer',
        rows: orders.rows,
        columns: [
          { label: 'Order', cell: (o) => link(`/console/payments/orders/${o.id}`, o.id) },
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
      { label: 'Transaction', cell: (t) => link(`/console/payments/transactions/${t.id}`, t.id) },
      { label: 'Created', cell: (t) => when(t.created_at) },
      { label: 'Order', cell: (t) => link(`/console/payments/orders/${t.order_id}`, t.order_id) },
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
      { label: 'Customer', cell: (k) => link(`/console/payments/customers/${k.customer_id}`, k.customer_id) },
      { label: 'Number', cell: (k) => `${k.brand} ${k.bin.slice(0, 6)}•• •••• ${k.last4}` },
      { label: 'Expiry', cell: (k) => `${String(k.expiry_month).padStart(2, '0')}/${k.expiry_year}` },
      { label: 'Status', cell: (k) => status(k.status, 'payments.storedCard') },
      { label: 'Saved', cell: (k) => when(k.created_at) },
    ],
    nextHref: next,
  });
}
