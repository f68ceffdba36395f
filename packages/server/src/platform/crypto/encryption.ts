// Data encrypted at rest (card numbers, webhook signing keys that must be usable to sign):
// AES-256-GCM, random 96-bit nonce, versioned text format "v1:<nonce>:<ciphertext+tag>" in base64url.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync } from 'node:crypto';
import { pooledRandomBytes } from './pooled-random.ts';

const VERSION = 'v1';

export class Encryptor {
  private readonly key: Buffer;
  private readonly fingerprintKey: Buffer;

  constructor(masterKey: Buffer) {
    if (masterKey.length !== 32) throw new Error('the encryption key must be 32 bytes');
    this.key = derive(masterKey, 'tessera/at-rest/v1');
    this.fingerprintKey = derive(masterKey, 'tessera/fingerprint/v1');
  }

  /**
   * A keyed fingerprint (HMAC-SHA256) to find equal secrets without storing them: the same value and
   * purpose always give the same text, and nothing about the value can be learnt from it.
   */
  fingerprint(purpose: string, value: string): string {
    return createHmac('sha256', this.fingerprintKey).update(`${purpose}\u0000${value}`).digest('base64url');
  }

  encrypt(plaintext: string, associatedData = ''): string {
    // 96 bits, used at once: createCipheriv copies it and it is encoded before any other draw
    const nonce = pooledRandomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(associatedData));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}:${nonce.toString('base64url')}:${body.toString('base64url')}`;
  }

  /** Associated data binds a ciphertext to its row, so a value copied onto another row fails to decrypt. */
  decrypt(ciphertext: string, associatedData = ''): string {
    const [version, nonceText, bodyText] = ciphertext.split(':');
    if (version !== VERSION || !nonceText || !bodyText) throw new Error('unknown ciphertext format');
    const body = Buffer.from(bodyText, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(nonceText, 'base64url'));
    decipher.setAAD(Buffer.from(associatedData));
    decipher.setAuthTag(body.subarray(body.length - 16));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString(
      'utf8',
    );
  }
}

/** A purpose-bound subkey, so one configured key never serves two algorithms. */
export function derive(masterKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), purpose, 32));
}

/** Accepts 64 hex characters or base64/base64url of 32 bytes. */
export function parseEncryptionKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : Buffer.from(trimmed, 'base64');
  if (key.length !== 32)
    throw new Error('TESSERA_ENCRYPTION_KEY must be 32 bytes (64 hex characters or base64)');
  return key;
}
