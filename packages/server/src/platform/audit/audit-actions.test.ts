// The audit trail's action table (audit-actions.ts) and its documentation agree: every action name and
// every route or command that does it is listed in docs/operations.md, Audit trail.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AUDIT_ACTIONS } from './audit-actions.ts';

const docs = readFileSync(new URL('../../../../../docs/operations.md', import.meta.url), 'utf8');

describe('the audit action table', () => {
  it('is documented whole', () => {
    const routes = Object.keys(AUDIT_ACTIONS).filter((key) => /^(POST|PUT|PATCH|DELETE|tessera) /.test(key));
    expect(routes.filter((key) => !docs.includes(`\`${key}\``))).toEqual([]);
    const actions = [...new Set(Object.values(AUDIT_ACTIONS).map((row) => row.action))];
    expect(actions.filter((action) => !docs.includes(`| \`${action}\` |`))).toEqual([]);
  });

  it('names actions as object.past_tense, from a closed set of words', () => {
    for (const { action } of Object.values(AUDIT_ACTIONS)) expect(action).toMatch(/^[a-z_]+\.[a-z_]+$/);
  });
});
