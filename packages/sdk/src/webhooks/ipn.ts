// Payments IPN: a form POST whose `opensslResult` (and legacy `result`) field is
// base64(IV) + "," + base64(ciphertext), AES-256-CBC with PKCS#7 padding and a random 16-byte IV,
// keyed by the site's 32-character IPN secret. The receiver answers 200 with the body `OK`.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

function keyOf(secret: string): Buffer {
  const key = Buffer.from(secret, 'utf8');
  if (key.length !== 32) throw new Error('the IPN secret must be 32 bytes (32 ASCII characters)');
  return key;
}

export function encryptIpn(plaintext: string, secret: string, iv: Buffer = randomBytes(16)): string {
  const cipher = createCipheriv('aes-256-cbc', keyOf(secret), iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${iv.toString('base64')},${ciphertext.toString('base64')}`;
}

export function decryptIpn<T = Record<string, unknown>>(opensslResult: string, secret: string): T {
  const [ivText, bodyText] = opensslResult.split(',');
  if (!ivText || !bodyText) throw new Error('opensslResult is not "base64(iv),base64(ciphertext)"');
  const decipher = createDecipheriv('aes-256-cbc', keyOf(secret), Buffer.from(ivText, 'base64'));
  const plaintext = Buffer.concat([
    decipher.update(Buffer.from(bodyText, 'base64')),
    decipher.final(),
  ]).toString('utf8');
  return JSON.parse(plaintext) as T;
}

/** The form body Tessera posts: both field names carry the same value. */
export function ipnFormBody(opensslResult: string): string {
  return new URLSearchParams({ opensslResult, result: opensslResult }).toString();
}
