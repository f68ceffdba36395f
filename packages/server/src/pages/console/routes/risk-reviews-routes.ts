// Console › Risk › Reviews and Decisions (docs/risk.md, Reviews): the queue of what rules held — a charge
// authorized and not captured, a payout, a bank account change, a crypto order or refund — each with the
// decisions that held it and the values they read, approved or refused behind a confirmation through the
// same reviews service as the admin API (the outcome and the review's status commit together); and every
// decision record, by object or by rule.
import type { FastifyInstance } from 'fastify';
import { sendConsolePage } from '../../../platform/console/console-http.ts';
import { details, doneNotice, filterForm, link, listView } from '../../../platform/console/console-layout.ts';
import { h } from '../../../platform/console/html-template.ts';
import { confirmedAction, textQuery, viewerOf } from '../../../platform/console/route-kit.ts';
import { status, statusFact, when } from '../../../platform/console/values.ts';
import { isInt8Digits } from '../../../platform/http/fields.ts';
import type { DecisionPointName } from '../../../platform/risk/decision-points.ts';
import type { Review } from '../../../platform/risk/reviews.ts';
import { scopeRefOf } from '../../../platform/risk/risk-scope.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';
import { fourEyes } from './approvals-routes.ts';
import { decisionTable, pageAfter, riskTabs, ruleLink, tenantsOf } from './risk-console-kit.ts';

const PAGE = 50;
const STATUSES = ['pending', 'approved', 'refused', 'expired'] as const;

/** What approving and refusing does at each decision point, said before it is done. */
const OUTCOMES: Record<string, { approve: string; refuse: string }> = {
  'payments.charge': {
    approve: 'The authorized charge is captured.',
    refuse: 'The authorization is voided and the payer told, as the wire tells any void.',
  },
  payout: {
    approve: 'The payout is released: it goes to the bank with the next file.',
    refuse: 'The payout fails (risk_refused) and its amount is back in the balance.',
  },
  'bank_account.change': {
    approve: 'The new bank account replaces the one in place.',
    refuse: 'The change is dropped: the account in place stays.',
  },
  'crypto.order': {
    approve: 'The buyer may pay the order.',
    refuse: 'The order is cancelled and the store told.',
  },
  'crypto.refund': {
    approve: 'The buyer may accept the refund and name where it is sent.',
    refuse: 'The refund is rejected and the store told.',
  },
};

export async function registerRiskReviewsConsoleRoutes(
  app: FastifyInstance,
  deps: PlatformConsoleDeps,
): Promise<void> {
  const { db, risk, approvals } = deps.services;

  app.get('/risk/reviews', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const f = textQuery(request);
    const state = STATUSES.find((s) => s === f.status) ?? 'pending';
    const scope = tenantsOf(viewer);
    const tenants = scope.tenants ?? (f.tenant ? [f.tenant] : undefined);
    const reviews = await risk.reviews.list(
      db,
      { status: state, ...(tenants ? { tenants } : {}) },
      { ...(f.after ? { after: f.after } : {}), limit: PAGE },
    );
    const filters = filterForm(
      '/console/risk/reviews',
      [
        { name: 'status', label: 'Status', options: STATUSES, labels: 'risk.review' },
        ...(scope.tenants ? [] : [{ name: 'tenant', label: 'Tenant (merchant:ID, store:ID, …)' }]),
      ],
      f,
    );
    const table = listView({
      caption: `Reviews ${state}, oldest first`,
      rows: reviews,
      empty: state === 'pending' ? 'Nothing waits for a review.' : `No ${state} reviews.`,
      nextHref: pageAfter('/console/risk/reviews', f, reviews, PAGE),
      columns: [
        { label: 'Review', cell: (r) => link(`/console/risk/reviews/${r.id}`, r.id) },
        {
          label: 'Held',
          cell: (r) =>
            h`${r.decisionPoint} ${link(`/console/search?q=${encodeURIComponent(r.objectId)}`, r.objectId)}`,
        },
        { label: 'Rule', cell: (r) => r.ruleName },
        { label: 'Tenant', cell: (r) => r.tenant },
        { label: 'Status', cell: (r) => status(r.status, 'risk.review') },
        {
          label: state === 'pending' ? 'Expires' : 'Decided',
          cell: (r) => when(state === 'pending' ? r.expiresAt : r.decidedAt),
        },
      ],
    });
    return sendConsolePage(
      request,
      reply,
      deps,
      'Risk reviews',
      h`${riskTabs('reviews')}${doneNotice(f.done)}${filters}${table}`,
    );
  });

  app.get<{ Params: { id: string } }>('/risk/reviews/:id', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const review = await risk.reviews.get(db, request.params.id, tenantsOf(viewer).tenants);
    const decisions = await risk.decisions(
      db,
      { objectId: review.objectId, ...tenantsOf(viewer) },
      { limit: 20 },
    );
    const outcome = OUTCOMES[review.decisionPoint];
    const actions =
      review.status === 'pending'
        ? h`<p class="inline">${link(`/console/risk/reviews/${review.id}/approve`, 'Approve…')} ${link(`/console/risk/reviews/${review.id}/refuse`, 'Refuse…')}</p>`
        : '';
    const content = h`${riskTabs('reviews')}${doneNotice(textQuery(request).done)}${details([
      ['Status', statusFact(review.status, 'risk.review')],
      [
        'Held',
        h`${review.decisionPoint} ${link(`/console/search?q=${encodeURIComponent(review.objectId)}`, review.objectId)}`,
      ],
      ['Rule', ruleLink(review)],
      ['Tenant', review.tenant],
      ['Opened', when(review.createdAt)],
      ['Expires', h`${when(review.expiresAt)} <small>undecided by then, it is refused</small>`],
      [
        'Decided',
        review.decidedAt ? h`${when(review.decidedAt)} by ${review.decidedBy ?? 'the expiry'}` : '—',
      ],
      ['Approving', outcome?.approve],
      ['Refusing', outcome?.refuse],
    ])}${actions}${decisionTable(viewer, decisions, 'Why: the decisions about it')}`;
    return sendConsolePage(request, reply, deps, `Review ${review.id}`, content);
  });

  const eyes = fourEyes(deps);
  /**
   * Four eyes on a review's approval (docs/risk.md, Reviews): approving a held payout, crypto refund or
   * bank account change falls under the tenant's policy for that action; when it asks for a second person,
   * the approval waits as a request (refusing never does: it lets no money out).
   */
  const secondPersonNeeded = async (id: string, tenants: string[] | undefined) => {
    const review = await risk.reviews.get(db, id, tenants);
    const governed = await risk.reviews.approvals.get(review.decisionPoint as DecisionPointName)?.(
      db,
      review.objectId,
    );
    const { kind, id: tenantId = '' } = scopeRefOf(review.tenant);
    if (!governed || review.status !== 'pending' || (kind !== 'merchant' && kind !== 'store'))
      return undefined;
    const tenant = { kind, id: tenantId };
    if (!(await approvals.needed(db, tenant, governed.action, governed.money))) return undefined;
    return {
      tenant,
      action: 'riskReview' as const,
      objectId: review.id,
      ...(governed.money ? { money: governed.money } : {}),
      summary: governed.summary,
    };
  };

  for (const [verb, approved] of [
    ['approve', true],
    ['refuse', false],
  ] as const) {
    const decide = confirmedAction<{ id: string }>(
      deps,
      async (request, { id }) => {
        const review: Review = await risk.reviews.get(db, id, tenantsOf(viewerOf(request, deps)).tenants);
        const outcome = OUTCOMES[review.decisionPoint];
        return {
          title: `${approved ? 'Approve' : 'Refuse'} ${review.decisionPoint} ${review.objectId}`,
          explain: h`<p>Held by the rule ${review.ruleName}. ${approved ? outcome?.approve : outcome?.refuse}</p>`,
          fields: [],
          submit: approved ? 'Approve' : 'Refuse',
          ...(approved ? {} : { danger: true }),
        };
      },
      async (request, { id }) => {
        const viewer = viewerOf(request, deps);
        const tenants = tenantsOf(viewer).tenants;
        if (approved) {
          const asked = await secondPersonNeeded(id, tenants);
          if (asked)
            return eyes.ask(request, { ...asked, payload: { reviewId: id, requester: viewer.email } });
        }
        await risk.reviews.decide(id, approved, viewer.email, tenants);
        return `/console/risk/reviews/${id}?done=${approved ? 'approved' : 'refused'}`;
      },
    );
    app.get(`/risk/reviews/:id/${verb}`, decide.get);
    app.post(`/risk/reviews/:id/${verb}`, decide.post);
  }

  app.get('/risk/decisions', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const f = textQuery(request);
    const decisions = await risk.decisions(
      db,
      {
        ...(f.objectId ? { objectId: f.objectId } : {}),
        ...(f.ruleId ? { ruleId: f.ruleId } : {}),
        ...tenantsOf(viewer),
      },
      // A cursor that is not an id (typed by hand) reads the first page, as an unknown filter does.
      { ...(f.before && isInt8Digits(f.before) ? { before: f.before } : {}), limit: PAGE },
    );
    const filters = filterForm(
      '/console/risk/decisions',
      [
        { name: 'objectId', label: 'Object (a transaction, payout, order…)' },
        { name: 'ruleId', label: 'Rule id' },
      ],
      f,
    );
    const next = pageAfter('/console/risk/decisions', f, decisions, PAGE, 'before');
    return sendConsolePage(
      request,
      reply,
      deps,
      'Risk decisions',
      h`${riskTabs('decisions')}<p>Every rule that matched, in either mode, newest first: the one that acted, the shadow ones, and those after the one that decided.</p>${filters}${decisionTable(viewer, decisions, 'Decisions, newest first', next)}`,
    );
  });
}
