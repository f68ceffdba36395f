// Console › Issuing › Cards: the cards (masked; freeze and unfreeze through the cards service, as the API
// does) and their transactions with their 3-D Secure challenges. Each page opens with its amount or card,
// its status and the actions the viewer's role may take; a card is named by its label and last four.
import type { FastifyInstance } from 'fastify';
import { sendConsolePage } from '../../platform/console/console-http.ts';
import { details, doneNotice, link, listView, objectHead } from '../../platform/console/console-layout.ts';
import { h } from '../../platform/console/html-template.ts';
import {
  confirmedAction,
  eventsAbout,
  listRoute,
  textQuery,
  viewerOf,
} from '../../platform/console/route-kit.ts';
import { idLink, money, status, statusFact, when } from '../../platform/console/values.ts';
import type { IssuingConsoleDeps } from './console-deps.ts';
import {
  CARD_STATUSES,
  getCardTransaction,
  getIssuedCard,
  listCardTransactions,
  listIssuedCards,
} from './issuing-reads.ts';

type IdParams = { id: string };

export async function registerIssuingCardsConsoleRoutes(
  app: FastifyInstance,
  deps: IssuingConsoleDeps,
): Promise<void> {
  const { db } = deps.services;

  listRoute(app, deps, '/issuing/cards', {
    title: 'Issued cards',
    read: listIssuedCards,
    filters: [
      { name: 'status', label: 'Status', options: CARD_STATUSES, labels: 'issuing.card' },
      { name: 'customerId', label: 'Customer id' },
    ],
    table: cardTable,
  });

  app.get<{ Params: IdParams }>('/issuing/cards/:id', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const k = await getIssuedCard(db, viewer, request.params.id);
    const transactions = await listCardTransactions(db, viewer, { cardId: k.id });
    const change = k.status === 'active' ? 'freeze' : k.status === 'frozen' ? 'unfreeze' : undefined;
    return sendConsolePage(
      request,
      reply,
      deps,
      { tab: `Card ${k.label ?? k.id}`, heading: `Card ${cardName(k.label, k.last4)}` },
      h`${doneNotice(textQuery(request).done)}
${objectHead(viewer, {
  amount: `${k.label ? `${k.label} ` : ''}•••• ${k.last4}`,
  status: status(k.status, 'issuing.card'),
  id: k.id,
  actions: change
    ? [
        {
          href: `/console/issuing/cards/${k.id}/${change}`,
          label: change === 'freeze' ? 'Freeze…' : 'Unfreeze…',
          route: `/issuing/cards/:id/${change}`,
        },
      ]
    : [],
})}${details([
  ['Status', statusFact(k.status, 'issuing.card')],
  ['Number', cardNumber(k)],
  ['Expiry', `${String(k.expiry_month).padStart(2, '0')}/${k.expiry_year}`],
  ['Kind', k.is_virtual ? 'virtual' : 'physical'],
  ['Card product', h`<code>${k.product_id}</code>`],
  ['Customer', link(`/console/issuing/customers/${k.customer_id}`, k.customer_id)],
  ['Partner', link(`/console/issuing/partners/${k.partner_id}`, k.partner_name ?? k.partner_id)],
  ['Account', idLink(k.account_id)],
  ['Created', when(k.created_at)],
])}<h2>Transactions</h2>${cardTransactionTable(transactions.rows)}<h2>What happened</h2>${await eventsAbout(deps, viewer, k.id)}`,
    );
  });

  for (const change of ['freeze', 'unfreeze'] as const) {
    const action = confirmedAction<IdParams>(
      deps,
      async (request, params) => {
        const k = await getIssuedCard(db, viewerOf(request, deps), params.id);
        return {
          title: `${change === 'freeze' ? 'Freeze' : 'Unfreeze'} card ${k.label ?? k.id}`,
          explain:
            change === 'freeze'
              ? h`<p>New authorizations on this card are declined until it is unfrozen. The cardholder is told by webhook.</p>`
              : h`<p>The card authorizes payments again.</p>`,
          fields: [],
          submit: change === 'freeze' ? 'Freeze the card' : 'Unfreeze the card',
          ...(change === 'freeze' ? { danger: true } : {}),
        };
      },
      async (request, params) => {
        const k = await getIssuedCard(db, viewerOf(request, deps), params.id);
        const customer = { customerId: k.customer_id, partnerId: k.partner_id };
        await deps.services.issuing.cards[change](customer, k.id);
        return `/console/issuing/cards/${k.id}?done=${change === 'freeze' ? 'frozen' : 'unfrozen'}`;
      },
    );
    app.get(`/issuing/cards/:id/${change}`, action.get);
    app.post(`/issuing/cards/:id/${change}`, action.post);
  }

  listRoute(app, deps, '/issuing/transactions', {
    title: 'Card transactions',
    read: listCardTransactions,
    amounts: true,
    filters: [
      {
        name: 'status',
        label: 'Status',
        options: ['pending_3ds', 'authorized', 'declined', 'settled', 'reversed', 'expired'],
        labels: 'issuing.transaction',
      },
      { name: 'cardId', label: 'Card id' },
    ],
    table: cardTransactionTable,
  });

  app.get<{ Params: IdParams }>('/issuing/transactions/:id', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const t = await getCardTransaction(db, viewer, request.params.id);
    return sendConsolePage(
      request,
      reply,
      deps,
      { tab: `Card transaction ${t.id}`, heading: `Card payment at ${t.merchant}` },
      h`${objectHead(viewer, {
        amount: money(t.amount, t.currency),
        status: status(t.status, 'issuing.transaction'),
        id: t.id,
      })}${details([
        ['Status', statusFact(t.status, 'issuing.transaction')],
        ['Type', t.type],
        ['Amount', money(t.amount, t.currency)],
        ['Settled', t.settled_amount ? money(t.settled_amount, t.currency) : null],
        ['Merchant', t.merchant],
        ['Decline', statusFact(t.decline_reason, 'issuing.decline')],
        [
          '3-D Secure challenge',
          t.challenge_status ? statusFact(t.challenge_status, 'issuing.threeDs') : null,
        ],
        ['Card', link(`/console/issuing/cards/${t.card_id}`, cardName(t.card_label, t.card_last4))],
        ['Customer', link(`/console/issuing/customers/${t.customer_id}`, t.customer_id)],
        ['Created', when(t.created_at)],
      ])}<h2>What happened</h2>${await eventsAbout(deps, viewer, t.id)}`,
    );
  });
}

/** A card as its holder knows it: its label and last four digits ("Travel •••• 4242") */
const cardName = (label: string | null, last4: string | null) =>
  `${label ? `${label} ` : ''}•••• ${last4 ?? ''}`;

export function cardTable(
  rows: Awaited<ReturnType<typeof listIssuedCards>>['rows'],
  next: string | null = null,
) {
  return listView({
    caption: 'Cards (masked)',
    rows,
    empty: 'No cards.',
    columns: [
      { label: 'Card', cell: (k) => link(`/console/issuing/cards/${k.id}`, cardName(k.label, k.last4)) },
      { label: 'Number', cell: (k) => cardNumber(k) },
      { label: 'Status', cell: (k) => status(k.status, 'issuing.card') },
      { label: 'Customer', cell: (k) => link(`/console/issuing/customers/${k.customer_id}`, k.customer_id) },
      { label: 'Created', cell: (k) => when(k.created_at) },
    ],
    nextHref: next,
  });
}

function cardTransactionTable(
  rows: Awaited<ReturnType<typeof listCardTransactions>>['rows'],
  next: string | null = null,
) {
  return listView({
    caption: 'Card transactions, newest first',
    rows,
    empty: 'No transactions.',
    columns: [
      { label: 'Transaction', cell: (t) => link(`/console/issuing/transactions/${t.id}`, t.id) },
      { label: 'Created', cell: (t) => when(t.created_at) },
      {
        label: 'Card',
        cell: (t) => link(`/console/issuing/cards/${t.card_id}`, cardName(t.card_label, t.card_last4)),
      },
      { label: 'Merchant', cell: (t) => t.merchant },
      { label: 'Status', cell: (t) => status(t.status, 'issuing.transaction') },
      { label: 'Amount', cell: (t) => money(t.amount, t.currency) },
      { label: '3-D Secure', cell: (t) => status(t.challenge_status, 'issuing.threeDs') },
    ],
    nextHref: next,
  });
}

/** A card's number as the console shows it: the BIN and the last four, the rest masked (PCI DSS display rule). */
export const cardNumber = (k: { bin: string; last4: string }) => `${k.bin}•• •••• ${k.last4}`;
