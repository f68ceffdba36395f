// Console › Money out (docs/payouts.md, Console): balances with their bank account and a "pay out now"
// behind a confirmation, payouts with the balance transactions each pays and its settlement report, the
// reports (balance by day; revenue and the bank's files for the operator). Everything goes through the
// same services as the APIs.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  bicField,
  holderNameField,
  ibanField,
  maskIban,
} from '../../../platform/bank-accounts/bank-accounts.ts';
import { contextOf, sendConsolePage } from '../../../platform/console/console-http.ts';
import {
  details,
  doneNotice,
  filterForm,
  link,
  listView,
  objectHead,
  postForm,
} from '../../../platform/console/console-layout.ts';
import { h } from '../../../platform/console/html-template.ts';
import {
  confirmedAction,
  eventsAbout,
  fieldOf,
  listRoute,
  nextHref,
  textQuery,
  viewerOf,
} from '../../../platform/console/route-kit.ts';
import { money, status, statusFact, term, when } from '../../../platform/console/values.ts';
import { DomainError } from '../../../platform/errors/domain-error.ts';
import { sendCsv } from '../../../platform/http/csv-reply.ts';
import { formatAmount, formatAmountIn, parseAmountField } from '../../../platform/money/amount.ts';
import { findAsset } from '../../../platform/money/assets.ts';
import { balancesOf } from '../../../platform/payouts/balance-transactions.ts';
import {
  balanceByDay,
  reportDay,
  revenueByDay,
  settlementReport,
} from '../../../platform/payouts/reports.ts';
import { parseOwnerKey } from '../../../platform/payouts/terms.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';
import {
  getPayout,
  listPayouts,
  ownerFor,
  ownerNames,
  ownersOf,
  PAYOUT_STATUSES,
  payoutItems,
} from '../reads/payouts-reads.ts';
import { fourEyes, tenantOfOwner } from './approvals-routes.ts';
import { reconcileSection, registerReconcileRoute } from './reconcile-section.ts';

export async function registerPayoutsConsoleRoutes(
  app: FastifyInstance,
  deps: PlatformConsoleDeps,
): Promise<void> {
  const { db, ledger, clock, bankAccounts, approvals } = deps.services;
  const eyes = fourEyes(deps);

  app.get('/money/balances', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const f = textQuery(request);
    const owners = await ownersOf(db, viewer);
    const shown = owners === 'all' ? (f.tenant ? [await ownerFor(db, viewer, f.tenant)] : []) : owners;
    const rows = [];
    const names = await ownerNames(db, shown);
    for (const key of shown) {
      const owner = parseOwnerKey(key);
      const account = await bankAccounts.get(db, owner).catch(() => undefined);
      for (const b of await balancesOf(db, ledger, owner, clock.now())) rows.push({ key, account, ...b });
    }
    const content = h`${doneNotice(f.done)}${
      owners === 'all'
        ? filterForm(
            '/console/money/balances',
            [{ name: 'tenant', label: 'Site or store (site:ID, store:ID)' }],
            f,
          )
        : ''
    }${listView({
      caption: 'Balances: available now, pending the settlement delay, held in reserve',
      rows,
      empty: owners === 'all' && !f.tenant ? 'Name a site or store.' : 'No money yet.',
      columns: [
        { label: 'Tenant', cell: (r) => tenantOf(r.key, names.get(r.key)) },
        { label: 'Currency', cell: (r) => r.currency },
        { label: 'Available', cell: (r) => money(r.available, r.currency) },
        { label: 'Pending', cell: (r) => money(r.pending, r.currency) },
        { label: 'Reserved', cell: (r) => money(r.reserved, r.currency) },
        {
          label: 'Bank account',
          cell: (r) =>
            h`${r.account ? `${r.account.iban} (${r.account.holderName})` : 'none set'} ${link(
              `/console/money/bank-accounts/${encodeURIComponent(r.key)}`,
              'Change…',
            )}`,
        },
        {
          label: 'Pay out',
          cell: (r) =>
            r.available > 0n && r.account
              ? link(
                  `/console/money/payouts/new?tenant=${encodeURIComponent(r.key)}&currency=${r.currency}`,
                  'Pay out now…',
                )
              : '—',
        },
      ],
    })}`;
    return sendConsolePage(request, reply, deps, 'Balances', content);
  });

  const payNow = confirmedAction<Record<string, never>>(
    deps,
    async (request) => {
      const q = { ...textQuery(request), ...((request.body ?? {}) as Record<string, string>) };
      const key = await ownerFor(db, viewerOf(request, deps), q.tenant ?? '');
      const currency = (q.currency ?? '').toUpperCase();
      const owner = parseOwnerKey(key);
      const balance = (await balancesOf(db, ledger, owner, clock.now())).find((b) => b.currency === currency);
      const account = await bankAccounts.get(db, owner);
      const available = balance ? formatAmountIn(balance.available, currency) : '0.00';
      return {
        title: `Pay out ${key}`,
        explain: h`<p>Pays ${available} ${currency} available to ${account.iban} (${account.holderName}). Leave the amount empty to pay everything available, itemized in the payout’s report.</p>`,
        fields: [
          { name: 'tenant', label: 'Tenant', type: 'hidden', value: key },
          { name: 'currency', label: 'Currency', type: 'hidden', value: currency },
          { name: 'amount', label: `Amount (${currency}, at most ${available})`, inputmode: 'decimal' },
        ],
        submit: 'Pay out now',
        danger: true,
      };
    },
    async (request, _params, body) => {
      const key = await ownerFor(db, viewerOf(request, deps), body.tenant ?? '');
      const currency = (body.currency ?? '').toUpperCase();
      const asset = findAsset(currency);
      if (!asset) throw new DomainError('validation_failed', 'not a known currency', { field: 'currency' });
      const given = body.amount?.trim();
      // Four eyes judge the amount that will go out: "everything available" is what is available now.
      const available = (await balancesOf(db, ledger, parseOwnerKey(key), clock.now())).find(
        (b) => b.currency === currency,
      )?.available;
      const amount = given ? parseAmountField(given, asset) : (available ?? 0n);
      const tenant = await tenantOfOwner(db, key);
      const ask = { tenant, action: 'payout', objectId: key, money: { currency, amount } } as const;
      if (!(await approvals.needed(db, tenant, 'payout', ask.money))) {
        return eyes.perform.payout({ owner: key, currency, ...(given ? { amount: given } : {}) });
      }
      // The amount is fixed while it waits: the second person approves what they see.
      return eyes.ask(request, {
        ...ask,
        summary: `pay out ${money(amount, currency)} of ${key}`,
        payload: { owner: key, currency, amount: formatAmount(amount, asset) },
      });
    },
  );
  app.get('/money/payouts/new', payNow.get);
  app.post('/money/payouts/new', payNow.post);

  // The account payouts go to; under four eyes when the tenant's policy says so.
  const changeAccount = confirmedAction<{ tenant: string }>(
    deps,
    async (request, params) => {
      const key = await ownerFor(db, viewerOf(request, deps), params.tenant);
      const account = await bankAccounts.get(db, parseOwnerKey(key)).catch(() => undefined);
      return {
        title: `Bank account of ${key}`,
        explain: h`<p>Payouts of ${key} go to ${account ? `${account.iban} (${account.holderName})` : 'no account yet'}. A new account takes the next payout.</p>`,
        fields: [
          { name: 'iban', label: 'IBAN', required: true, autocomplete: 'off' },
          { name: 'bic', label: 'BIC (optional)', autocomplete: 'off' },
          { name: 'holderName', label: 'Account holder', required: true, value: account?.holderName ?? '' },
        ],
        submit: 'Change the bank account',
        danger: true,
      };
    },
    async (request, params, body) => {
      const key = await ownerFor(db, viewerOf(request, deps), params.tenant);
      const input = {
        iban: fieldOf(ibanField, body, 'iban'),
        bic: body.bic?.trim() ? fieldOf(bicField, body, 'bic') : undefined,
        holderName: fieldOf(holderNameField, body, 'holderName'),
      };
      const done = await eyes.runOrAsk(request, {
        tenant: await tenantOfOwner(db, key),
        action: 'bankAccountChange',
        objectId: key,
        summary: `pay ${key} out to ${maskIban(input.iban)} (${input.holderName}) from now on`,
        payload: { owner: key, ...input, bic: input.bic ?? '' },
      });
      return done.href;
    },
  );
  app.get('/money/bank-accounts/:tenant', changeAccount.get);
  app.post('/money/bank-accounts/:tenant', changeAccount.post);

  listRoute(app, deps, '/money/payouts', {
    title: 'Payouts',
    read: listPayouts,
    amounts: true,
    filters: [
      { name: 'status', label: 'Status', options: PAYOUT_STATUSES, labels: 'payout' },
      { name: 'tenant', label: 'Site or store (site:ID, store:ID)' },
    ],
    table: (rows, next) =>
      listView({
        caption: 'Payouts, newest first',
        rows,
        columns: [
          { label: 'Payout', cell: (p) => link(`/console/money/payouts/${p.id}`, p.id) },
          { label: 'Tenant', cell: (p) => tenantOf(p.owner, p.owner_name) },
          { label: 'Amount', cell: (p) => money(p.amount, p.currency) },
          { label: 'Status', cell: (p) => status(p.status, 'payout') },
          { label: 'To', cell: (p) => `${p.iban_masked} (${p.holder_name})` },
          { label: 'Arrival', cell: (p) => p.arrival_date ?? '—' },
          { label: 'Created', cell: (p) => when(p.created_at) },
        ],
        nextHref: next,
      }),
  });

  /**
   * In the sandbox, the operator plays the banks on a payout's page: book it as paid (on the files rail
   * a camt.054 read from the inbox), return it or reject it (AC04), as the sandbox routes do.
   */
  const bankLevers = (request: FastifyRequest, p: { id: string; status: string }) => {
    const ctx = contextOf(request, deps);
    if (!ctx.sandbox || ctx.viewer.role !== 'operator') return '';
    const action = `/console/sandbox/payouts/${encodeURIComponent(p.id)}/bank`;
    const lever = (outcome: string, label: string) =>
      postForm(ctx, action, [{ name: 'outcome', label: 'Outcome', type: 'hidden', value: outcome }], label, {
        secondary: true,
      });
    const levers = [
      ...(p.status === 'in_transit' ? [lever('paid', 'The bank books it (paid)')] : []),
      ...(p.status === 'in_transit' || p.status === 'paid'
        ? [lever('returned', 'The beneficiary’s bank returns it (AC04)')]
        : []),
      ...(p.status === 'in_transit' ? [lever('failed', 'The bank rejects it (AC04)')] : []),
    ];
    return levers.length ? h`<h2>The bank (sandbox)</h2>${levers}` : '';
  };

  app.get<{ Params: { id: string } }>('/money/payouts/:id', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const p = await getPayout(db, viewer, request.params.id);
    const items = await payoutItems(db, p.id, textQuery(request).cursor);
    const done = textQuery(request).done;
    const events = await eventsAbout(deps, viewer, p.id);
    return sendConsolePage(
      request,
      reply,
      deps,
      { tab: `Payout ${p.id}`, heading: `Payout to ${p.iban_masked}` },
      h`${doneNotice(done)}${objectHead(viewer, { amount: money(p.amount, p.currency), status: status(p.status, 'payout'), id: p.id })}${details(
        [
          ['Tenant', tenantOf(p.owner, (await ownerNames(db, [p.owner])).get(p.owner))],
          ['Amount', money(p.amount, p.currency)],
          ['Status', statusFact(p.status, 'payout')],
          ['Bank account', `${p.iban_masked} (${p.holder_name})`],
          ['Arrival', p.arrival_date],
          ['Failure', p.failure_code],
          [
            'Itemized',
            p.itemized
              ? 'yes: its report lists every balance transaction it pays'
              : 'no: an amount paid by hand',
          ],
          ['Bank file', p.bank_file_id],
          ['Created', when(p.created_at)],
        ],
      )}<p>${link(`/console/money/payouts/${p.id}/report.csv`, 'Download the settlement report (CSV)')}</p>${bankLevers(request, p)}${listView(
        {
          caption: 'Balance transactions it pays, newest first',
          rows: items.rows,
          empty: 'None.',
          columns: [
            { label: 'Balance transaction', cell: (b) => b.id },
            { label: 'Type', cell: (b) => term(b.type, 'balance.type') },
            { label: 'Source', cell: (b) => `${b.source_type} ${b.source_id}` },
            { label: 'Gross', cell: (b) => money(b.gross, b.currency) },
            { label: 'Fee', cell: (b) => money(b.fee, b.currency) },
            { label: 'Net', cell: (b) => money(b.net, b.currency) },
            { label: 'Available', cell: (b) => when(b.available_at) },
          ],
          nextHref: nextHref(`/console/money/payouts/${p.id}`, {}, items.nextCursor),
        },
      )}<h2>What happened</h2>${events}`,
    );
  });

  app.get<{ Params: { id: string } }>('/money/payouts/:id/report.csv', async (request, reply) => {
    const p = await getPayout(db, viewerOf(request, deps), request.params.id);
    return sendCsv(reply, `${p.id}.csv`, settlementReport(db, p));
  });

  registerReconcileRoute(app, deps);

  app.get('/money/reports', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const today = clock.now().toISOString().slice(0, 10);
    const monthAgo = new Date(clock.now().getTime() - 30 * 86_400_000).toISOString().slice(0, 10);
    const owners = await ownersOf(db, viewer);
    const range = [
      { name: 'from', label: 'From (YYYY-MM-DD)' },
      { name: 'to', label: 'To (YYYY-MM-DD)' },
    ];
    const defaults = { from: monthAgo, to: today };
    let operatorPart = h``;
    if (owners === 'all') {
      const files = await db
        .selectFrom('bank_inbox_files')
        .selectAll()
        .orderBy('received_at', 'desc')
        .limit(25)
        .execute();
      operatorPart = h`<h2>Revenue</h2>${filterForm('/console/money/reports/revenue.csv', range, defaults)}
${await reconcileSection(db, request, deps)}<h2>Files read from the bank</h2>${listView({
        caption: 'Newest first; lines that matched no payout are listed',
        rows: files,
        empty: 'None yet.',
        columns: [
          { label: 'File', cell: (f) => f.file_name },
          { label: 'Kind', cell: (f) => f.kind },
          { label: 'Status', cell: (f) => status(f.status, 'bank.file') },
          { label: 'Detail', cell: (f) => f.detail },
          { label: 'Unmatched lines', cell: (f) => (f.unmatched.length ? JSON.stringify(f.unmatched) : '—') },
          { label: 'Received', cell: (f) => when(f.received_at) },
        ],
      })}`;
    }
    return sendConsolePage(
      request,
      reply,
      deps,
      'Reports',
      h`<h2>Balance by day</h2>${filterForm(
        '/console/money/reports/balance.csv',
        [{ name: 'tenant', label: 'Site or store (site:ID, store:ID)' }, ...range],
        { ...defaults, tenant: owners === 'all' ? '' : (owners[0] ?? '') },
      )}${operatorPart}`,
    );
  });

  const range = (request: FastifyRequest) => {
    const q = textQuery(request);
    for (const field of ['from', 'to'] as const) {
      if (!reportDay.safeParse(q[field]).success) {
        throw new DomainError('validation_failed', `${field} must be a day (YYYY-MM-DD) from 1970 on`, {
          field,
        });
      }
    }
    return { from: q.from as string, to: q.to as string };
  };

  app.get('/money/reports/balance.csv', async (request: FastifyRequest, reply: FastifyReply) => {
    const { from, to } = range(request);
    const key = await ownerFor(db, viewerOf(request, deps), textQuery(request).tenant ?? '');
    return sendCsv(
      reply,
      `balance-${key.replace(':', '-')}-${from}-${to}.csv`,
      await balanceByDay(db, parseOwnerKey(key), from, to),
    );
  });
  app.get('/money/reports/revenue.csv', async (request, reply) => {
    if ((await ownersOf(db, viewerOf(request, deps))) !== 'all')
      throw new DomainError('not_found', 'page not found');
    const { from, to } = range(request);
    return sendCsv(reply, `revenue-${from}-${to}.csv`, await revenueByDay(db, from, to));
  });
}

/** A site or store by its name, its owner key after it (the filter and the API's tenant) */
const tenantOf = (key: string, name: string | null | undefined) =>
  name ? h`${name} <small class="id">${key}</small>` : key;
