// Four eyes on money (migration 0042; docs/console.md, Approvals). A tenant's policy names, per currency,
// the amount above which a console refund or payout needs a second person, and whether a change of the
// payout bank account does. Such an action is stored as a request — what it will do, encrypted, since a
// new IBAN is in it — until someone other than the requester approves it (it then runs in the approval's
// own transaction, so the action and the decision commit together) or rejects it, or it expires. Each
// step is in the audit trail. Who may decide (a member of the tenant with the action's permission, or an
// operator) is the console's to check; that the requester never approves their own request is checked here.

import { auditActionName } from '../audit/audit-actions.ts';
import { noteChange } from '../audit/audit-changes.ts';
import { type AuditEntry, appendAudit } from '../audit/audit-trail.ts';
import type { Clock } from '../clock/clock.ts';
import type { Encryptor } from '../crypto/encryption.ts';
import type { Db, Executor } from '../db/database.ts';
import type { ApprovalStatus } from '../db/schema.ts';
import { DomainError, notFound } from '../errors/domain-error.ts';
import { newId } from '../ids.ts';

export type ApprovalTenant = { kind: 'merchant' | 'store'; id: string };
/** The actions a tenant's policy names */
export type PolicyAction = 'refund' | 'payout' | 'bankAccountChange';
/** What a request runs: a policy's action, or a risk review's approval that falls under one (reviews.ts) */
export type ApprovalAction = PolicyAction | 'riskReview';
export type { ApprovalStatus };

/** A person who asks or decides: a console user's id and email ('admin token' for the token's sessions) */
export interface Person {
  id: string;
  email: string;
}

export interface ApprovalPolicy {
  /** Currency → amounts strictly above this (minor units) need approval; a currency not named needs none */
  refund: Record<string, bigint>;
  payout: Record<string, bigint>;
  bankAccountChange: boolean;
  expiresAfterSeconds: number;
  updatedAt: Date | null;
}

export const DEFAULT_EXPIRY_SECONDS = 24 * 3600;

export interface ApprovalRequest {
  id: string;
  tenant: ApprovalTenant;
  action: ApprovalAction;
  objectId: string;
  currency: string | null;
  amount: bigint | null;
  summary: string;
  status: ApprovalStatus;
  requestedBy: Person;
  decidedBy: Person | null;
  decidedAt: Date | null;
  outcome: string | null;
  createdAt: Date;
  expiresAt: Date;
}

export interface NewApproval {
  tenant: ApprovalTenant;
  action: ApprovalAction;
  objectId: string;
  money?: { currency: string; amount: bigint };
  summary: string;
  /** What the action needs to run when approved (kept encrypted) */
  payload: Record<string, string>;
  requester: Person;
  requestId: string | null;
}

type Row = {
  id: string;
  tenant_kind: 'merchant' | 'store';
  tenant_id: string;
  action: ApprovalAction;
  object_id: string;
  currency: string | null;
  amount: string | null;
  summary: string;
  status: ApprovalStatus;
  requested_by: string;
  requested_by_email: string;
  decided_by: string | null;
  decided_by_email: string | null;
  decided_at: Date | null;
  outcome: string | null;
  created_at: Date;
  expires_at: Date;
};

export class Approvals {
  constructor(
    private readonly clock: Clock,
    private readonly encryptor: Encryptor,
  ) {}

  async policy(db: Executor, tenant: ApprovalTenant): Promise<ApprovalPolicy> {
    const row = await db
      .selectFrom('approval_policies')
      .selectAll()
      .where('tenant_kind', '=', tenant.kind)
      .where('tenant_id', '=', tenant.id)
      .executeTakeFirst();
    const policy: ApprovalPolicy = {
      refund: {},
      payout: {},
      bankAccountChange: row?.bank_account_change ?? false,
      expiresAfterSeconds: row?.expires_after_seconds ?? DEFAULT_EXPIRY_SECONDS,
      updatedAt: row?.updated_at ?? null,
    };
    if (!row) return policy;
    const thresholds = await db
      .selectFrom('approval_thresholds')
      .select(['action', 'currency', 'above'])
      .where('tenant_kind', '=', tenant.kind)
      .where('tenant_id', '=', tenant.id)
      .orderBy('currency')
      .execute();
    for (const t of thresholds) policy[t.action][t.currency] = BigInt(t.above);
    return policy;
  }

  /** Replaces the tenant's policy as a whole (the caller's transaction). */
  async setPolicy(
    db: Executor,
    tenant: ApprovalTenant,
    policy: Omit<ApprovalPolicy, 'updatedAt'>,
  ): Promise<ApprovalPolicy> {
    const keys = { tenant_kind: tenant.kind, tenant_id: tenant.id };
    const before = await this.policy(db, tenant);
    await db
      .insertInto('approval_policies')
      .values({
        ...keys,
        bank_account_change: policy.bankAccountChange,
        expires_after_seconds: policy.expiresAfterSeconds,
        updated_at: this.clock.now(),
      })
      .onConflict((oc) =>
        oc.columns(['tenant_kind', 'tenant_id']).doUpdateSet((eb) => ({
          bank_account_change: eb.ref('excluded.bank_account_change'),
          expires_after_seconds: eb.ref('excluded.expires_after_seconds'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
    await db
      .deleteFrom('approval_thresholds')
      .where('tenant_kind', '=', tenant.kind)
      .where('tenant_id', '=', tenant.id)
      .execute();
    const rows = (['refund', 'payout'] as const).flatMap((action) =>
      Object.entries(policy[action]).map(([currency, above]) => ({ ...keys, action, currency, above })),
    );
    if (rows.length > 0) await db.insertInto('approval_thresholds').values(rows).execute();
    const after = await this.policy(db, tenant);
    const { updatedAt: _before, ...was } = before;
    const { updatedAt: _after, ...is } = after;
    noteChange(`approval policy of ${tenant.kind} ${tenant.id}`, was, is);
    return after;
  }

  /** Whether this action needs a second person under the tenant's policy. */
  async needed(
    db: Executor,
    tenant: ApprovalTenant,
    action: PolicyAction,
    money?: { currency: string; amount: bigint },
  ): Promise<boolean> {
    const policy = await this.policy(db, tenant);
    if (action === 'bankAccountChange') return policy.bankAccountChange;
    const above = money ? policy[action][money.currency] : undefined;
    return above !== undefined && money !== undefined && money.amount > above;
  }

  /** Keeps the action as a pending request, and records that it was asked for. */
  async request(db: Executor, input: NewApproval): Promise<ApprovalRequest> {
    const now = this.clock.now();
    const { expiresAfterSeconds } = await this.policy(db, input.tenant);
    const id = newId('approval');
    const row = await db
      .insertInto('approval_requests')
      .values({
        id,
        tenant_kind: input.tenant.kind,
        tenant_id: input.tenant.id,
        action: input.action,
        object_id: input.objectId,
        currency: input.money?.currency ?? null,
        amount: input.money?.amount ?? null,
        summary: input.summary,
        payload_enc: this.encryptor.encrypt(JSON.stringify(input.payload), `approval:${id}`),
        requested_by: input.requester.id,
        requested_by_email: input.requester.email,
        status: 'pending',
        created_at: now,
        expires_at: new Date(now.getTime() + expiresAfterSeconds * 1000),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const request = toRequest(row);
    await appendAudit(db, this.record(request, input.requester, 'approval requested', input.requestId));
    return request;
  }

  /** A request, with what it will run; the caller has checked the viewer may see its tenant. */
  async get(db: Executor, id: string): Promise<ApprovalRequest & { payload: Record<string, string> }> {
    const row = await db.selectFrom('approval_requests').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound('approval');
    return { ...toRequest(row), payload: this.payloadOf(row.id, row.payload_enc) };
  }

  /**
   * Approves (running the action, in the caller's transaction) or rejects a pending request. The row is
   * locked first, so two approvers at once run the action once; the second is told it was decided.
   */
  async decide(
    db: Executor,
    id: string,
    decision: 'approve' | 'reject',
    decider: Person,
    requestId: string | null,
    run: (payload: Record<string, string>) => Promise<string>,
  ): Promise<ApprovalRequest> {
    const row = await db
      .selectFrom('approval_requests')
      .selectAll()
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (!row) throw notFound('approval');
    const now = this.clock.now();
    if (row.status !== 'pending')
      throw new DomainError('invalid_state', `this request was ${row.status} already`);
    if (row.expires_at.getTime() <= now.getTime()) {
      throw new DomainError('invalid_state', 'this request has expired: ask again');
    }
    if (decision === 'approve' && row.requested_by === decider.id) {
      throw new DomainError('forbidden', 'you asked for this: another member must approve it (four eyes)');
    }
    const outcome = decision === 'approve' ? await run(this.payloadOf(row.id, row.payload_enc)) : null;
    const decided = await db
      .updateTable('approval_requests')
      .set({
        status: decision === 'approve' ? 'approved' : 'rejected',
        decided_by: decider.id,
        decided_by_email: decider.email,
        decided_at: now,
        outcome,
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const request = toRequest(decided);
    await appendAudit(
      db,
      this.record(
        request,
        decider,
        decision === 'approve' ? 'approval approved' : 'approval rejected',
        requestId,
      ),
    );
    return request;
  }

  /** The sweep: pending requests past their time expire, each recorded. */
  async expireDue(db: Db): Promise<number> {
    return db.transaction().execute(async (tx) => {
      const expired = await tx
        .updateTable('approval_requests')
        .set({ status: 'expired', decided_at: this.clock.now() })
        .where('status', '=', 'pending')
        .where('expires_at', '<=', this.clock.now())
        .returningAll()
        .execute();
      for (const row of expired) {
        await appendAudit(tx, {
          ...this.record(
            toRequest(row),
            { id: 'system', email: 'approvals sweep' },
            'approval expired',
            null,
          ),
          actorKind: 'system',
        });
      }
      return expired.length;
    });
  }

  private payloadOf(id: string, encrypted: string): Record<string, string> {
    return JSON.parse(this.encryptor.decrypt(encrypted, `approval:${id}`)) as Record<string, string>;
  }

  private record(
    request: ApprovalRequest,
    who: Person,
    action: string,
    requestId: string | null,
  ): AuditEntry {
    return {
      at: this.clock.now(),
      actorKind: who.id === 'admin-token' ? 'admin_token' : 'console_user',
      actor: who.email,
      source: null,
      action: auditActionName(action),
      objectId: request.id,
      tenant: request.tenant,
      detail: {
        action: request.action,
        object: request.objectId,
        ...(request.amount !== null ? { amount: request.amount.toString(), currency: request.currency } : {}),
        summary: request.summary,
        requestedBy: request.requestedBy.email,
        ...(request.outcome ? { outcome: request.outcome } : {}),
      },
      outcome: 'succeeded',
      status: null,
      requestId,
    };
  }
}

function toRequest(row: Row): ApprovalRequest {
  return {
    id: row.id,
    tenant: { kind: row.tenant_kind, id: row.tenant_id },
    action: row.action,
    objectId: row.object_id,
    currency: row.currency,
    amount: row.amount === null ? null : BigInt(row.amount),
    summary: row.summary,
    status: row.status,
    requestedBy: { id: row.requested_by, email: row.requested_by_email },
    decidedBy:
      row.decided_by && row.decided_by_email ? { id: row.decided_by, email: row.decided_by_email } : null,
    decidedAt: row.decided_at,
    outcome: row.outcome,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}
