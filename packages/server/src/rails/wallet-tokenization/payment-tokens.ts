// Wallet payment tokens: what Apple Pay and Google Pay hand a merchant at checkout, encrypted for the
// payment processor. The processor decrypts them to a device card number (DPAN), its expiry and a
// one-time cryptogram. The simulator's tokens are AES-256-GCM under a processor key derived from the
// platform's key, bound to the wallet type; `seal` makes them for the sandbox, as a wallet would.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export type WalletType = 'applePay' | 'googlePay';

export interface WalletPaymentData {
  dpan: string;
  expiryMonth: number;
  expiryYear: number;
  cryptogram: string;
  eci: string;
}

export interface WalletPaymentTokens {
  /** The token's contents, or undefined when it was not made for us (tampered, other key, other wallet). */
  decrypt(walletType: WalletType, data: string): WalletPaymentData | undefined;
}

export class WalletPaymentTokenSimulator implements WalletPaymentTokens {
  constructor(private readonly key: Uint8Array) {}

  seal(walletType: WalletType, payment: WalletPaymentData): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(walletType));
    const body = Buffer.concat([cipher.update(JSON.stringify(payment), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  decrypt(walletType: WalletType, data: string): WalletPaymentData | undefined {
    try {
      const raw = Buffer.from(data, 'base64');
      if (raw.length < 29) return undefined;
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(walletType));
      decipher.setAuthTag(raw.subarray(12, 28));
      const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      const parsed = JSON.parse(text) as WalletPaymentData;
      return typeof parsed.dpan === 'string' ? parsed : undefined;
    } catch {
      return undefined;
    }
  }
}
