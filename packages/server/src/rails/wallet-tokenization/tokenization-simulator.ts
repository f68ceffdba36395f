// The tokenization rail's simulator. It produces the wallets' shapes with real cryptography: Apple's
// encryptedPassData is AES-256-GCM under a key agreed by ECDH (P-256) between a fresh ephemeral key and
// the simulated wallet's key, so a test (playing the wallet) can open it; Google's opaquePaymentCard is
// sealed the same way for the simulated token service.
import { createCipheriv, createDecipheriv, createECDH, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type {
  ApplePayProvisioning,
  ApplePayRequest,
  GooglePayProvisioning,
  ProvisionableCard,
  WalletTokenization,
} from './port.ts';

export class TokenizationSimulator implements WalletTokenization {
  private readonly walletKey = createECDH('prime256v1');

  constructor(private readonly activationKey: Uint8Array) {
    this.walletKey.generateKeys();
  }

  applePay(card: ProvisionableCard, request: ApplePayRequest): ApplePayProvisioning {
    const sealed = this.seal(
      JSON.stringify({
        primaryAccountNumber: card.pan,
        expiration: `${String(card.expiryMonth).padStart(2, '0')}/${String(card.expiryYear).slice(-2)}`,
        name: card.holderName,
        nonce: request.nonce,
        nonceSignature: request.nonceSignature,
      }),
    );
    return {
      // Proves to the token service that the issuer authorised this provisioning of this card.
      activationData: createHmac('sha256', this.activationKey)
        .update(`${card.cardId}:${request.nonce}`)
        .digest('base64'),
      encryptedPassData: sealed.ciphertext,
      ephemeralPublicKey: sealed.ephemeralPublicKey,
    };
  }

  googlePay(card: ProvisionableCard): GooglePayProvisioning {
    const isVisa = card.pan.startsWith('4');
    const sealed = this.seal(
      JSON.stringify({
        fpan: card.pan,
        expMonth: card.expiryMonth,
        expYear: card.expiryYear,
        name: card.holderName,
      }),
    );
    return {
      opaquePaymentCard: Buffer.from(
        JSON.stringify({ ephemeralPublicKey: sealed.ephemeralPublicKey, data: sealed.ciphertext }),
      ).toString('base64'),
      network: isVisa ? 'VISA' : 'MASTERCARD',
      tokenServiceProvider: isVisa ? 'TOKEN_PROVIDER_VISA' : 'TOKEN_PROVIDER_MASTERCARD',
      displayName: `Tessera Debit ••${card.pan.slice(-4)}`,
      lastDigits: card.pan.slice(-4),
    };
  }

  /** What the simulated wallet does with the pass data (tests use it to prove the encryption). */
  openSealed(ciphertext: string, ephemeralPublicKey: string): string {
    const key = this.derive(this.walletKey.computeSecret(Buffer.from(ephemeralPublicKey, 'base64')));
    const body = Buffer.from(ciphertext, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, 12));
    decipher.setAuthTag(body.subarray(body.length - 16));
    return Buffer.concat([decipher.update(body.subarray(12, body.length - 16)), decipher.final()]).toString(
      'utf8',
    );
  }

  private seal(plaintext: string): { ciphertext: string; ephemeralPublicKey: string } {
    const ephemeral = createECDH('prime256v1');
    const ephemeralPublicKey = ephemeral.generateKeys();
    const key = this.derive(ephemeral.computeSecret(this.walletKey.getPublicKey()));
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const body = Buffer.concat([iv, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return { ciphertext: body.toString('base64'), ephemeralPublicKey: ephemeralPublicKey.toString('base64') };
  }

  private derive(sharedSecret: Buffer): Buffer {
    return Buffer.from(hkdfSync('sha256', sharedSecret, Buffer.alloc(0), 'tessera/wallet-provisioning', 32));
  }
}
