// The KYC vendor rail: hosted document checks (identity, proof of address). Tessera opens a session,
// hands the customer the vendor's URL, and the vendor reports the result back.
import type { Executor } from '../../platform/db/database.ts';
import type { KycDocumentKind } from '../../platform/db/schema.ts';

export interface KycSession {
  sessionId: string;
  /** The hosted page the customer opens */
  url: string;
  expiresAt: Date;
}

export interface KycVendorResult {
  sessionId: string;
  outcome: 'verified' | 'rejected';
  reason?: string;
}

/** Where vendor results go; called in the same transaction that records them on the vendor side. */
export type KycResultSink = (db: Executor, result: KycVendorResult) => Promise<void>;

export interface KycVendor {
  startSession(db: Executor, input: { reference: string; kind: KycDocumentKind }): Promise<KycSession>;
  /** Where the vendor's results go (one sink: the issuing API's KYC). */
  connect(sink: KycResultSink): void;
}
