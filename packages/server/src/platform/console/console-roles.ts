// The console's roles (docs/console.md, Roles), on their own: the CLI checks a role without loading the
// console's users service.
import type { ConsoleRole } from '../db/schema.ts';

/** The roles an operator's people take; the rest are a tenant's */
export const OPERATOR_ROLES: readonly ConsoleRole[] = ['operator', 'operator-viewer', 'compliance'];
export const CONSOLE_ROLES = [
  'operator',
  'operator-viewer',
  'compliance',
  'viewer',
  'developer',
  'finance',
  'admin',
] as const satisfies readonly ConsoleRole[];
