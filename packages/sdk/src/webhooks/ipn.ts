// Payments IPN: a form POST whose `opensslResult` (and legacy `result`) field is
// base64(IV) + "," + base64(ciphertext), AES-256-CBC with PKCS#7 padding, keyed by the site's
// 32-character secret key (the part after `sk_test_`/`sk_live_`). The receiver answers 200 with `OK`.
import { createDecipheriv } from 'node:crypto';

/** Decrypts an IPN's (or a hosted checkout result's) `opensslResult` into its JSON. */
export function decryptIpn<T = Record<string, unknown>>(opensslResult: string, secret: string): T {
  const key = Buffer.from(secret.replace(/^sk_(?:test|live)_/, ''), 'utf8');
  if (key.length !== 32) throw new Error('the site key must be 32 bytes (32 ASCII characters)');
  const [ivText, bodyText] = opensslResult.split(',');
  if (!ivText || !bodyText) throw new Error('opensslResult is not "base64(iv),base64(ciphertext)"');
  const decipher = createDecipheriv('aes-256-cbc', key, Buffer.from(ivText, 'base64'));
  const plaintext = Buffer.concat([
    decipher.update(Buffer.from(bodyText, 'base64')),
    decipher.final(),
  ]).toString('utf8');
  return JSON.parse(plaintext) as T;
}
