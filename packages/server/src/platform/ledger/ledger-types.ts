// What the ledger takes and answers: accounts, legs, transfers, holds and the balance changes a posting
// makes. Apart from the ledger (ledger.ts) so the code that writes a posting's rows (posting-rows.ts) and the
// code that plans it (post-operations.ts) share them without importing the ledger.
export interface OpenAccountInput {
  ownerType: string;
  ownerId: string;
  asset: string;
  /** What the account is for within its owner: 'main', 'settlement', 'fees', … */
  purpose: string;
  /** A bounded account can never have posted − pending debits below zero */
  isBounded: boolean;
}

export interface LedgerAccount extends OpenAccountInput {
  id: string;
  posted: bigint;
  pendingDebits: bigint;
  pendingCredits: bigint;
  /** What can still be spent: posted − pending debits */
  available: bigint;
}

export interface Leg {
  accountId: string;
  /** Positive credits the account, negative debits it */
  amount: bigint;
}

export interface TransferInput {
  operationId: string;
  legs: Leg[];
  metadata?: Record<string, unknown>;
}

export interface HoldInput {
  operationId: string;
  /** The account whose funds are held (debited when the hold posts) */
  debitAccountId: string;
  creditAccountId: string;
  amount: bigint;
  /** When the hold lapses by itself; the domain's sweep expires it (default: never) */
  expiresAt?: Date;
  metadata?: Record<string, unknown>;
}

export interface LedgerTransaction {
  id: string;
  operationId: string;
  kind: 'transfer' | 'hold' | 'hold_post';
  status: 'posted' | 'pending' | 'voided' | 'expired' | 'settled';
  asset: string;
  holdId: string | null;
  expiresAt: Date | null;
  metadata: Record<string, unknown>;
  legs: Leg[];
  /** True when this call found the operation already done (idempotent replay) */
  isReplay: boolean;
}

export interface BalanceChange {
  posted: bigint;
  pendingDebits: bigint;
  pendingCredits: bigint;
}

export interface PostOperation {
  operationId: string;
  kind: LedgerTransaction['kind'];
  status: 'posted' | 'pending';
  legs: Leg[];
  changes: Map<string, BalanceChange>;
  requestHash: string;
  holdId?: string;
  expiresAt?: Date | undefined;
  metadata?: Record<string, unknown> | undefined;
}
