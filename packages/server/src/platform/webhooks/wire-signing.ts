// How each API's webhooks are signed or encrypted on the wire (docs/wire-compatibility.md). The receiving
// side — verifying and decrypting — is @tessera/sdk's; the two are tested against each other and against
// the published vectors.
// - Issuing: a compact JWS (HS512) over the exact body bytes, keyed by the partner's signing key.
// - Crypto: the `signature` body field: drop it, flatten nested keys by joining names, sort by key, join
//   key + value, HMAC-SHA256 with the store's webhook secret, lowercase hex. Keys are emitted sorted at
//   every level, so the bytes sent are the bytes signed.
// - Payments IPN: `base64(iv),base64(ciphertext)`, AES-256-CBC with PKCS#7 and a random 16-byte IV under
//   the site's 32-character key, posted as `opensslResult` and the legacy `result`.
import { createCipheriv, createHmac, randomBytes } from 'node:crypto';
import { CompactSign } from 'jose';

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

const encoder = new TextEncoder();

export function signIssuingWebhook(body: string, signingKey: string): Promise<string> {
  return new CompactSign(encoder.encode(body))
    .setProtectedHeader({ alg: 'HS512', typ: 'JWT' })
    .sign(encoder.encode(signingKey));
}

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

export function signCryptoWebhook(payload: Record<string, Json>, secret: string): string {
  return JSON.stringify(sortKeys({ ...payload, signature: cryptoWebhookSignature(payload, secret) }));
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

export function encryptIpn(plaintext: string, secret: string, iv: Buffer = randomBytes(16)): string {
  const key = Buffer.from(secret, 'utf8');
  if (key.length !== 32) throw new Error('the IPN secret must be 32 bytes (32 ASCII characters)');
  const cipher = createCipheriv('aes-256-cbc', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${iv.toString('base64')},${ciphertext.toString('base64')}`;
}

/** The form body of an IPN: both field names carry the same value. */
export function ipnFormBody(opensslResult: string): string {
  return new URLSearchParams({ opensslResult, result: opensslResult }).toString();
}
