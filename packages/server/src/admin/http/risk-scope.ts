// The scope of a risk rule or list in the admin API (docs/risk.md): the platform's, or one tenant's that
// exists; and the paging the risk routes share.
import { z } from 'zod';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { DECISION_POINTS, type DecisionPointName } from '../../platform/risk/decision-points.ts';
import type { AdminDeps } from './admin-deps.ts';

export const scopeKinds = z.enum(['platform', 'merchant', 'store', 'partner']);
export const scopeField = z
  .strictObject({
    kind: scopeKinds,
    id: z.string().min(1).max(100).optional().describe('the tenant’s id; absent for the platform'),
  })
  .describe('whose rule or list: the platform’s (every tenant) or one tenant’s');
export const scopeView = z.object({ kind: scopeKinds, id: z.string().optional() });

export const pageQuery = {
  after: z.string().max(100).optional().describe('the last id of the previous page'),
  limit: z.coerce.number().int().min(1).max(500).default(100),
};

export const scopeOf = (scope: string) => {
  const [kind = 'platform', id] = scope.split(/:(.*)/s) as [z.infer<typeof scopeKinds>, string | undefined];
  return id === undefined ? { kind } : { kind, id };
};

/** 'platform' or '<kind>:<id>' of a tenant that exists (a 404 naming scope.id otherwise). */
export async function checkedScope(
  deps: Pick<AdminDeps, 'db'>,
  scope: z.infer<typeof scopeField>,
  point?: DecisionPointName,
): Promise<string> {
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
  const exists = await tenantExists(deps, scope.kind, scope.id);
  if (!exists) throw new DomainError('not_found', `${scope.kind} not found`, { field: 'scope.id' });
  return `${scope.kind}:${scope.id}`;
}

async function tenantExists(
  deps: Pick<AdminDeps, 'db'>,
  kind: 'merchant' | 'store' | 'partner',
  id: string,
): Promise<boolean> {
  const table = kind === 'merchant' ? 'merchants' : kind === 'store' ? 'stores' : 'partners';
  if (kind === 'merchant' && !/^\d{1,10}$/.test(id)) return false;
  const row = await deps.db
    .selectFrom(table)
    .select('id')
    .where('id', '=', kind === 'merchant' ? (Number(id) as never) : (id as never))
    .executeTakeFirst();
  return row !== undefined;
}
