// The wallet-tokenization rail: push provisioning of an issued card into Apple Pay and Google Pay. The
// issuer answers the data each wallet expects; the wallet's token service turns it into a device token.

export interface ProvisionableCard {
  cardId: string;
  pan: string;
  expiryMonth: number;
  expiryYear: number;
  holderName: string;
}

/** Apple In-App Provisioning: the issuer encrypts the pass data for the wallet's certificates and nonce. */
export interface ApplePayRequest {
  certificates: string[];
  nonce: string;
  nonceSignature: string;
}
export interface ApplePayProvisioning {
  activationData: string;
  encryptedPassData: string;
  ephemeralPublicKey: string;
}

/** Google Pay push provisioning: an opaque payment card for the TSP plus its display data. */
export interface GooglePayProvisioning {
  opaquePaymentCard: string;
  network: 'VISA' | 'MASTERCARD';
  tokenServiceProvider: 'TOKEN_PROVIDER_VISA' | 'TOKEN_PROVIDER_MASTERCARD';
  displayName: string;
  lastDigits: string;
}

export interface WalletTokenization {
  applePay(card: ProvisionableCard, request: ApplePayRequest): ApplePayProvisioning;
  googlePay(card: ProvisionableCard): GooglePayProvisioning;
}
