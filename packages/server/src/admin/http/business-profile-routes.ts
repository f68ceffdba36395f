// /admin/merchants/{id}/business-profile and /admin/stores/{id}/business-profile (docs/compliance.md,
// Onboarding): the operator fills in a tenant's business profile, sends it for review and decides it. A
// profile is written whole (PUT); its people are screened as it is written. Each write is audited; a step
// the profile's status does not allow is a 409 naming the status.
import { z } from 'zod';
import { businessProfileInput } from '../../platform/compliance/business-profile.ts';
import type { BusinessProfileView } from '../../platform/compliance/business-profiles.ts';
import type { Compliance } from '../../platform/compliance/compliance.ts';
import {
  INVITATION_DAYS,
  type OnboardingInvitations,
} from '../../platform/compliance/onboarding-invitations.ts';
import type { Db } from '../../platform/db/database.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import type { MerchantsService } from '../../platform/tenants/merchants-service.ts';
import type { StoresService } from '../../platform/tenants/stores-service.ts';
import { idParam, numericIdParam, standardErrors, timestamp } from './schemas.ts';

/** A whole profile: the PUT's example */
export const EXAMPLE_PROFILE = {
  legalName: 'Exemplu Comerț SRL',
  tradingName: 'Exemplu',
  registrationNumber: 'J40/1234/2020',
  country: 'RO',
  address: { line1: 'Str. Exemplu 1', city: 'București', postalCode: '010101', country: 'RO' },
  mcc: '5732',
  website: 'https://shop.example',
  expectedMonthlyVolume: { amount: '25000.00', currency: 'EUR' },
  owners: [
    {
      name: 'Ana Popescu',
      dateOfBirth: '1984-02-29',
      nationality: 'RO',
      countryOfResidence: 'RO',
      ownershipPercent: 60,
    },
  ],
  directors: [{ name: 'Ana Popescu', dateOfBirth: '1984-02-29', nationality: 'RO' }],
};

const status = z.enum(['draft', 'submitted', 'approved', 'rejected', 'more_information']);
const profileView = z.object({
  tenant: z.string().describe('merchant:<id> or store:<id>'),
  status,
  profile: z.record(z.string(), z.unknown()).describe('the profile as written (the PUT body)'),
  decisionReason: z.string().nullable(),
  submittedAt: timestamp.nullable(),
  decidedAt: timestamp.nullable(),
  decidedBy: z.string().nullable(),
  updatedAt: timestamp,
});
const present = (v: BusinessProfileView) => ({
  ...v,
  submittedAt: v.submittedAt?.toISOString() ?? null,
  decidedAt: v.decidedAt?.toISOString() ?? null,
  updatedAt: v.updatedAt.toISOString(),
});

const invitationView = z.object({
  id: z.string(),
  tenant: z.string(),
  email: z.string(),
  expiresAt: timestamp.describe('the link opens until then, once; the link itself is only in the email'),
});

/** The merchant and the store, as the profile routes name them: their paths and how each finds its tenant */
export function profileTenants(deps: { db: Db; merchants: MerchantsService; stores: StoresService }) {
  const { db } = deps;
  return [
    {
      path: '/merchants/:id/business-profile',
      invitations: '/merchants/:id/onboarding-invitations',
      tag: 'merchants',
      whose: 'merchant',
      params: numericIdParam,
      tenantOf: async (params: unknown) => {
        const { id } = params as z.output<typeof numericIdParam>;
        await deps.merchants.get(db, id);
        return `merchant:${id}`;
      },
    },
    {
      path: '/stores/:id/business-profile',
      invitations: '/stores/:id/onboarding-invitations',
      tag: 'stores',
      whose: 'store',
      params: idParam,
      tenantOf: async (params: unknown) => {
        const { id } = params as z.output<typeof idParam>;
        await deps.stores.get(db, id);
        return `store:${id}`;
      },
    },
  ];
}

export async function registerBusinessProfileRoutes(
  app: ZodApp,
  deps: {
    db: Db;
    compliance: Compliance;
    invitations: OnboardingInvitations;
    merchants: MerchantsService;
    stores: StoresService;
  },
): Promise<void> {
  const { db, invitations } = deps;
  const { profiles } = deps.compliance;
  const tenants = profileTenants(deps);
  for (const t of tenants) {
    app.post(
      t.invitations,
      {
        schema: {
          summary: `Invite the ${t.whose} by email to the hosted onboarding page: a link valid for ${INVITATION_DAYS} days (replacing any earlier one) to fill in the business profile and choose a console password`,
          tags: [t.tag, 'compliance'],
          params: t.params,
          body: z
            .strictObject({ email: z.email().max(254) })
            .meta({ example: { email: 'owner@shop.example' } }),
          response: { 201: invitationView, ...standardErrors },
        },
      },
      async (request, reply) => {
        const tenant = await t.tenantOf(request.params);
        const invited = await db
          .transaction()
          .execute((tx) =>
            invitations.invite(tx, { tenant, email: request.body.email.toLowerCase(), by: 'admin token' }),
          );
        return reply.code(201).send({ ...invited, expiresAt: invited.expiresAt.toISOString() });
      },
    );

    app.get(
      t.path,
      {
        schema: {
          summary: `The ${t.whose}’s business profile and where its review stands`,
          tags: [t.tag, 'compliance'],
          params: t.params,
          response: { 200: profileView, ...standardErrors },
        },
      },
      async (request) => present(await profiles.get(db, await t.tenantOf(request.params))),
    );

    app.put(
      t.path,
      {
        schema: {
          summary: `Write the ${t.whose}’s business profile, whole; its legal name, owners and directors are screened. An approved profile whose legal identity, category, owners or directors change goes back to review`,
          tags: [t.tag, 'compliance'],
          params: t.params,
          body: businessProfileInput.meta({ example: EXAMPLE_PROFILE }),
          response: { 200: profileView, ...standardErrors },
        },
      },
      async (request) => {
        const tenant = await t.tenantOf(request.params);
        return present(await db.transaction().execute((tx) => profiles.put(tx, tenant, request.body)));
      },
    );

    app.post(
      `${t.path}/submit`,
      {
        schema: {
          summary: `Send the ${t.whose}’s draft profile for review`,
          tags: [t.tag, 'compliance'],
          params: t.params,
          response: { 200: profileView, ...standardErrors },
        },
      },
      async (request) => {
        const tenant = await t.tenantOf(request.params);
        return present(await db.transaction().execute((tx) => profiles.submit(tx, tenant)));
      },
    );

    app.post(
      `${t.path}/decision`,
      {
        schema: {
          summary: `Decide the ${t.whose}’s submitted profile: approved, rejected or more_information, with the reason`,
          tags: [t.tag, 'compliance'],
          params: t.params,
          body: z.strictObject({
            decision: z.enum(['approved', 'rejected', 'more_information']),
            reason: z.string().trim().min(1).max(2000),
          }),
          response: { 200: profileView, ...standardErrors },
        },
      },
      async (request) => {
        const tenant = await t.tenantOf(request.params);
        return present(
          await db
            .transaction()
            .execute((tx) => profiles.decide(tx, tenant, { ...request.body, by: 'admin token' })),
        );
      },
    );
  }
}
