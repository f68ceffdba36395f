// Console › Approvals (docs/console.md, Approvals): four eyes on money. A refund, a payout or a change of a
// payout bank account made in the console runs at once — unless the tenant's policy asks for a second
// person, and then it waits here as a request until another member with the action's permission (or an
// operator) approves it, which runs it in the same transaction, or rejects it; or until it expires.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { loadMerchantScope } from '../../../payments/sites.ts';
import type {
  ApprovalAction,
  ApprovalRequest,
  ApprovalTenant,
  NewApproval,
  Person,
  PolicyAction,
} from '../../../platform/approvals/approvals.ts';
import { sendConsolePage } from '../../../platform/console/console-http.ts';
import { details, doneNotice, link, listView } from '../../../platform/console/console-layout.ts';
import { ownsTenant } from '../../../platform/console/console-scope.ts';
import type { Viewer } from '../../../platform/console/console-users.ts';
import { h } from '../../../platform/console/html-template.ts';
import { type Page, pageOf, whenGiven } from '../../../platform/console/paging.ts';
import { allows } from '../../../platform/console/permissions.ts';
import { confirmedAction, listRoute, textQuery, viewerOf } from '../../../platform/console/route-kit.ts';
import { money, status, statusFact, when } from '../../../platform/console/values.ts';
import type { Db } from '../../../platform/db/database.ts';
import { notFound } from '../../../platform/errors/domain-error.ts';
import { ClientAmount } from '../../../platform/money/amount.ts';
import { parseOwnerKey } from '../../../platform/payouts/terms.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'];

export const personOf = (viewer: Viewer): Person => ({
  id: viewer.userId ?? 'admin-token',
  email: viewer.email,
});

/** The tenant whose policy governs money of a site or a store ('site:1', 'store:str_…'). */
export async function tenantOfOwner(db: Db, key: string): Promise<ApprovalTenant> {
  const owner = parseOwnerKey(key);
  if (owner.kind === 'store') return { kind: 'store', id: owner.storeId };
  const site = await db
    .selectFrom('sites')
    .select('merchant_id')
    .where('id', '=', owner.siteId)
    .executeTakeFirst();
  if (!site) throw notFound('site');
  return { kind: 'merchant', id: String(site.merchant_id) };
}

/**
 * The money actions under four eyes: each runs from what was asked (kept with a request while it waits)
 * and answers the console address of what it made.
 */
export function fourEyes(deps: PlatformConsoleDeps) {
  const { db, approvals, payments, moneyOut, bankAccounts, risk } = deps.services;
  const perform: Record<ApprovalAction, (asked: Record<string, string>) => Promise<string>> = {
    refund: async (asked) => {
      const merchant = await loadMerchantScope(db, Number(asked.merchantId));
      const refund = await payments.transactions.refund(merchant, Number(asked.transactionId), {
        amount: ClientAmount.read(asked.amount ?? ''),
        ...(asked.reason ? { reason: asked.reason } : {}),
      });
      return `/console/payments/transactions/${refund.id}`;
    },
    payout: async (asked) => {
      const payout = await moneyOut.payouts.payNow(parseOwnerKey(asked.owner ?? ''), {
        currency: asked.currency ?? '',
        ...(asked.amount ? { amount: ClientAmount.read(asked.amount) } : {}),
      });
      return `/console/money/payouts/${payout.id}`;
    },
    bankAccountChange: async (asked) => {
      const owner = asked.owner ?? '';
      const account = await bankAccounts.put(db, parseOwnerKey(owner), {
        iban: asked.iban ?? '',
        bic: asked.bic || undefined,
        holderName: asked.holderName ?? '',
      });
      // A change a risk rule held waits for a review: the account in place stays in use.
      return `/console/money/balances?tenant=${encodeURIComponent(owner)}&done=${account.status === 'held' ? 'held' : 'saved'}`;
    },
    // A risk review whose approval lets money out (reviews.ts, ReviewApproval), decided in the requester's
    // name once the second person approves; a review decided meanwhile refuses it (409).
    riskReview: async (asked) => {
      const reviewId = asked.reviewId ?? '';
      await risk.reviews.decide(reviewId, true, asked.requester ?? 'four eyes');
      return `/console/risk/reviews/${reviewId}`;
    },
  };
  /** Keeps the action as a request for a second person; answers the request's page. */
  const ask = async (request: FastifyRequest, asked: Omit<NewApproval, 'requester' | 'requestId'>) => {
    const viewer = viewerOf(request, deps);
    const pending = await approvals.request(db, {
      ...asked,
      requester: personOf(viewer),
      requestId: request.id,
    });
    return `/console/approvals/${pending.id}?done=requested`;
  };
  return {
    perform,
    ask,
    /** Runs the action now, or asks for a second person when the tenant's policy wants one. */
    async runOrAsk(
      request: FastifyRequest,
      asked: Omit<NewApproval, 'requester' | 'requestId'> & { action: PolicyAction },
    ): Promise<{ asked: boolean; href: string }> {
      if (await approvals.needed(db, asked.tenant, asked.action, asked.money)) {
        return { asked: true, href: await ask(request, asked) };
      }
      return { asked: false, href: await perform[asked.action](asked.payload) };
    },
  };
}

interface ApprovalRow {
  id: string;
  tenant_kind: string;
  tenant_id: string;
  action: string;
  object_id: string;
  currency: string | null;
  amount: string | null;
  status: string;
  requested_by_email: string;
  expires_at: Date;
  created_at: Date;
  cursor_at: Date;
  cursor_id: string;
}

function listApprovals(
  db: Db,
  viewer: Viewer,
  f: Record<string, string | undefined>,
): Promise<Page<ApprovalRow>> {
  const scope =
    viewer.role === 'operator'
      ? sql<boolean>`true`
      : sql<boolean>`a.tenant_kind = ${viewer.tenant.kind} AND a.tenant_id = ${viewer.tenant.id}`;
  return pageOf<ApprovalRow>(
    db,
    {
      selectFrom: sql`a.id, a.tenant_kind, a.tenant_id, a.action, a.object_id, a.currency, a.amount::text, a.status,
        a.requested_by_email, a.expires_at, a.created_at FROM approval_requests a`,
      where: [scope, ...whenGiven(f, 'status', (v) => sql<boolean>`a.status = ${v}`, /^[a-z]{1,20}$/)],
      createdAt: 'a.created_at',
      id: 'a.id',
    },
    f,
  );
}

export async function registerApprovalsConsoleRoutes(
  app: FastifyInstance,
  deps: PlatformConsoleDeps,
): Promise<void> {
  const { db, approvals } = deps.services;
  const { perform } = fourEyes(deps);

  /** A request the viewer may see (their tenant's, or any for an operator); else not found. */
  const visible = async (viewer: Viewer, id: string) => {
    const found = await approvals.get(db, id);
    if (!ownsTenant(viewer, found.tenant.kind, found.tenant.id)) throw notFound('approval');
    return found;
  };

  listRoute(app, deps, '/approvals', {
    title: 'Approvals',
    read: listApprovals,
    filters: [{ name: 'status', label: 'Status', options: APPROVAL_STATUSES, labels: 'approval' }],
    table: (rows, next) =>
      listView({
        caption: 'Money actions waiting for, or decided by, a second person, newest first',
        rows,
        empty: 'No approvals yet: nothing asked for one.',
        columns: [
          { label: 'Request', cell: (a) => link(`/console/approvals/${a.id}`, a.id) },
          { label: 'Action', cell: (a) => a.action },
          { label: 'Amount', cell: (a) => (a.currency ? money(a.amount, a.currency) : '—') },
          { label: 'Tenant', cell: (a) => `${a.tenant_kind} ${a.tenant_id}` },
          { label: 'Asked by', cell: (a) => a.requested_by_email },
          { label: 'Status', cell: (a) => status(a.status, 'approval') },
          { label: 'Expires', cell: (a) => when(a.expires_at) },
        ],
        nextHref: next,
      }),
  });

  app.get<{ Params: { id: string } }>('/approvals/:id', async (request, reply) => {
    const viewer = viewerOf(request, deps);
    const a = await visible(viewer, request.params.id);
    const base = `/console/approvals/${a.id}`;
    const own = personOf(viewer).id === a.requestedBy.id;
    const pending = a.status === 'pending' && a.expiresAt.getTime() > deps.services.clock.now().getTime();
    const decide = allows(viewer.access, 'finance')
      ? h`<p class="actions">${own ? '' : link(`${base}/approve`, 'Approve…')} ${link(`${base}/reject`, 'Reject…')}</p>${
          own ? h`<p>You asked for this: another member must approve it.</p>` : ''
        }`
      : '';
    const content = h`${doneNotice(textQuery(request).done)}${details([
      ['What', a.summary],
      ['Action', a.action],
      ['Amount', a.currency && a.amount !== null ? money(a.amount, a.currency) : null],
      ['Tenant', `${a.tenant.kind} ${a.tenant.id}`],
      ['Status', statusFact(pending || a.status !== 'pending' ? a.status : 'expired', 'approval')],
      ['Asked by', a.requestedBy.email],
      ['Asked', when(a.createdAt)],
      ['Expires', when(a.expiresAt)],
      ['Decided by', a.decidedBy?.email],
      ['Decided', when(a.decidedAt)],
      ['Result', a.outcome ? link(a.outcome, 'Open') : null],
    ])}${pending ? decide : ''}`;
    return sendConsolePage(request, reply, deps, `Approval ${a.id}`, content);
  });

  for (const decision of ['approve', 'reject'] as const) {
    const action = confirmedAction<{ id: string }>(
      deps,
      async (request, params) => {
        const a = await visible(viewerOf(request, deps), params.id);
        return {
          title: `${decision === 'approve' ? 'Approve' : 'Reject'} ${a.id}`,
          explain:
            decision === 'approve'
              ? h`<p>${a.requestedBy.email} asked: ${a.summary}. Approving runs it now, in your name as its second person.</p>`
              : h`<p>${a.requestedBy.email} asked: ${a.summary}. Rejecting closes the request; nothing happens.</p>`,
          fields: [],
          submit: decision === 'approve' ? 'Approve and run it' : 'Reject',
          danger: decision === 'approve',
        };
      },
      async (request, params) => {
        const viewer = viewerOf(request, deps);
        const a = await visible(viewer, params.id);
        const decided: ApprovalRequest = await approvals.decide(
          db,
          a.id,
          decision,
          personOf(viewer),
          request.id,
          (asked) => perform[a.action](asked),
        );
        return `/console/approvals/${decided.id}?done=${decision === 'approve' ? 'approved' : 'rejected'}`;
      },
    );
    app.get(`/approvals/:id/${decision}`, action.get);
    app.post(`/approvals/:id/${decision}`, action.post);
  }
}
