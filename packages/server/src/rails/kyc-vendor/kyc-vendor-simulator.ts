import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import type { CapabilityTokens } from '../../platform/crypto/capability-tokens.ts';
import type { Executor } from '../../platform/db/database.ts';
import type { KycDocumentKind } from '../../platform/db/schema.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { newId } from '../../platform/ids.ts';
import type { KycResultSink, KycSession, KycVendor } from './port.ts';

/** How long a hosted session stays open (default: 1 hour) */
export const SESSION_TTL_SECONDS = 60 * 60;

/** The outcomes a tester can pick on the hosted page: the public table of this simulator. */
export const SIMULATED_OUTCOMES = {
  verified: { outcome: 'verified', label: 'Document is genuine and readable (verify)' },
  unreadable: { outcome: 'rejected', label: 'Reject: document unreadable', reason: 'document_unreadable' },
  expired: { outcome: 'rejected', label: 'Reject: document expired', reason: 'document_expired' },
  mismatch: { outcome: 'rejected', label: 'Reject: name does not match', reason: 'name_mismatch' },
} as const;
export type SimulatedOutcome = keyof typeof SIMULATED_OUTCOMES;

export interface SubmittedDocument {
  name: string;
  type: string;
  bytes: number;
  sha256: string;
}

export interface VendorSession {
  id: string;
  kind: KycDocumentKind;
  status: 'open' | 'verified' | 'rejected';
  rejectReason: string | null;
  expiresAt: Date;
}

export class KycVendorSimulator implements KycVendor {
  private sink: KycResultSink | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly publicUrl: string,
    private readonly capabilities: CapabilityTokens,
  ) {}

  /** Connects where results go (the issuing KYC service). */
  connect(sink: KycResultSink): void {
    this.sink = sink;
  }

  async startSession(db: Executor, input: { reference: string; kind: KycDocumentKind }): Promise<KycSession> {
    // The page's address carries a capability for the session (its id and an HMAC), never stored.
    const sessionId = newId('kycSession');
    const now = this.clock.now();
    const expiresAt = addSeconds(now, SESSION_TTL_SECONDS);
    await db
      .insertInto('kyc_vendor_sessions')
      .values({
        id: sessionId,
        reference: input.reference,
        kind: input.kind,
        status: 'open',
        expires_at: expiresAt,
        created_at: now,
      })
      .execute();
    const token = this.capabilities.issue('kyc-session', sessionId);
    return { sessionId, url: `${this.publicUrl}/hosted/kyc/${token}`, expiresAt };
  }

  /** The session a hosted page's token was issued for. */
  async find(db: Executor, token: string): Promise<VendorSession | undefined> {
    const sessionId = this.capabilities.open('kyc-session', token);
    if (!sessionId) return undefined;
    const row = await db
      .selectFrom('kyc_vendor_sessions')
      .selectAll()
      .where('id', '=', sessionId)
      .executeTakeFirst();
    return (
      row && {
        id: row.id,
        kind: row.kind,
        status: row.status,
        rejectReason: row.reject_reason,
        expiresAt: row.expires_at,
      }
    );
  }

  /** Records what the person submitted and reports the result. A verified outcome needs a document. */
  async submit(
    tx: Executor,
    sessionId: string,
    input: { choice: SimulatedOutcome; document?: SubmittedDocument },
  ): Promise<VendorSession> {
    const session = await tx
      .selectFrom('kyc_vendor_sessions')
      .selectAll()
      .where('id', '=', sessionId)
      .forUpdate()
      .executeTakeFirst();
    if (!session) throw new DomainError('not_found', 'this verification link is not valid');
    if (session.status !== 'open')
      throw new DomainError('invalid_state', 'this verification was already completed');
    if (session.expires_at <= this.clock.now())
      throw new DomainError('invalid_state', 'this verification link has expired');
    const picked = SIMULATED_OUTCOMES[input.choice];
    if (picked.outcome === 'verified' && !input.document) {
      throw new DomainError('validation_failed', 'upload a photo or scan of the document to verify it', {
        field: 'document',
      });
    }
    const reason = 'reason' in picked ? picked.reason : null;
    await tx
      .updateTable('kyc_vendor_sessions')
      .set({
        status: picked.outcome,
        reject_reason: reason,
        document_name: input.document?.name ?? null,
        document_type: input.document?.type ?? null,
        document_bytes: input.document?.bytes ?? null,
        document_sha256: input.document?.sha256 ?? null,
        completed_at: this.clock.now(),
      })
      .where('id', '=', sessionId)
      .execute();
    if (!this.sink) throw new Error('KYC vendor simulator has no result sink connected');
    await this.sink(tx, { sessionId, outcome: picked.outcome, ...(reason ? { reason } : {}) });
    return {
      id: session.id,
      kind: session.kind,
      status: picked.outcome,
      rejectReason: reason,
      expiresAt: session.expires_at,
    };
  }
}
