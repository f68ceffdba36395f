// Tokens that let a browser act on one object without an API credential: a hosted page's address (a
// topup's card page, a KYC session), a 3D Secure challenge (`creq`) and its return leg. A token is the
// object's id and an HMAC of it under a key derived from the encryption key, for one purpose: nothing
// secret is stored, a token cannot be forged or moved to another purpose, and whether it still works
// is the object's state (a decided challenge, a completed topup, an expired session).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { derive } from './encryption.ts';

export type CapabilityPurpose =
  | 'acs-challenge'
  | '3ds-return'
  | 'topup-page'
  | 'kyc-session'
  | 'checkout-session'
  | 'crypto-pay-cancel';

export class CapabilityTokens {
  private readonly key: Buffer;

  constructor(masterKey: Buffer) {
    this.key = derive(masterKey, 'tessera/capability-tokens/v1');
  }

  issue(purpose: CapabilityPurpose, id: string): string {
    return `${id}.${this.mac(purpose, id)}`;
  }

  /** The id the token was issued for, or undefined when this platform did not issue it for this purpose. */
  open(purpose: CapabilityPurpose, token: string): string | undefined {
    if (token.length > 200) return undefined;
    const dot = token.lastIndexOf('.');
    if (dot <= 0) return undefined;
    const id = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1));
    const expected = Buffer.from(this.mac(purpose, id));
    return given.length === expected.length && timingSafeEqual(given, expected) ? id : undefined;
  }

  private mac(purpose: string, id: string): string {
    return createHmac('sha256', this.key).update(`${purpose}\u0000${id}`).digest('base64url');
  }
}
