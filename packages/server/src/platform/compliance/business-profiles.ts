// Merchant and store onboarding (docs/compliance.md, Onboarding): a tenant's business profile and its
// review. draft → submitted → approved | rejected | more_information; a rejected or more_information
// profile changed is a draft again, to be submitted again. An approved profile whose legal identity,
// category, owners or directors change goes back to `submitted` (business-profile.ts, needsReviewAgain).
// The legal name, every owner and every director are screened as they are written (party-screening.ts):
// a match opens a case that holds the tenant. With TESSERA_ONBOARDING_REQUIRED=payouts no payout leaves a
// tenant whose profile is not approved.
import type { Clock } from '../clock/clock.ts';
import type { Executor, Tx } from '../db/database.ts';
import type { BusinessProfileStatus } from '../db/schema.ts';
import { DomainError, notFound } from '../errors/domain-error.ts';
import { type BusinessProfile, needsReviewAgain } from './business-profile.ts';
import type { PartyScreening } from './party-screening.ts';

/** `merchant:<id>` or `store:<id>` */
export type ProfileTenant = string;

/** What waits for approval: nothing, payouts, or payouts and charges (TESSERA_ONBOARDING_REQUIRED) */
export type OnboardingRequirement = 'off' | 'payouts' | 'charges';

export interface BusinessProfileView {
  tenant: ProfileTenant;
  status: BusinessProfileStatus;
  profile: BusinessProfile;
  decisionReason: string | null;
  submittedAt: Date | null;
  decidedAt: Date | null;
  decidedBy: string | null;
  updatedAt: Date;
}

export type ProfileDecision = Extract<BusinessProfileStatus, 'approved' | 'rejected' | 'more_information'>;

export class BusinessProfiles {
  constructor(
    private readonly deps: { clock: Clock; screening: PartyScreening; requirement: OnboardingRequirement },
  ) {}

  get requirement(): OnboardingRequirement {
    return this.deps.requirement;
  }

  async get(db: Executor, tenant: ProfileTenant): Promise<BusinessProfileView> {
    const row = await db
      .selectFrom('business_profiles')
      .selectAll()
      .where('tenant', '=', tenant)
      .executeTakeFirst();
    if (!row) throw notFound('business profile');
    return viewOf(row);
  }

  /** Profiles in one status, the longest unchanged first (a review queue); `after` is the last one's cursor */
  async list(
    db: Executor,
    filter: { status: BusinessProfileStatus; after?: string; limit: number },
  ): Promise<{ rows: BusinessProfileView[]; nextCursor: string | null }> {
    let query = db
      .selectFrom('business_profiles')
      .selectAll()
      .where('status', '=', filter.status)
      .orderBy('updated_at')
      .orderBy('tenant')
      .limit(filter.limit);
    const [at, tenant] = (filter.after ?? '').split('~');
    if (at && tenant && !Number.isNaN(Date.parse(at))) {
      query = query.where((eb) =>
        eb(eb.refTuple('updated_at', 'tenant'), '>', eb.tuple(new Date(at), tenant)),
      );
    }
    const rows = (await query.execute()).map(viewOf);
    const last = rows.at(-1);
    return {
      rows,
      nextCursor:
        rows.length === filter.limit && last ? `${last.updatedAt.toISOString()}~${last.tenant}` : null,
    };
  }

  /** Writes the profile (whole), moves its status as the header says, and screens its people */
  async put(tx: Tx, tenant: ProfileTenant, profile: BusinessProfile): Promise<BusinessProfileView> {
    const now = this.deps.clock.now();
    const before = await tx
      .selectFrom('business_profiles')
      .selectAll()
      .where('tenant', '=', tenant)
      .forUpdate()
      .executeTakeFirst();
    const was = before?.status;
    const reviewAgain =
      was === 'approved' && needsReviewAgain(before?.profile as unknown as BusinessProfile, profile);
    const status: BusinessProfileStatus =
      was === 'approved'
        ? reviewAgain
          ? 'submitted'
          : 'approved'
        : was === 'submitted'
          ? 'submitted'
          : 'draft';
    const values = {
      status,
      profile: JSON.stringify(profile),
      updated_at: now,
      ...(reviewAgain
        ? { submitted_at: now, decided_at: null, decided_by: null, decision_reason: null }
        : {}),
    };
    const row = await tx
      .insertInto('business_profiles')
      .values({ tenant, ...values, created_at: now })
      .onConflict((oc) => oc.column('tenant').doUpdateSet(values))
      .returningAll()
      .executeTakeFirstOrThrow();
    await this.screen(tx, tenant, profile);
    return viewOf(row);
  }

  /** A draft sent for review */
  async submit(tx: Tx, tenant: ProfileTenant): Promise<BusinessProfileView> {
    const found = await this.lock(tx, tenant);
    if (found.status !== 'draft') throw stateError('submitted', found.status);
    return this.update(tx, tenant, { status: 'submitted', submitted_at: this.deps.clock.now() });
  }

  /** A reviewer's decision on a submitted profile; a reason always (the tenant is told it) */
  async decide(
    tx: Tx,
    tenant: ProfileTenant,
    decision: { decision: ProfileDecision; reason: string; by: string },
  ): Promise<BusinessProfileView> {
    const found = await this.lock(tx, tenant);
    if (found.status !== 'submitted') throw stateError('decided', found.status);
    return this.update(tx, tenant, {
      status: decision.decision,
      decision_reason: decision.reason,
      decided_at: this.deps.clock.now(),
      decided_by: decision.by,
    });
  }

  /** Whether a payout may leave the tenant (TESSERA_ONBOARDING_REQUIRED) */
  async payoutsAllowed(db: Executor, tenant: ProfileTenant): Promise<boolean> {
    return this.deps.requirement === 'off' || this.approved(db, tenant);
  }

  /**
   * Whether the tenant may take a charge: with TESSERA_ONBOARDING_REQUIRED=charges, only once approved.
   * Otherwise true without a read: the charge path pays for the check only where it is asked for.
   */
  async chargesAllowed(db: Executor, tenant: ProfileTenant): Promise<boolean> {
    return this.deps.requirement !== 'charges' || this.approved(db, tenant);
  }

  /** A charge of a tenant not yet approved refused (403, reason `onboarding_required`), in its API's envelope */
  async refuseChargeUnlessApproved(db: Executor, tenant: ProfileTenant): Promise<void> {
    if (await this.chargesAllowed(db, tenant)) return;
    throw new DomainError(
      'forbidden',
      'no charge is taken until the business profile is approved (onboarding)',
      { details: { reason: 'onboarding_required' } },
    );
  }

  private async approved(db: Executor, tenant: ProfileTenant): Promise<boolean> {
    const row = await db
      .selectFrom('business_profiles')
      .select('status')
      .where('tenant', '=', tenant)
      .executeTakeFirst();
    return row?.status === 'approved';
  }

  /** The legal name, the owners and the directors screened; those no longer on the profile retired */
  private async screen(tx: Tx, tenant: ProfileTenant, profile: BusinessProfile): Promise<void> {
    const party = { subject: tenant, tenant };
    await this.deps.screening.screen(tx, {
      ...party,
      kind: 'legal_entity',
      reference: `legal_entity:${tenant}`,
      name: profile.legalName,
      country: profile.country,
    });
    for (const [kind, people] of [
      ['owner', profile.owners],
      ['director', profile.directors],
    ] as const) {
      const references = people.map((_, i) => `${kind}:${tenant}:${i}`);
      for (const [i, person] of people.entries()) {
        await this.deps.screening.screen(tx, {
          ...party,
          kind,
          reference: references[i] as string,
          name: person.name,
          dateOfBirth: person.dateOfBirth,
          country: person.nationality,
        });
      }
      await this.deps.screening.retire(tx, `${kind}:${tenant}:`, references);
    }
  }

  private async lock(tx: Tx, tenant: ProfileTenant) {
    const row = await tx
      .selectFrom('business_profiles')
      .select('status')
      .where('tenant', '=', tenant)
      .forUpdate()
      .executeTakeFirst();
    if (!row) throw notFound('business profile');
    return row;
  }

  private async update(
    tx: Tx,
    tenant: ProfileTenant,
    values: {
      status: BusinessProfileStatus;
      submitted_at?: Date;
      decision_reason?: string;
      decided_at?: Date;
      decided_by?: string;
    },
  ): Promise<BusinessProfileView> {
    const row = await tx
      .updateTable('business_profiles')
      .set({ ...values, updated_at: this.deps.clock.now() })
      .where('tenant', '=', tenant)
      .returningAll()
      .executeTakeFirstOrThrow();
    return viewOf(row);
  }
}

const stateError = (verb: string, status: string) =>
  new DomainError('invalid_state', `a ${status.replaceAll('_', ' ')} profile cannot be ${verb}`, {
    details: { status },
  });

function viewOf(row: {
  tenant: string;
  status: BusinessProfileStatus;
  profile: Record<string, unknown>;
  decision_reason: string | null;
  submitted_at: Date | null;
  decided_at: Date | null;
  decided_by: string | null;
  updated_at: Date;
}): BusinessProfileView {
  return {
    tenant: row.tenant,
    status: row.status,
    profile: row.profile as unknown as BusinessProfile,
    decisionReason: row.decision_reason,
    submittedAt: row.submitted_at,
    decidedAt: row.decided_at,
    decidedBy: row.decided_by,
    updatedAt: row.updated_at,
  };
}
