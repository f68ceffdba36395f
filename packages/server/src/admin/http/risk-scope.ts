// The scope of a risk rule or list on the admin API's wire (platform/risk/risk-scope.ts checks it), and the
// paging the risk routes share.
import { z } from 'zod';
import { SCOPE_KINDS } from '../../platform/risk/risk-scope.ts';

export const scopeKinds = z.enum(SCOPE_KINDS);
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
