// What the risk room's pages share (docs/risk.md, Console). Whose risk a viewer works on: an operator every
// scope, and writes in the one the form names (the platform's, or a tenant's); a member only their own
// tenant's rules, lists, reviews and decisions, and writes only there (the platform's rules are the
// operator's: a member does not see them). And the room's tabs, its paging and its decision records.

import { z } from 'zod';
import { link, listView } from '../../../platform/console/console-layout.ts';
import type { Viewer } from '../../../platform/console/console-users.ts';
import { type Html, h } from '../../../platform/console/html-template.ts';
import { allows } from '../../../platform/console/permissions.ts';
import { nextHref } from '../../../platform/console/route-kit.ts';
import { objectLink, when } from '../../../platform/console/values.ts';
import type { Db } from '../../../platform/db/database.ts';
import { DomainError } from '../../../platform/errors/domain-error.ts';
import {
  COMMON_ATTRIBUTES,
  DECISION_POINT_NAMES,
  DECISION_POINTS,
  type DecisionPointName,
  featureName,
  type RiskScope,
  velocityFeatures,
} from '../../../platform/risk/decision-points.ts';
import type { DecisionRecord } from '../../../platform/risk/risk.ts';
import { checkedScope, SCOPE_KINDS, type ScopeKind, scopeRefOf } from '../../../platform/risk/risk-scope.ts';

/** The scopes a viewer sees (undefined: every one, for an operator). */
export const riskScopesOf = (viewer: Viewer): RiskScope[] | undefined =>
  viewer.role === 'operator' ? undefined : [`${viewer.tenant.kind}:${viewer.tenant.id}`];

/** The decision points a viewer may write rules for: an operator every one, a member their tenant kind's. */
export const pointsFor = (viewer: Viewer): DecisionPointName[] =>
  viewer.role === 'operator'
    ? [...DECISION_POINT_NAMES]
    : DECISION_POINT_NAMES.filter((p) =>
        (DECISION_POINTS[p].tenantKinds as readonly string[]).includes(viewer.tenant.kind),
      );

/**
 * The scope a write goes to: a member's own tenant whatever the form says; for an operator the form's
 * `scope` (platform, merchant:<id>, store:<id>, partner:<id>), checked as the admin API checks it.
 */
export async function writeScope(
  db: Db,
  viewer: Viewer,
  named: string | undefined,
  point?: DecisionPointName,
): Promise<RiskScope> {
  const ref =
    viewer.role === 'operator'
      ? scopeRefOf((named ?? '').trim() || 'platform')
      : { kind: viewer.tenant.kind, id: viewer.tenant.id };
  if (!(SCOPE_KINDS as readonly string[]).includes(ref.kind) || (ref.kind !== 'platform' && !ref.id)) {
    throw new DomainError(
      'validation_failed',
      'scope is platform, merchant:<id>, store:<id> or partner:<id>',
      {
        field: 'scope',
      },
    );
  }
  try {
    return await checkedScope(db, { kind: ref.kind as ScopeKind, id: ref.id }, point);
  } catch (err) {
    // The form has one scope field where the API has scope.kind and scope.id; a tenant that does not
    // exist is a mistake on the form, shown there, not a page that is not found.
    if (err instanceof DomainError && err.field?.startsWith('scope'))
      throw new DomainError('validation_failed', err.message, { field: 'scope' });
    throw err;
  }
}

/** A member's reviews and decisions are their tenant's (an operator reads every tenant's). */
export const tenantsOf = (viewer: Viewer): { tenants?: RiskScope[] } => {
  const tenants = riskScopesOf(viewer);
  return tenants ? { tenants } : {};
};

/** What a decision point decides about, in words: its object ids are the APIs' own (a payments one a number) */
const OBJECT_KINDS: Record<DecisionPointName, string> = {
  'payments.charge': 'transaction',
  'issuing.authorization': 'card transaction',
  'issuing.topup': 'topup',
  'crypto.order': 'crypto order',
  'crypto.refund': 'crypto refund',
  payout: 'payout',
  'bank_account.change': 'bank account',
};

/** A decided object, said as what it is (*transaction 70006*), opening its page through the search */
export const decidedObject = (point: string, objectId: string): Html =>
  objectLink(
    OBJECT_KINDS[point as DecisionPointName] ?? 'object',
    `/console/search?q=${encodeURIComponent(objectId)}`,
    objectId,
  );

/** The risk room's tabs, atop each of its pages, the one it belongs to marked. */
export type RiskTab = 'rules' | 'lists' | 'reviews' | 'decisions';
export const riskTabs = (current: RiskTab): Html =>
  h`<nav class="inline tabs" aria-label="Risk">${(['rules', 'lists', 'reviews', 'decisions'] as const).map(
    (tab) =>
      h`<a href="/console/risk/${tab}"${tab === current ? h` aria-current="page"` : ''}>${tab[0]?.toUpperCase()}${tab.slice(1)}</a> `,
  )}</nav>`;

/** A rule's name, opening its page (a sandbox test value is no rule: its name alone). */
export const ruleLink = (r: { ruleId: string; ruleName: string }): Html | string =>
  r.ruleId === 'sandbox' ? r.ruleName : link(`/console/risk/rules/${r.ruleId}`, r.ruleName);

/** The next page of a list read by id: the same filters and the last id seen (as `after` or `before`). */
export function pageAfter(
  path: string,
  filters: Record<string, string | undefined>,
  rows: readonly { id: string }[],
  size: number,
  key: 'after' | 'before' = 'after',
): string | null {
  const last = rows.at(-1);
  if (rows.length < size || !last) return null;
  // The notice of what was just done stays on this page.
  const { done: _done, ...kept } = filters;
  return nextHref(path, kept, last.id, key);
}

/**
 * Decision records: which rule decided what about which object, and the values it read — an email, an IP:
 * shown only to a role that sees personal data.
 */
export function decisionTable(
  viewer: Viewer,
  decisions: readonly DecisionRecord[],
  caption: string,
  next: string | null = null,
): Html {
  const personal = allows(viewer.access, 'personal');
  return listView({
    caption,
    rows: [...decisions],
    empty: 'No decisions recorded.',
    nextHref: next,
    columns: [
      {
        label: 'Object',
        cell: (d) => decidedObject(d.decisionPoint, d.objectId),
      },
      { label: 'Decision point', cell: (d) => d.decisionPoint },
      { label: 'Rule', cell: (d) => ruleLink(d) },
      {
        label: 'Action',
        cell: (d) =>
          h`${d.action}${d.acted ? '' : h` <small>(${d.mode === 'shadow' ? 'shadow' : 'a rule before it decided'})</small>`}`,
      },
      { label: 'Tenant', cell: (d) => d.tenant },
      { label: 'At', cell: (d) => when(d.at) },
      {
        label: 'Values read',
        cell: (d) =>
          personal
            ? h`<details><summary>${Object.keys(d.attributes).length} values</summary><pre class="values">${JSON.stringify(d.attributes, null, 1)}</pre></details>`
            : 'hidden (personal data)',
      },
    ],
  });
}

/** A draft's expression as the forms take it (the service checks what it says) */
export const expressionField = z.string().trim().min(1).max(4_000);

/** The decision point a form names, one the viewer may write rules for (a 400 naming it otherwise). */
export function pointOf(viewer: Viewer, value: string | undefined): DecisionPointName {
  const points = pointsFor(viewer);
  const point = points.find((p) => p === value);
  if (!point)
    throw new DomainError('validation_failed', `decisionPoint must be one of ${points.join(', ')}`, {
      field: 'decisionPoint',
    });
  return point;
}

/** Each decision point's attributes, as the type checker reads them: what an expression may say. */
export function attributeReference(points: readonly DecisionPointName[]): Html {
  const velocity = velocityFeatures().map((f) => `velocity.${featureName(f)}`);
  return h`<h2>Attributes</h2>${points.map((point) => {
    const rows: { name: string; type: string; description: string }[] = [];
    for (const [name, doc] of Object.entries(DECISION_POINTS[point].attributes)) {
      if ('type' in doc && typeof doc.type === 'string')
        rows.push({ name, ...(doc as { type: string; description: string }) });
      else
        for (const [member, d] of Object.entries(
          doc as Record<string, { type: string; description: string }>,
        ))
          rows.push({ name: `${name}.${member}`, ...d });
    }
    return h`<details><summary>${point}: ${DECISION_POINTS[point].actions.join(', ')}</summary>
<p>${DECISION_POINTS[point].description}.</p>${listView({
      caption: `Attributes at ${point}`,
      rows,
      columns: [
        { label: 'Attribute', cell: (r) => h`<code>${r.name}</code>` },
        { label: 'Type', cell: (r) => r.type },
        { label: 'What it holds', cell: (r) => r.description },
      ],
    })}</details>`;
  })}<details><summary>Every decision point</summary><p>${Object.entries(COMMON_ATTRIBUTES).map(([name, doc]) => h`<code>${name}</code> (${doc.type}): ${doc.description}. `)}</p></details><details><summary>Velocity (every decision point)</summary><p>Counts and sums (minor units) of the same key over a window, this object included; declines per card and IP over an hour: ${velocity.map((v, i) => h`${i ? ', ' : ''}<code>${v}</code>`)}. Lists: <code>ip in list('blocked_ips')</code>.</p></details>`;
}
