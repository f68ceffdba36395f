// Crypto merchant webhooks: a `signature` field in the JSON body. Remove it, flatten nested keys by
// concatenating parent and child names, sort by key, join key + value, HMAC-SHA256 with the store's
// webhook secret, lowercase hex (the public service's scheme; test vectors in docs/wire-compatibility.md).
import { createHmac, timingSafeEqual } from 'node:crypto';

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export function flattenForSignature(
  payload: Record<string, Json>,
  prefix = '',
  into: Record<string, string> = {},
) {
  for (const [key, value] of Object.entries(payload)) {
    if (prefix === '' && key === 'signature') continue;
    if (value !== null && typeof value === 'object') {
      flattenForSignature(value as Record<string, Json>, prefix + key, into);
    } else {
      into[prefix + key] = String(value);
    }
  }
  return into;
}

export function cryptoWebhookSignature(payload: Record<string, Json>, secret: string): string {
  const flat = flattenForSignature(payload);
  const message = Object.keys(flat)
    .sort()
    .map((key) => `${key}${flat[key]}`)
    .join('');
  return createHmac('sha256', secret).update(message, 'utf8').digest('hex');
}

/** Emits keys sorted at every level with the signature added, so the bytes sent are the bytes signed. */
export function signCryptoWebhook(payload: Record<string, Json>, secret: string): string {
  const signed = { ...payload, signature: cryptoWebhookSignature(payload, secret) };
  return JSON.stringify(sortKeys(signed));
}

export function verifyCryptoWebhook<T = Record<string, Json>>(rawBody: string, secret: string): T {
  const parsed = JSON.parse(rawBody) as Record<string, Json>;
  const given = typeof parsed.signature === 'string' ? parsed.signature : '';
  const expected = cryptoWebhookSignature(parsed, secret);
  if (given.length !== expected.length || !timingSafeEqual(Buffer.from(given), Buffer.from(expected))) {
    throw new Error('invalid webhook signature');
  }
  return parsed as T;
}

function sortKeys(value: Json): Json {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys(value[k] as Json)]),
    );
  }
  return value;
}
