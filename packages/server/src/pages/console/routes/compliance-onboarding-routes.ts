// Console › Compliance › Onboarding (docs/compliance.md, Onboarding): merchants' and stores' business
// profiles waiting for review, oldest first; a profile with its owners and directors and the cases its
// screening opened; the reviewer's decision (approved, rejected, more_information, with the reason the
// tenant is told); and an invitation that sends a new tenant the hosted onboarding page.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ProfileDecision } from '../../../platform/compliance/business-profiles.ts';
import { INVITATION_DAYS } from '../../../platform/compliance/onboarding-invitations.ts';
import { sendConsolePage } from '../../../platform/console/console-http.ts';
import { details, doneNotice, filterForm, link, listView } from '../../../platform/console/console-layout.ts';
import { h } from '../../../platform/console/html-template.ts';
import { confirmedAction, fieldOf, textQuery, viewerOf } from '../../../platform/console/route-kit.ts';
import { status, statusFact, when } from '../../../platform/console/values.ts';
import { DomainError, notFound } from '../../../platform/errors/domain-error.ts';
import { asDomainError } from '../../../platform/http/as-domain-error.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';
import { actorOf, complianceTabs, complianceText } from './compliance-console-kit.ts';

const PAGE = 50;
const STATUSES = ['submitted', 'draft', 'more_information', 'approved', 'rejected'] as const;
const DECISIONS: readonly ProfileDecision[] = ['approved', 'more_information', 'rejected'];

/** `merchant:<id>` or `store:<id>` as a path names it; anything else names no profile */
function tenantParam(text: string): string {
  if (!/^(merchant|store):\d{1,18}$/.test(text)) throw notFound('business profile');
  return text;
}

export async function registerComplianceOnboardingConsoleRoutes(
  app: FastifyInstance,
  deps: PlatformConsoleDeps,
): Promise<void> {
  const { db, compliance } = deps.services;
  const { profiles, cases } = compliance;
  const invitations = deps.services.onboardingInvitations;

  app.get('/compliance/onboarding', async (request, reply) => {
    const f = textQuery(request);
    const state = STATUSES.find((s) => s === f.status) ?? 'submitted';
    const found = await profiles.list(db, {
      status: state,
      ...(f.after ? { after: f.after } : {}),
      limit: PAGE,
    });
    const { done: _done, ...kept } = f;
    const next = found.nextCursor
      ? `/console/compliance/onboarding?${new URLSearchParams({ ...(kept as Record<string, string>), after: found.nextCursor })}`
      : null;
    const table = listView({
      caption: `Business profiles ${state.replace('_', ' ')}, longest waiting first`,
      rows: found.rows,
      empty: state === 'submitted' ? 'No application waits for a review.' : `No ${state} profiles.`,
      nextHref: next,
      columns: [
        {
          label: 'Business',
          cell: (p) => link(`/console/compliance/onboarding/${p.tenant}`, p.profile.legalName),
        },
        { label: 'Tenant', cell: (p) => p.tenant },
        { label: 'Country', cell: (p) => p.profile.country },
        { label: 'Owners', cell: (p) => p.profile.owners.length },
        { label: 'Status', cell: (p) => status(p.status, 'compliance.profile') },
        { label: 'Changed', cell: (p) => when(p.updatedAt) },
      ],
    });
    return sendConsolePage(
      request,
      reply,
      deps,
      'Onboarding',
      h`${complianceTabs('onboarding')}${doneNotice(f.done)}<p class="inline">${link('/console/compliance/onboarding/invite', 'Invite a tenant…')}</p>${filterForm('/console/compliance/onboarding', [{ name: 'status', label: 'Status', options: STATUSES, labels: 'compliance.profile' }], f)}${table}`,
    );
  });

  const invite = confirmedAction<Record<string, never>>(
    deps,
    async () => ({
      title: 'Invite a tenant to onboarding',
      explain: h`<p>Sends the hosted onboarding page to a person of the merchant or store: a link valid for ${INVITATION_DAYS} days, once, replacing any earlier link for the tenant. They need no account to fill it in; finishing it submits the profile for review and makes them the tenant’s admin in the console.</p>`,
      fields: [
        { name: 'tenant', label: 'Tenant (merchant:ID or store:ID)', required: true },
        { name: 'email', label: 'Their email', type: 'email', required: true },
      ],
      submit: 'Send the invitation',
    }),
    async (request, _params, body) => {
      const tenant = fieldOf(
        z
          .string()
          .trim()
          .regex(/^(merchant:\d{1,15}|store:[\w-]{1,64})$/, 'merchant:ID or store:ID'),
        body,
        'tenant',
      );
      const email = fieldOf(z.email('an email address').max(254), body, 'email').toLowerCase();
      const by = actorOf(viewerOf(request, deps));
      await db
        .transaction()
        .execute((tx) => invitations.invite(tx, { tenant, email, by }))
        .catch((err) => {
          // The tenant is typed here: one that does not exist is this field's mistake, not a missing page
          if (asDomainError(err).status === 404)
            throw new DomainError('validation_failed', `there is no ${tenant}`, { field: 'tenant' });
          throw err;
        });
      return '/console/compliance/onboarding?done=invited';
    },
  );
  app.get('/compliance/onboarding/invite', invite.get);
  app.post('/compliance/onboarding/invite', invite.post);

  app.get<{ Params: { tenant: string } }>('/compliance/onboarding/:tenant', async (request, reply) => {
    const tenant = tenantParam(request.params.tenant);
    const view = await profiles.get(db, tenant);
    const p = view.profile;
    const tenantCases = await cases.list(db, { tenant, limit: 10 });
    const files = await compliance.documents.list(db, tenant);
    const address = [
      p.address.line1,
      p.address.line2,
      `${p.address.postalCode} ${p.address.city}`,
      p.address.country,
    ]
      .filter(Boolean)
      .join(', ');
    const content = h`${complianceTabs('onboarding')}${doneNotice(textQuery(request).done)}${details([
      ['Status', statusFact(view.status, 'compliance.profile')],
      ['Tenant', tenant],
      ['Legal name', p.legalName],
      ['Trading name', p.tradingName],
      ['Registration', `${p.registrationNumber} (${p.country})`],
      ['Address', address],
      ['Category (MCC)', p.mcc],
      ['Website', p.website],
      [
        'Expected monthly volume',
        p.expectedMonthlyVolume
          ? `${p.expectedMonthlyVolume.amount} ${p.expectedMonthlyVolume.currency}`
          : '—',
      ],
      ['Submitted', when(view.submittedAt)],
      [
        'Decided',
        view.decidedAt ? h`${when(view.decidedAt)} by ${view.decidedBy}: ${view.decisionReason}` : '—',
      ],
    ])}${
      view.status === 'submitted'
        ? h`<p class="inline">${link(`/console/compliance/onboarding/${tenant}/decide`, 'Decide…')}</p>`
        : ''
    }${listView({
      caption: 'Beneficial owners (25 % or more)',
      rows: p.owners,
      empty: 'Nobody holds 25 % or more.',
      columns: [
        { label: 'Name', cell: (o) => o.name },
        { label: 'Born', cell: (o) => o.dateOfBirth },
        { label: 'Nationality', cell: (o) => o.nationality },
        { label: 'Lives in', cell: (o) => o.countryOfResidence },
        { label: 'Holds', cell: (o) => `${o.ownershipPercent} %` },
      ],
    })}${listView({
      caption: 'Directors',
      rows: p.directors,
      columns: [
        { label: 'Name', cell: (d) => d.name },
        { label: 'Born', cell: (d) => d.dateOfBirth },
        { label: 'Nationality', cell: (d) => d.nationality },
      ],
    })}${listView({
      caption: 'Documents',
      rows: files,
      empty: 'No documents yet (POST /admin/…/business-profile/documents).',
      columns: [
        {
          label: 'File',
          cell: (d) => link(`/console/compliance/onboarding/${tenant}/documents/${d.id}`, d.filename),
        },
        { label: 'Kind', cell: (d) => d.kind.replace(/_/g, ' ') },
        { label: 'Size', cell: (d) => `${Math.ceil(d.bytes / 1024)} KB` },
        { label: 'Added', cell: (d) => when(d.uploadedAt) },
      ],
    })}${listView({
      caption: 'Compliance cases about this tenant',
      rows: tenantCases,
      empty: 'Screening its name, owners and directors raised nothing.',
      columns: [
        { label: 'Case', cell: (c) => link(`/console/compliance/cases/${c.id}`, `Case ${c.id}`) },
        { label: 'About', cell: (c) => c.subject },
        { label: 'Status', cell: (c) => status(c.status, 'compliance.case') },
        { label: 'Opened', cell: (c) => when(c.openedAt) },
      ],
    })}`;
    return sendConsolePage(request, reply, deps, p.legalName, content);
  });

  app.get<{ Params: { tenant: string; documentId: string } }>(
    '/compliance/onboarding/:tenant/documents/:documentId',
    async (request, reply) => {
      const found = await compliance.documents.read(
        db,
        tenantParam(request.params.tenant),
        request.params.documentId,
      );
      return reply
        .type(found.contentType)
        .header('content-disposition', `attachment; filename="${found.filename.replace(/[^\w.-]/g, '_')}"`)
        .send(found.content);
    },
  );

  const decide = confirmedAction<{ tenant: string }>(
    deps,
    async (_request, params) => {
      const tenant = tenantParam(params.tenant);
      const view = await profiles.get(db, tenant);
      return {
        title: `Decide ${view.profile.legalName}`,
        explain: h`<p>Approved: payouts may leave ${tenant} (where onboarding is required). Rejected or more information: the tenant is told the reason and may change the profile and submit it again.</p>`,
        fields: [
          { name: 'decision', label: 'Decision', options: DECISIONS, value: 'approved' },
          { name: 'reason', label: 'Reason (the tenant is told it)', type: 'textarea', required: true },
        ],
        submit: 'Decide',
      };
    },
    async (request, params, body) => {
      const tenant = tenantParam(params.tenant);
      const decision = fieldOf(z.enum(['approved', 'more_information', 'rejected']), body, 'decision');
      const reason = fieldOf(complianceText(2000), body, 'reason');
      const by = actorOf(viewerOf(request, deps));
      await db.transaction().execute((tx) => profiles.decide(tx, tenant, { decision, reason, by }));
      return `/console/compliance/onboarding/${tenant}?done=decided`;
    },
  );
  app.get('/compliance/onboarding/:tenant/decide', decide.get);
  app.post('/compliance/onboarding/:tenant/decide', decide.post);
}
