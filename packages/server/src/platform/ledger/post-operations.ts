// A transfer or a hold as the posting ledger_post writes: its merged legs, each account's balance change and
// the hash that tells a replay of the operation from a different use of its id; and the ledger's refusals
// as the DomainError a caller sees.
import { hash } from 'node:crypto';
import { pgErrorCode } from '../db/database.ts';
import { DomainError } from '../errors/domain-error.ts';
import type { HoldInput, Leg, PostOperation, TransferInput } from './ledger-types.ts';

export const insufficientFunds = (accountId: string) =>
  new DomainError('limit_exceeded', 'insufficient funds', {
    details: { reason: 'insufficient_funds', accountId },
  });

export function transferOperation(input: TransferInput): PostOperation {
  const legs = mergeLegs(input.legs);
  if (legs.length < 2) throw new DomainError('validation_failed', 'a transfer needs at least two accounts');
  if (legs.reduce((sum, leg) => sum + leg.amount, 0n) !== 0n) {
    throw new DomainError('validation_failed', 'a transfer must balance: its legs sum to zero');
  }
  return {
    operationId: input.operationId,
    kind: 'transfer',
    status: 'posted',
    legs,
    changes: new Map(
      legs.map((leg) => [leg.accountId, { posted: leg.amount, pendingDebits: 0n, pendingCredits: 0n }]),
    ),
    requestHash: hashRequest('transfer', legs),
    metadata: input.metadata,
  };
}

export function holdOperation(input: HoldInput): PostOperation {
  assertPositive(input.amount);
  if (input.debitAccountId === input.creditAccountId) {
    throw new DomainError('validation_failed', 'a hold moves funds between two different accounts');
  }
  const legs: Leg[] = [
    { accountId: input.debitAccountId, amount: -input.amount },
    { accountId: input.creditAccountId, amount: input.amount },
  ];
  return {
    operationId: input.operationId,
    kind: 'hold',
    status: 'pending',
    legs,
    changes: new Map([
      [input.debitAccountId, { posted: 0n, pendingDebits: input.amount, pendingCredits: 0n }],
      [input.creditAccountId, { posted: 0n, pendingDebits: 0n, pendingCredits: input.amount }],
    ]),
    requestHash: hashRequest('hold', legs, input.expiresAt?.toISOString()),
    expiresAt: input.expiresAt,
    metadata: input.metadata,
  };
}

/**
 * The ledger's refusal of a staged posting (ledger_post_strict, migration 0026), as the DomainError an
 * immediate posting would have thrown; undefined for any other error.
 */
export function ledgerRefusal(err: unknown): DomainError | undefined {
  if (pgErrorCode(err) !== LEDGER_REFUSED) return undefined;
  const { message, detail } = err as { message: string; detail?: string };
  switch (message) {
    case 'insufficient_funds':
      return insufficientFunds(detail ?? '');
    case 'asset_mismatch':
      return new DomainError('validation_failed', 'all accounts of a ledger transaction hold one asset');
    case 'not_found':
      return new DomainError('not_found', `ledger account ${detail} not found`);
    default:
      return new DomainError('conflict', `the ledger refused the operation (${message})`);
  }
}

/** SQLSTATE of ledger_post_strict's refusals */
const LEDGER_REFUSED = 'TL001';

export function mergeLegs(legs: Leg[]): Leg[] {
  const byAccount = new Map<string, bigint>();
  for (const leg of legs) byAccount.set(leg.accountId, (byAccount.get(leg.accountId) ?? 0n) + leg.amount);
  return [...byAccount]
    .filter(([, amount]) => amount !== 0n)
    .map(([accountId, amount]) => ({ accountId, amount }));
}

export function assertPositive(amount: bigint): void {
  if (amount <= 0n)
    throw new DomainError('validation_failed', 'the amount must be greater than zero', { field: 'amount' });
}

export function hashRequest(kind: string, legs: Leg[], extra = ''): string {
  const canonical = [...legs]
    .sort((a, b) => (a.accountId < b.accountId ? -1 : 1))
    .map((l) => `${l.accountId}:${l.amount}`)
    .join('|');
  return hash('sha256', `${kind}|${canonical}|${extra}`, 'hex');
}
