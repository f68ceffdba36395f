// The console's frame and widgets: every page has the header with the search box, the sections the viewer
// may open, and its content; lists are tables with filters and a next-page link; actions are POST forms
// carrying the session's CSRF token and, where they change money or state, a fresh idempotency key.
// How a single value reads (money, a time, a status badge, an id) is values.ts.
import { randomUUID } from 'node:crypto';
import type { Viewer } from './console-users.ts';
import { type Html, h } from './html-template.ts';
import { type LabelKind, labelOf } from './labels.ts';
import { allows, permissionOf } from './permissions.ts';

export interface PageContext {
  viewer: Viewer;
  csrfToken: string;
  sandbox: boolean;
  /** What the search box shows (the last search's text on its answer) */
  searchQuery?: string;
}

interface Section {
  title: string;
  links: [href: string, label: string][];
  /** Shown to an operator, or to a member of this kind of tenant */
  for: 'partner' | 'merchant' | 'store' | 'all' | 'operator';
}

const SECTIONS: Section[] = [
  { title: 'Overview', links: [['/console', 'Overview']], for: 'all' },
  {
    title: 'Payments',
    for: 'merchant',
    links: [
      ['/console/payments/orders', 'Orders'],
      ['/console/payments/transactions', 'Transactions'],
      ['/console/payments/disputes', 'Disputes'],
      ['/console/payments/monitoring', 'Dispute monitoring'],
      ['/console/payments/customers', 'Customers'],
      ['/console/payments/cards', 'Stored cards'],
      ['/console/payments/links', 'Payment links'],
      ['/console/payments/sites', 'Sites'],
    ],
  },
  {
    title: 'Crypto',
    for: 'store',
    links: [
      ['/console/crypto/orders', 'Orders'],
      ['/console/crypto/refunds', 'Refunds'],
      ['/console/crypto/stores', 'Stores'],
    ],
  },
  {
    title: 'Issuing',
    for: 'partner',
    links: [
      ['/console/issuing/partners', 'Partners'],
      ['/console/issuing/customers', 'Customers'],
      ['/console/issuing/accounts', 'Accounts'],
      ['/console/issuing/cards', 'Cards'],
      ['/console/issuing/transactions', 'Transactions'],
      ['/console/issuing/challenges', '3-D Secure challenges'],
      ['/console/issuing/topups', 'Topups'],
    ],
  },
  {
    title: 'Risk',
    for: 'all',
    links: [
      ['/console/risk/reviews', 'Reviews'],
      ['/console/risk/rules', 'Rules'],
      ['/console/risk/lists', 'Lists'],
      ['/console/risk/decisions', 'Decisions'],
    ],
  },
  {
    title: 'Compliance',
    for: 'operator',
    links: [
      ['/console/compliance/cases', 'Cases'],
      ['/console/compliance/screening', 'Screening'],
      ['/console/compliance/monitoring', 'Monitoring'],
      ['/console/compliance/onboarding', 'Onboarding'],
    ],
  },
  { title: 'Ledger', for: 'all', links: [['/console/ledger/accounts', 'Accounts']] },
  {
    title: 'Money out',
    for: 'all',
    links: [
      ['/console/money/balances', 'Balances'],
      ['/console/money/payouts', 'Payouts'],
      ['/console/approvals', 'Approvals'],
      ['/console/money/reports', 'Reports'],
    ],
  },
  {
    title: 'Developers',
    for: 'all',
    links: [
      ['/console/developers/keys', 'API keys'],
      ['/console/developers/webhooks', 'Webhook endpoints'],
      ['/console/developers/events', 'Events'],
    ],
  },
  { title: 'Sandbox', for: 'operator', links: [['/console/sandbox', 'Clock, triggers and inbox']] },
  {
    title: 'Team',
    for: 'all',
    links: [
      ['/console/members', 'Members'],
      ['/console/audit', 'Audit trail'],
    ],
  },
  { title: 'You', for: 'all', links: [['/console/account', 'Sign-in and security']] },
];

/** The sections the viewer has, each with only the links their role may open (permissions.ts). */
function sectionsFor(viewer: Viewer, sandbox: boolean): Section[] {
  return SECTIONS.filter((s) => {
    if (s.title === 'Sandbox' && !sandbox) return false;
    if (s.for === 'all' || viewer.role === 'operator') return true;
    return s.for === viewer.tenant.kind;
  })
    .map((s) => ({
      ...s,
      links: s.links.filter(([href]) => {
        const needed = permissionOf('GET', href);
        return needed !== undefined && allows(viewer.access, needed);
      }),
    }))
    .filter((s) => s.links.length > 0);
}

/**
 * A page's title: one text for the tab and the heading, or an object's page, whose tab names it by its
 * kind and id (what a browser's history and tabs need) and whose heading says what it is in words — the
 * id is not the headline (objectHead shows it, with a button that copies it).
 */
export type PageTitle = string | { tab: string; heading: string };

export function consolePage(ctx: PageContext, pageTitle: PageTitle, content: Html, currentPath = ''): string {
  const title = typeof pageTitle === 'string' ? pageTitle : pageTitle.tab;
  const heading = typeof pageTitle === 'string' ? pageTitle : pageTitle.heading;
  const nav = sectionsFor(ctx.viewer, ctx.sandbox).map(
    (s) =>
      h`<li><span class="nav-title">${s.title}</span><ul>${s.links.map(
        ([href, label]) =>
          h`<li><a href="${href}"${currentPath === href ? h` aria-current="page"` : ''}>${label}</a></li>`,
      )}</ul></li>`,
  );
  const who =
    ctx.viewer.role === 'operator'
      ? `${ctx.viewer.email} · ${ctx.viewer.access}`
      : `${ctx.viewer.email} · ${ctx.viewer.access} · ${ctx.viewer.tenant.kind} ${ctx.viewer.tenant.id}`;
  return shell(
    title,
    h`<header class="top">
<a class="logo" href="/console">Tessera console</a>
<form class="search" role="search" method="get" action="/console/search">
<label for="console-search">Find by id</label>
<input type="search" id="console-search" name="q" value="${ctx.searchQuery ?? ''}" placeholder="order, transaction, customer, card, event… id" maxlength="120" required>
<button type="submit">Find</button>
</form>
<span class="who">${who}</span>
${postForm(ctx, '/console/sign-out', [], 'Sign out', { secondary: true })}
</header>
<div class="frame">
<details class="menu" open><summary>Menu</summary><nav aria-label="Sections"><ul>${nav}</ul></nav></details>
<div class="content" id="content"><h1>${heading}</h1>${content}</div>
</div>`,
  );
}

/** A page outside the signed-in frame (sign-in, second factor). */
export function plainConsolePage(title: string, content: Html): string {
  return shell(title, h`<div class="plain"><h1>${title}</h1>${content}</div>`);
}

function shell(title: string, body: Html): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${h`${title}`} · Tessera console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/console.js" defer></script>
</head>
<body><main>${body}</main></body>
</html>`;
}

export interface Column<R> {
  label: string;
  cell: (row: R) => Html | string | number | bigint | null;
}

/**
 * A list: its filters, a table and the next page's link. A table wider than its place scrolls (focusable,
 * with a shadow at the edge that hides more); on a narrow screen each row stacks into labelled lines.
 */
export function listView<R>(options: {
  rows: R[];
  columns: Column<R>[];
  caption: string;
  filters?: Html;
  nextHref?: string | null;
  empty?: string;
}): Html {
  const table =
    options.rows.length === 0
      ? h`<p class="empty">${options.empty ?? 'Nothing here yet.'}</p>`
      : h`<div class="scroll" tabindex="0" role="region" aria-label="${options.caption}"><table>
<caption>${options.caption}</caption>
<thead><tr>${options.columns.map((c) => h`<th scope="col">${c.label}</th>`)}</tr></thead>
<tbody>${options.rows.map((r) => h`<tr>${options.columns.map((c) => h`<td data-label="${c.label}">${c.cell(r)}</td>`)}</tr>`)}</tbody>
</table></div>`;
  return h`${options.filters ?? ''}${table}${options.nextHref ? h`<p class="pager"><a rel="next" href="${options.nextHref}">Next page</a></p>` : ''}`;
}

export interface FilterField {
  name: string;
  label: string;
  options?: readonly string[];
  /** The options' words (labels.ts); each option still sends its wire value */
  labels?: LabelKind;
  /** A date picker (the value YYYY-MM-DD) */
  type?: 'date';
  /** The options' words where no label table has them */
  optionLabels?: Record<string, string>;
  /** A select with no "any": the first option is the default */
  required?: boolean;
}

/** A GET form narrowing a list; its values come back filled in. */
export function filterForm(
  action: string,
  fields: FilterField[],
  values: Record<string, string | undefined>,
): Html {
  return h`<form class="filters" method="get" action="${action}">${fields.map((f) => {
    // Ids unique on the page, which may hold several filter forms (the reports page does).
    const id = `filter-${
      action
        .split('/')
        .pop()
        ?.replace(/[^\w-]/g, '') ?? ''
    }-${f.name}`;
    const value = values[f.name] ?? '';
    const input = f.options
      ? h`<select id="${id}" name="${f.name}">${f.required ? '' : h`<option value="">any</option>`}${f.options.map(
          (o) =>
            h`<option value="${o}"${o === value ? h` selected` : ''}>${f.labels ? labelOf(f.labels, o).label : (f.optionLabels?.[o] ?? o)}</option>`,
        )}</select>`
      : h`<input id="${id}" name="${f.name}" value="${value}"${f.type ? h` type="${f.type}"` : h` maxlength="120"`}>`;
    // Each label above its own input, the pair wrapping as one when the row is full.
    return h`<span class="filter-field"><label for="${id}">${f.label}</label>${input}</span>`;
  })}<button type="submit">Filter</button></form>`;
}

/** An action an object's page offers: where it opens, and its route (what it needs, permissions.ts) */
export interface ObjectAction {
  href: string;
  label: string;
  route: string;
}

/**
 * The top of an object's page: its amount and status badge as the headline, its id with a button that
 * copies it, and the actions this viewer's role may take on it now (the others are not offered).
 */
export function objectHead(
  viewer: Viewer,
  head: { amount?: string; status?: Html | string; id: string; actions?: ObjectAction[] },
): Html {
  const actions = (head.actions ?? []).filter((a) => {
    const needed = permissionOf('GET', a.route);
    return needed !== undefined && allows(viewer.access, needed);
  });
  return h`<div class="object-head">
${head.amount || head.status ? h`<p class="headline">${head.amount ? h`<span class="amount">${head.amount}</span> ` : ''}${head.status ?? ''}</p>` : ''}
<p class="object-id">Id <code>${head.id}</code> <button type="button" class="copy secondary" data-copy="${head.id}" aria-label="Copy the id ${head.id}">Copy</button></p>
${actions.length ? h`<p class="inline actions">${actions.map((a) => h`<a class="button" href="${a.href}">${a.label}</a> `)}</p>` : ''}
</div>`;
}

/** The facts of one object. */
export function details(pairs: [string, Html | string | number | bigint | null | undefined][]): Html {
  return h`<dl class="facts">${pairs.map(([k, v]) => h`<dt>${k}</dt><dd>${v ?? '—'}</dd>`)}</dl>`;
}

export interface FormField {
  name: string;
  label: string;
  type?: 'text' | 'password' | 'number' | 'url' | 'email' | 'hidden' | 'date' | 'textarea';
  value?: string;
  required?: boolean;
  hint?: string;
  autocomplete?: string;
  inputmode?: 'numeric' | 'decimal';
  /** A choice among these values (a select), `value` chosen */
  options?: readonly string[];
}

/**
 * A POST form with the session's CSRF token; `idempotent` adds a key made for this rendering, so a double
 * click or a resubmitted page runs the action once and shows its first answer.
 */
export function postForm(
  ctx: Pick<PageContext, 'csrfToken'>,
  action: string,
  fields: FormField[],
  submit: string,
  options: {
    idempotent?: boolean;
    danger?: boolean;
    secondary?: boolean;
    error?: { field?: string; message: string };
  } = {},
): Html {
  const error = options.error;
  return h`<form method="post" action="${action}" class="action">
<input type="hidden" name="csrf" value="${ctx.csrfToken}">
${options.idempotent ? h`<input type="hidden" name="idempotencyKey" value="${randomUUID()}">` : ''}
${error ? notice(error.message, 'error') : ''}
${fields.map((f) => {
  if (f.type === 'hidden') return h`<input type="hidden" name="${f.name}" value="${f.value ?? ''}">`;
  const id = `field-${f.name}`;
  const invalid = error?.field === f.name;
  if (f.options) {
    return h`<label for="${id}">${f.label}</label><select id="${id}" name="${f.name}"${invalid ? h` aria-invalid="true"` : ''}>${f.options.map(
      (o) => h`<option value="${o}"${o === f.value ? h` selected` : ''}>${o}</option>`,
    )}</select>${f.hint ? h`<small>${f.hint}</small>` : ''}`;
  }
  if (f.type === 'textarea') {
    // A rule's expression, a list's items: text that runs over lines, sent as written.
    return h`<label for="${id}">${f.label}</label><textarea id="${id}" name="${f.name}" rows="6" spellcheck="false"${f.required ? h` required` : ''}${invalid ? h` aria-invalid="true"` : ''}>${f.value ?? ''}</textarea>${f.hint ? h`<small>${f.hint}</small>` : ''}`;
  }
  return h`<label for="${id}">${f.label}</label><input id="${id}" name="${f.name}" type="${f.type ?? 'text'}" value="${f.value ?? ''}"${f.required ? h` required` : ''}${f.autocomplete ? h` autocomplete="${f.autocomplete}"` : ''}${f.inputmode ? h` inputmode="${f.inputmode}"` : ''}${invalid ? h` aria-invalid="true"` : ''}>${f.hint ? h`<small>${f.hint}</small>` : ''}`;
})}
<button type="submit"${options.danger ? h` class="danger"` : options.secondary ? h` class="secondary"` : ''}>${submit}</button>
</form>`;
}

export const link = (href: string, text: string | number | bigint): Html => h`<a href="${href}">${text}</a>`;

export const notice = (text: string, kind: 'ok' | 'error' = 'ok'): Html =>
  h`<p class="notice${kind === 'error' ? ' error' : ''}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</p>`;

const DONE: Record<string, string> = {
  captured: 'Captured.',
  refunded: 'Refunded.',
  voided: 'Voided: the authorization is released.',
  frozen: 'The card is frozen: new authorizations are declined.',
  unfrozen: 'The card is active again.',
  redelivered: 'Sent again: a new delivery is on its way.',
  saved: 'Saved.',
  held: 'Held for review by a risk rule: the account in place stays in use until the change is approved.',
  revoked: 'Revoked: the key no longer works.',
  answered: 'Evidence sent: the dispute is under review.',
  accepted: 'Accepted: the money stays with the cardholder.',
  requested: 'Waiting for a second person: nothing has happened yet. Another member approves it here.',
  approved: 'Approved: it has been done.',
  refused: 'Refused: what was held is undone.',
  added: 'Added: rules reading the list find them now.',
  deleted: 'Deleted.',
  rejected: 'Rejected: nothing happened.',
  removed: 'Removed: they can no longer sign in.',
  paid: 'The bank booked it: the payout is paid.',
  returned: 'The beneficiary’s bank returned it: its amount is back in the balance.',
  failed: 'The bank rejected it: its amount is back in the balance.',
  noted: 'The note is added.',
  proposed: 'Proposed: a second person makes the decision (four eyes). Nothing is released or held yet.',
  cleared: 'Cleared: what the case held is released.',
  confirmed: 'Confirmed: the subject stays held until a later decision clears the case.',
  decided: 'Decided: the profile’s new status applies now.',
  invited: 'Invited: the link is sent by email and valid for 7 days.',
};

/** The notice of an action just done (a fixed message per outcome: nothing from the address is echoed). */
export function doneNotice(done: string | undefined): Html | '' {
  const text = done ? DONE[done] : undefined;
  return text ? notice(text) : '';
}
