// What a viewer may see of each API: an operator everything; a member only their own tenant's rows. Every
// console read goes through one of these, so a foreign id is a 404 exactly like an unknown one.
import { type RawBuilder, sql } from 'kysely';
import { ownedBy } from '../db/owner-hash.ts';
import { notFound } from '../errors/domain-error.ts';
import type { TenantKind, Viewer } from './console-users.ts';

/**
 * The SQL condition restricting `column` (a tenant id column) to the viewer's tenant of this kind: none for
 * an operator; for a member of another kind of tenant there is nothing to see, so the section is not found.
 */
export function tenantCondition(
  viewer: Viewer,
  kind: TenantKind,
  column: string,
  /** `hashed`: the column's index is on its hash (platform/db/owner-hash.ts) */
  options: { hashed?: boolean } = {},
): RawBuilder<boolean> {
  if (viewer.role === 'operator') return sql<boolean>`true`;
  if (viewer.tenant.kind !== kind) throw notFound('page');
  if (options.hashed) return ownedBy(column, viewer.tenant.id);
  // Compared in the column's own type (an untyped parameter), so the column's indexes serve it.
  return sql<boolean>`${sql.ref(column)} = ${viewer.tenant.id}`;
}

/** Whether the viewer may open this tenant (an operator any; a member only their own). */
export const ownsTenant = (viewer: Viewer, kind: TenantKind, id: string): boolean =>
  viewer.role === 'operator' || (viewer.tenant.kind === kind && viewer.tenant.id === id);

/** Whether the viewer may open this API's section at all. */
export const sees = (viewer: Viewer, kind: TenantKind): boolean =>
  viewer.role === 'operator' || viewer.tenant.kind === kind;
