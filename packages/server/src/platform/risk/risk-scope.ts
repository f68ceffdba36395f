// Whose a risk rule or list is (docs/risk.md, Scope): the platform's, read at every tenant's decisions, or
// one tenant's that exists, of a kind the decision point decides for. The admin API and the console check a
// scope the same way.
import type { Executor } from '../db/database.ts';
import { DomainError } from '../errors/domain-error.ts';
import { DECISION_POINTS, type DecisionPointName, type RiskScope } from './decision-points.ts';

export const SCOPE_KINDS = ['platform', 'merchant', 'store', 'partner'] as const;
export type ScopeKind = (typeof SCOPE_KINDS)[number];

/** A scope as the wire writes it: a kind, and the tenant's id unless it is the platform's */
export interface ScopeRef {
  kind: ScopeKind;
  id?: string | undefined;
}

/** 'platform' → {kind}; 'merchant:12' → {kind, id} */
export const scopeRefOf = (scope: RiskScope): ScopeRef => {
  const [kind = 'platform', id] = scope.split(/:(.*)/s) as [ScopeKind, string | undefined];
  return id === undefined ? { kind } : { kind, id };
};

/** 'platform' or '<kind>:<id>' of a tenant that exists (a 404 naming scope.id otherwise). */
export async function checkedScope(
  db: Executor,
  scope: ScopeRef,
  point?: DecisionPointName,
): Promise<RiskScope> {
  if (scope.kind === 'platform') {
    if (scope.id !== undefined)
      throw new DomainError('validation_failed', 'a platform scope has no id', { field: 'scope.id' });
    return 'platform';
  }
  if (scope.id === undefined) {
    throw new DomainError('validation_failed', `a ${scope.kind} scope needs the ${scope.kind}’s id`, {
      field: 'scope.id',
    });
  }
  const kinds: readonly string[] = point ? DECISION_POINTS[point].tenantKinds : [scope.kind];
  if (!kinds.includes(scope.kind)) {
    throw new DomainError(
      'validation_failed',
      `${point} is decided for ${kinds.join(' and ')}s: a ${scope.kind} scope has no rules there`,
      { field: 'scope.kind' },
    );
  }
  if (!(await tenantExists(db, scope.kind, scope.id)))
    throw new DomainError('not_found', `${scope.kind} not found`, { field: 'scope.id' });
  return `${scope.kind}:${scope.id}`;
}

async function tenantExists(
  db: Executor,
  kind: 'merchant' | 'store' | 'partner',
  id: string,
): Promise<boolean> {
  if (kind === 'merchant') {
    if (!/^\d{1,10}$/.test(id)) return false;
    return (
      (await db.selectFrom('merchants').select('id').where('id', '=', Number(id)).executeTakeFirst()) !==
      undefined
    );
  }
  const table = kind === 'store' ? 'stores' : 'partners';
  return (await db.selectFrom(table).select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}
