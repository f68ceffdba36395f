// Data encrypted at rest (card numbers, webhook signing keys that must be usable to sign):
// AES-256-GCM, random 96-bit nonce, versioned text format "v1:<nonce>:<ciphertext+tag>" in base64url, or
// the same as bytes (nonce, ciphertext, tag) for a bytea column.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync } from 'node:crypto';
import { pooledRandomBytes } from './pooled-random.ts';

const VERSION = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

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
    const sealed = this.seal(Buffer.from(plaintext, 'utf8'), associatedData);
    return `${VERSION}:${sealed.subarray(0, NONCE_BYTES).toString('base64url')}:${sealed
      .subarray(NONCE_BYTES)
      .toString('base64url')}`;
  }

  /** Associated data binds a ciphertext to its row, so a value copied onto another row fails to decrypt. */
  decrypt(ciphertext: string, associatedData = ''): string {
    const [version, nonceText, bodyText] = ciphertext.split(':');
    if (version !== VERSION || !nonceText || !bodyText) throw new Error('unknown ciphertext format');
    const body = Buffer.from(bodyText, 'base64url');
    return this.openBody(Buffer.from(nonceText, 'base64url'), body, associatedData).toString('utf8');
  }

  /**
   * The bytes sealed as bytes: the nonce, the ciphertext, the tag (AES-256-GCM, v1's key), for a `bytea`
   * column, a third smaller than the text format's base64.
   */
  seal(plaintext: Buffer, associatedData = ''): Buffer {
    // 96 bits, used at once: createCipheriv copies it and it is written out before any other draw
    const nonce = pooledRandomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(associatedData));
    return Buffer.concat([nonce, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  }

  open(sealed: Buffer, associatedData = ''): Buffer {
    if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new Error('unknown ciphertext format');
    return this.openBody(sealed.subarray(0, NONCE_BYTES), sealed.subarray(NONCE_BYTES), associatedData);
  }

  /** The ciphertext followed by its tag, opened with its nonce */
  private openBody(nonce: Buffer, body: Buffer, associatedData: string): Buffer {
    const decipher = createDecipheriv('aes-256-gcm', this.key, nonce);
    decipher.setAAD(Buffer.from(associatedData));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]);
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
