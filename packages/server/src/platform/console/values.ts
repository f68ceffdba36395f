// How a value reads in the console: money in its currency's decimals, times as <time>, a status as a badge
// in words with its tone (labels.ts), a type or kind in words, and ids that open their object.
import { formatAmountIn } from '../money/amount.ts';
import { findAsset } from '../money/assets.ts';
import { link } from './console-layout.ts';
import { type Html, h } from './html-template.ts';
import { type LabelKind, labelOf, readable } from './labels.ts';

/**
 * A link to an object by its id, said as what it is (*order 10001*): a payments id is a number that names
 * an order, a transaction and a customer alike, so a bare one says nothing (the console crawl refuses it).
 */
export const objectLink = (kind: string, href: string, id: string | number | bigint): Html =>
  h`<a href="${href}"><span class="id-kind">${kind}</span> ${id}</a>`;

/** An id that opens its object wherever it is (through the search). */
export const idLink = (id: string | number | bigint | null | undefined): Html | string =>
  id === null || id === undefined ? '—' : link(`/console/search?q=${encodeURIComponent(String(id))}`, id);

/**
 * The ids an event is about, each named by what it is: the payload's own member holding it (`orderId` →
 * "order", `payment_uuid` → "payment"), "object" where the payload does not say, each opening its page.
 */
export function labelledIds(ids: readonly string[], payload: unknown): Html {
  const names = new Map<string, string>();
  const visit = (node: unknown, depth: number) => {
    if (depth > 3 || node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if ((typeof value === 'string' || typeof value === 'number') && !names.has(String(value))) {
        const kind = /^(.+?)(?:Id|_id|Uuid|_uuid)$/.exec(key)?.[1];
        if (kind)
          names.set(
            String(value),
            kind
              .replace(/([a-z])([A-Z])/g, '$1 $2')
              .replace(/_/g, ' ')
              .toLowerCase(),
          );
      } else visit(value, depth + 1);
    }
  };
  visit(payload, 0);
  return h`${ids.map(
    (id) =>
      h`<a class="labelled-id" href="/console/search?q=${encodeURIComponent(id)}"><span class="id-kind">${names.get(id) ?? 'object'}</span> ${id}</a> `,
  )}`;
}

export function money(minor: string | bigint | null | undefined, currency: string): string {
  if (minor === null || minor === undefined) return '—';
  // An asset this build does not know (data from a newer version) still shows, in minor units.
  return findAsset(currency)
    ? `${formatAmountIn(BigInt(minor), currency)} ${currency}`
    : `${minor} (minor units of ${currency})`;
}

export const when = (date: Date | null | undefined): Html | string =>
  date
    ? h`<time datetime="${date.toISOString()}">${date.toISOString().replace('T', ' ').slice(0, 19)}</time>`
    : '—';

/** A status as a badge: its words and tone (labels.ts), the wire value as its title */
export const status = (value: string | null | undefined, kind: LabelKind): Html | string => {
  if (value === null || value === undefined) return '—';
  const { label, tone } = labelOf(kind, value);
  return h`<span class="status tone-${tone}" data-status="${value}" title="${value}">${label}</span>`;
};

/**
 * A code that is no state (a type, a purpose, a kind) in words: its label when a table words it, else the
 * code made readable; the code as its title
 */
export const term = (value: string | null | undefined, kind?: LabelKind): Html | string => {
  if (value === null || value === undefined) return '—';
  return h`<span class="term" data-value="${value}" title="${value}">${kind ? labelOf(kind, value).label : readable(value)}</span>`;
};

/** A detail row's type or kind: its words, and beside them the wire value */
export const termFact = (value: string | null | undefined, kind: LabelKind): Html | string =>
  value === null || value === undefined ? '—' : h`${term(value, kind)} <code class="wire">${value}</code>`;

/** A detail row's status: the badge, and beside it the wire value the API answers and search finds */
export const statusFact = (value: string | null | undefined, kind: LabelKind): Html | string => {
  if (value === null || value === undefined) return '—';
  return labelOf(kind, value).label === value
    ? status(value, kind)
    : h`${status(value, kind)} <code class="wire">${value}</code>`;
};
