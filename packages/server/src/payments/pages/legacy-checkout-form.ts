// The older hosted-checkout form some shop modules still post (Twispay's WHMCS module, docs/
// moving-from-xmoney.md): flat fields — siteId, identifier, amount, currency, orderId, orderType,
// description, backUrl, cardTransactionMode, the customer's firstName … email, per item `item[i]`,
// `units[i]`, `unitPrice[i]`, `subTotal[i]`, `orderTags[i]`, and `custom[…]` — with `checksum`, the base64
// HMAC-SHA512, under the site's secret key, of PHP's http_build_query over the fields sorted by name
// (ksort). Read once here: checked, then turned into the JSON order the rest of the checkout reads,
// signed again with the key that matched, so the card page carries one form whatever the shop posted.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { DomainError, validationFailed } from '../../platform/errors/domain-error.ts';
import type { ChecksumKeys } from './checkout-request.ts';

const MAX_FIELDS = 500;
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Whether a posted form is the flat one (it has no jsonRequest, and names its site). */
export function isLegacyCheckoutForm(form: Record<string, unknown>): boolean {
  return (form.jsonRequest === undefined || form.jsonRequest === '') && form.siteId !== undefined;
}

/** The flat form, checked, as the JSON order's `jsonRequest` and `checksum`. */
export async function legacyFormAsJsonRequest(
  form: Record<string, unknown>,
  keysOf: ChecksumKeys,
): Promise<{ jsonRequest: string; checksum: string }> {
  const fields = Object.entries(form).filter(([name]) => name !== 'checksum');
  if (fields.length > MAX_FIELDS) throw validationFailed('body', `at most ${MAX_FIELDS} fields`);
  for (const [name, value] of fields) {
    if (typeof value !== 'string') throw validationFailed(name, `${name} must be sent once, as text`);
  }
  const flat = fields as [string, string][];
  const checksum = form.checksum;
  if (typeof checksum !== 'string' || !/^[A-Za-z0-9+/]{86}==$/.test(checksum)) {
    throw validationFailed('checksum', 'checksum is missing or is not a base64 HMAC-SHA512');
  }
  const siteText = String(form.siteId);
  const site = /^[1-9]\d{0,9}$/.test(siteText) ? await keysOf(Number(siteText)) : undefined;
  if (!site) throw validationFailed('siteId', 'siteId does not name a site');
  const given = Buffer.from(checksum, 'base64');
  // PHP's http_build_query leaves out a null value, which the module's HTML form still posts as "": a
  // checksum over the fields without the empty ones is accepted too.
  const candidates = [flat, flat.filter(([, value]) => value !== '')].map(signedText);
  const key = site.keys.find((k) =>
    candidates.some((text) => timingSafeEqual(createHmac('sha512', k).update(text, 'utf8').digest(), given)),
  );
  if (!key) {
    throw new DomainError(
      'unauthenticated',
      'the checksum does not match: sign the fields sorted by name, as http_build_query writes them, with the site’s secret key',
      { field: 'checksum' },
    );
  }
  const jsonText = JSON.stringify(orderJsonOf(new Map(flat)));
  return {
    jsonRequest: Buffer.from(jsonText, 'utf8').toString('base64'),
    checksum: createHmac('sha512', key).update(jsonText, 'utf8').digest('base64'),
  };
}

/** What PHP's ksort then http_build_query make of the fields: `name=value&…`, urlencode()d. */
function signedText(fields: [string, string][]): string {
  return [...fields]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${phpUrlencode(name)}=${phpUrlencode(value)}`)
    .join('&');
}

/** PHP's urlencode: everything but letters, digits and `-_.` as %XX, a space as `+`. */
function phpUrlencode(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/** The JSON order (checkout-request.ts reads it) the flat fields describe. */
function orderJsonOf(fields: Map<string, string>): Record<string, unknown> {
  const field = (name: string) => fields.get(name);
  const items: Record<string, string>[] = [];
  const custom: Record<string, unknown> = {};
  for (const [name, value] of fields) {
    const item = /^(item|units|unitPrice|subTotal|orderTags)\[(\d{1,3})\]$/.exec(name);
    if (item) {
      const index = Number(item[2]);
      items[index] = { ...items[index], [item[1] as string]: value };
      continue;
    }
    const path = /^custom((?:\[[^[\]]*\])+)$/.exec(name)?.[1];
    const keys = path ? [...path.matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] as string) : [];
    // A name that would reach an object's prototype is no custom field of a shop's.
    if (keys.length > 0 && !keys.some((key) => UNSAFE_KEYS.has(key))) setPath(custom, keys, value);
  }
  return {
    siteId: field('siteId'),
    customer: {
      identifier: field('identifier'),
      firstName: field('firstName'),
      lastName: field('lastName'),
      country: field('country'),
      state: field('state'),
      city: field('city'),
      address: field('address'),
      zipCode: field('zipCode'),
      phone: field('phone'),
      email: field('email'),
    },
    order: {
      orderId: field('orderId'),
      type: field('orderType'),
      amount: field('amount'),
      currency: field('currency'),
      description: field('description'),
      items: items.filter(Boolean),
    },
    cardTransactionMode: field('cardTransactionMode'),
    backUrl: field('backUrl'),
    invoiceEmail: field('invoiceEmail'),
    language: field('language'),
    ...(Object.keys(custom).length > 0 ? { customData: custom } : {}),
  };
}

function setPath(target: Record<string, unknown>, path: string[], value: string): void {
  let node = target;
  for (const [index, key] of path.entries()) {
    if (index === path.length - 1) node[key] = value;
    else {
      const next = node[key];
      const child = typeof next === 'object' && next !== null ? (next as Record<string, unknown>) : {};
      node[key] = child;
      node = child;
    }
  }
}
