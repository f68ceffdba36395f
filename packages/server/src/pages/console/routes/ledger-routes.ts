// Console › Ledger: accounts with their balances per owner and asset; an account's entries, each with the
// business operation that posted it and a link that opens that object.

import type { FastifyInstance } from 'fastify';
import { sendConsolePage } from '../../../platform/console/console-http.ts';
import { details, link, listView } from '../../../platform/console/console-layout.ts';
import { h } from '../../../platform/console/html-template.ts';
import { listRoute, nextHref, textQuery, viewerOf } from '../../../platform/console/route-kit.ts';
import { idLink, money, status, term, when } from '../../../platform/console/values.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';
import { entriesOf, getLedgerAccount, listLedgerAccounts, objectOfOperation } from '../reads/ledger-reads.ts';

/** Owners that are objects of ours open through the search; the platform's own accounts are just named. */
const ownerOf = (a: { owner_type: string; owner_id: string }) =>
  ['payments_site', 'crypto_store', 'issuing_account'].includes(a.owner_type)
    ? h`${a.owner_type} ${idLink(a.owner_id)}`
    : `${a.owner_type} ${a.owner_id}`;

export async function registerLedgerConsoleRoutes(
  app: FastifyInstance,
  deps: PlatformConsoleDeps,
): Promise<void> {
  const { db } = deps.services;

  listRoute(app, deps, '/ledger/accounts', {
    title: 'Ledger accounts',
    read: listLedgerAccounts,
    filters: [
      { name: 'ownerType', label: 'Owner type' },
      { name: 'ownerId', label: 'Owner id' },
      { name: 'asset', label: 'Asset' },
    ],
    table: (rows, next) =>
      listView({
        caption: 'Accounts and balances',
        rows,
        columns: [
          { label: 'Account', cell: (a) => link(`/console/ledger/accounts/${a.id}`, a.id) },
          { label: 'Owner', cell: ownerOf },
          { label: 'Purpose', cell: (a) => term(a.purpose) },
          { label: 'Posted', cell: (a) => money(a.posted, a.asset) },
          { label: 'Pending debits', cell: (a) => money(a.pending_debits, a.asset) },
          { label: 'Pending credits', cell: (a) => money(a.pending_credits, a.asset) },
        ],
        nextHref: next,
      }),
  });

  app.get<{ Params: { id: string } }>('/ledger/accounts/:id', async (request, reply) => {
    const a = await getLedgerAccount(db, viewerOf(request, deps), request.params.id);
    const f = textQuery(request);
    const entries = await entriesOf(db, a.id, f.cursor);
    return sendConsolePage(
      request,
      reply,
      deps,
      `Ledger account ${a.id}`,
      h`${details([
        ['Owner', ownerOf(a)],
        ['Asset', a.asset],
        ['Purpose', a.purpose],
        ['Bounded (never below zero)', a.is_bounded ? 'yes' : 'no'],
        ['Posted balance', money(a.posted, a.asset)],
        ['Pending debits', money(a.pending_debits, a.asset)],
        ['Pending credits', money(a.pending_credits, a.asset)],
        ['Opened', when(a.created_at)],
      ])}<h2>Entries</h2>${listView({
        caption: 'Entries, newest first (a credit is positive)',
        rows: entries.rows,
        empty: 'No entries.',
        columns: [
          { label: 'When', cell: (e) => when(e.created_at) },
          { label: 'Amount', cell: (e) => money(e.amount, a.asset) },
          { label: 'Kind', cell: (e) => term(e.kind) },
          { label: 'Status', cell: (e) => status(e.status, 'ledger.transaction') },
          { label: 'Operation', cell: (e) => e.operation_id },
          { label: 'Object', cell: (e) => idLink(objectOfOperation(e.operation_id)) },
        ],
        nextHref: nextHref(`/console/ledger/accounts/${a.id}`, {}, entries.nextCursor),
      })}`,
    );
  });
}
