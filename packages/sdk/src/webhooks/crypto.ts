// Crypto merchant webhooks: a `signature` field in the JSON body. Remove it, flatten nested keys by
// concatenating parent and child names, sort by key, join key + value, HMAC-SHA256 with the store's
// webhook secret, lowercase hex (the public service's scheme and its published test vectors).
import { createHmac, timingSafeEqual } from 'node:crypto';

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** The signature a webhook body must carry (every field but `signature`, flattened and sorted). */
export function cryptoWebhookSignature(payload: Record<string, Json>, secret: string): string {
  const flat: Record<string, string> = {};
  const flatten = (node: Record<string, Json>, prefix: string) => {
    for (const [key, value] of Object.entries(node)) {
      if (prefix === '' && key === 'signature') continue;
      if (value !== null && typeof value === 'object') flatten(value as Record<string, Json>, prefix + key);
      else flat[prefix + key] = String(value);
    }
  };
  flatten(payload, '');
  const message = Object.keys(flat)
    .sort()
    .map((key) => `${key}${flat[key]}`)
    .join('');
  return createHmac('sha256', secret).update(message, 'utf8').digest('hex');
}

/** Parses a webhook body and checks its signature; throws when it does not match. */
export function verifyCryptoWebhook<T = Record<string, Json>>(rawBody: string, secret: string): T {
  const parsed = JSON.parse(rawBody) as Record<string, Json>;
  const given = typeof parsed.signature === 'string' ? parsed.signature : '';
  const expected = cryptoWebhookSignature(parsed, secret);
  if (given.length !== expected.length || !timingSafeEqual(Buffer.from(given), Buffer.from(expected))) {
    throw new Error('invalid webhook signature');
  }
  return parsed as T;
}
