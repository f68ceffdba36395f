// Onboarding invitations (docs/compliance.md, Onboarding): the operator invites a merchant or a store by
// email to the hosted onboarding page (pages/onboarding-page-routes.ts). The link holds a random token,
// kept hashed; it opens for 7 days, until the page is finished, or until a newer invitation for the same
// tenant replaces it. The person needs no password to fill the page in: finishing it writes the business
// profile (screened as any profile is) with the documents sent with it, submits it for review, and gives
// them a console account — their tenant's admin, with the password they chose there — all in one
// transaction.
import { randomBytes } from 'node:crypto';
import { auditActionName } from '../audit/audit-actions.ts';
import { appendAudit } from '../audit/audit-trail.ts';
import { addSeconds, type Clock } from '../clock/clock.ts';
import type { ConsoleUsers } from '../console/console-users.ts';
import { hashToken } from '../crypto/hashing.ts';
import type { Db, Executor, Tx } from '../db/database.ts';
import { notFound } from '../errors/domain-error.ts';
import type { UploadedFile } from '../http/uploaded-files.ts';
import type { BusinessProfile } from './business-profile.ts';
import type { BusinessProfiles, BusinessProfileView, ProfileTenant } from './business-profiles.ts';
import type { DocumentKind, ProfileDocuments } from './profile-documents.ts';

export const INVITATION_DAYS = 7;

/** The notifier rail's port as far as an invitation needs it (the platform does not import the rails) */
export interface InvitationMailer {
  send(
    db: Executor,
    message: { channel: 'email'; recipient: string; subject: string; body: string },
  ): Promise<void>;
}

export interface OpenInvitation {
  id: string;
  tenant: ProfileTenant;
  email: string;
  expiresAt: Date;
  /** Whether the invited email has a console account already (then no password is asked) */
  hasAccount: boolean;
}

export class OnboardingInvitations {
  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      notifier: InvitationMailer;
      publicUrl: string;
      profiles: BusinessProfiles;
      documents: ProfileDocuments;
      users: ConsoleUsers;
    },
  ) {}

  /** Invites `email` to fill in the tenant's profile: the link is sent, never answered (it is theirs) */
  async invite(
    tx: Tx,
    input: { tenant: ProfileTenant; email: string; by: string },
  ): Promise<{ id: string; tenant: ProfileTenant; email: string; expiresAt: Date }> {
    const tenantName = await this.nameOf(tx, input.tenant);
    const now = this.deps.clock.now();
    const token = randomBytes(24).toString('base64url');
    // One link opens per tenant: the newest
    await tx
      .updateTable('onboarding_invitations')
      .set({ closed_at: now, closed_as: 'replaced' })
      .where('tenant', '=', input.tenant)
      .where('closed_at', 'is', null)
      .execute();
    const row = await tx
      .insertInto('onboarding_invitations')
      .values({
        tenant: input.tenant,
        email: input.email,
        token_sha256: hashToken(token),
        invited_by: input.by,
        created_at: now,
        expires_at: addSeconds(now, INVITATION_DAYS * 86_400),
      })
      .returning(['id', 'tenant', 'email', 'expires_at'])
      .executeTakeFirstOrThrow();
    await this.deps.notifier.send(tx, {
      channel: 'email',
      recipient: input.email,
      subject: `Set up ${tenantName} on Tessera`,
      body: `You are invited to tell us about ${tenantName}: the business, where it is, and who owns and runs it. It takes about ten minutes and needs no account yet; at the end you choose the password for your console.\n${this.deps.publicUrl}/onboarding/${token}\nThe link is valid until ${row.expires_at.toISOString().slice(0, 10)} and works once.`,
    });
    return { id: row.id, tenant: row.tenant, email: row.email, expiresAt: row.expires_at };
  }

  /** The merchant's or store's name; not found when there is none */
  private async nameOf(db: Executor, tenant: ProfileTenant): Promise<string> {
    const [kind, id = ''] = tenant.split(':');
    const row =
      kind === 'merchant' && /^\d{1,15}$/.test(id)
        ? await db.selectFrom('merchants').select('name').where('id', '=', Number(id)).executeTakeFirst()
        : kind === 'store'
          ? await db.selectFrom('stores').select('name').where('id', '=', id).executeTakeFirst()
          : undefined;
    if (!row) throw notFound(kind === 'store' ? 'store' : 'merchant');
    return row.name;
  }

  /** The invitation a link's token opens; not found when it is unknown, expired, used or replaced */
  async open(db: Executor, token: string, lock = false): Promise<OpenInvitation> {
    if (!/^[\w-]{20,64}$/.test(token)) throw notFound('invitation');
    let query = db
      .selectFrom('onboarding_invitations')
      .select(['id', 'tenant', 'email', 'expires_at'])
      .where('token_sha256', '=', hashToken(token))
      .where('closed_at', 'is', null)
      .where('expires_at', '>', this.deps.clock.now());
    // Locked: a second submission of the same page waits, then finds the link closed
    if (lock) query = query.forUpdate();
    const row = await query.executeTakeFirst();
    if (!row) throw notFound('invitation');
    const account = await db
      .selectFrom('console_users')
      .select('id')
      .where('email', '=', row.email)
      .executeTakeFirst();
    return {
      id: row.id,
      tenant: row.tenant,
      email: row.email,
      expiresAt: row.expires_at,
      hasAccount: account !== undefined,
    };
  }

  /**
   * The page finished: the profile written and submitted, the person's console account made (unless
   * they have one), the link closed — together, or nothing. Each step is in the audit trail, as the
   * invited email.
   */
  async finish(
    token: string,
    profile: BusinessProfile,
    password: string | undefined,
    request: { id: string; ip: string },
    documents: readonly { kind: DocumentKind; files: readonly UploadedFile[] }[] = [],
  ): Promise<BusinessProfileView> {
    return this.deps.db.transaction().execute(async (tx) => {
      const invitation = await this.open(tx, token, true);
      const { profiles } = this.deps;
      let view = await profiles.put(tx, invitation.tenant, profile);
      for (const { kind, files } of documents) {
        if (files.length > 0)
          await this.deps.documents.add(tx, invitation.tenant, { files, kind, by: invitation.email });
      }
      if (view.status === 'draft') view = await profiles.submit(tx, invitation.tenant);
      const [kind, id = ''] = invitation.tenant.split(':') as ['merchant' | 'store', string];
      if (!invitation.hasAccount) {
        await this.deps.users.create(
          { email: invitation.email, password: password ?? '', role: 'admin', tenant: { kind, id } },
          tx,
        );
      }
      await tx
        .updateTable('onboarding_invitations')
        .set({ closed_at: this.deps.clock.now(), closed_as: 'finished' })
        .where('id', '=', invitation.id)
        .execute();
      await appendAudit(tx, {
        at: this.deps.clock.now(),
        actorKind: 'console_user',
        actor: invitation.email,
        source: request.ip,
        action: auditActionName('onboarding page finished'),
        objectId: invitation.tenant,
        tenant: { kind, id },
        detail: {
          invitation: invitation.id,
          accountCreated: !invitation.hasAccount,
          documents: documents.reduce((n, d) => n + d.files.length, 0),
        },
        outcome: 'succeeded',
        status: 200,
        requestId: request.id,
      });
      return view;
    });
  }
}
