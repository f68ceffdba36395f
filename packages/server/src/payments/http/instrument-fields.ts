// An order's card fields read once, at the edge (spec, Create an order): a stored card (`cardId`), a
// network token, a decrypted wallet payload, an encrypted wallet token (decrypted here by the wallet
// rail) or a new card. Each is checked here and named by its field when wrong; what the service gets is
// a checked card with its brand and expiry, or a stored card's id.
import {
  cardBrand,
  cvvLength,
  isExpired,
  isLuhnValid,
  parseCardExpiry,
} from '../../platform/cards/card-number.ts';
import { DomainError, validationFailed } from '../../platform/errors/domain-error.ts';
import { parseClientJson } from '../../platform/http/client-json.ts';
import type { CardDetails } from '../../rails/card-network/port.ts';
import type { WalletPaymentTokens } from '../../rails/wallet-tokenization/payment-tokens.ts';
import type { InstrumentCommand } from '../orders/payment-instrument.ts';

/** The wire's card fields of an order (the API's body, the hosted checkout's card form). */
export interface InstrumentFields {
  cardId?: number | undefined;
  cardNumber?: string | undefined;
  cardExpiryDate?: string | undefined;
  cardCvv?: string | undefined;
  cardHolderName?: string | undefined;
  cardHolderCountry?: string | undefined;
  cardHolderState?: string | undefined;
  digitalWalletType?: 'googlePay' | 'applePay' | undefined;
  digitalWalletCryptogram?: string | undefined;
  digitalWalletRawData?: string | undefined;
  networkTokenType?: string | undefined;
  networkToken?: string | undefined;
  networkTokenCryptogram?: string | undefined;
  networkTransactionId?: string | undefined;
  networkTransactionDate?: string | undefined;
  cavv?: string | undefined;
  threeDSecureData?: string | undefined;
  digitalWallet?: { walletType: 'googlePay' | 'applePay'; data: string } | undefined;
}

export interface InstrumentReading {
  walletTokens: WalletPaymentTokens;
  /** The sandbox clock's now: a card is expired against it */
  now: Date;
}

export function readInstrument(input: InstrumentFields, reading: InstrumentReading): InstrumentCommand {
  const { now } = reading;
  if (input.threeDSecureData !== undefined) readThreeDSecureData(input.threeDSecureData);
  const externallyAuthenticated = Boolean(input.cavv);
  if (input.networkTransactionId && !input.networkTransactionDate) {
    throw validationFailed(
      'networkTransactionDate',
      'networkTransactionDate is required with networkTransactionId',
    );
  }
  const holder = {
    holderName: input.cardHolderName ?? null,
    holderCountry: input.cardHolderCountry ?? null,
    holderState: input.cardHolderState ?? null,
    storedCardId: undefined,
  };

  if (input.networkTokenType !== undefined) {
    if (input.cardId !== undefined) {
      throw validationFailed('networkTokenType', 'a network token payment cannot be combined with cardId');
    }
    const token = (input.networkToken ?? '').replace(/[\s-]/g, '');
    if (!token) throw validationFailed('networkToken', 'networkToken is required with networkTokenType');
    return {
      card: cardOf(checkedNumber(token, 'networkToken'), input.cardExpiryDate, undefined, now),
      brand: cardBrand(token),
      kind: 'networkToken',
      source: 'networkToken',
      ...holder,
      isAuthenticated: Boolean(input.networkTokenCryptogram) || externallyAuthenticated,
    };
  }

  if (input.cardId !== undefined) {
    return { source: 'stored', cardId: input.cardId, isAuthenticated: externallyAuthenticated };
  }

  if (input.digitalWalletType !== undefined) {
    if (!input.digitalWalletRawData) {
      throw validationFailed(
        'digitalWalletRawData',
        'digitalWalletRawData is required with digitalWalletType',
      );
    }
    try {
      parseClientJson(input.digitalWalletRawData, 'digitalWalletRawData');
    } catch {
      throw validationFailed('digitalWalletRawData', 'digitalWalletRawData must be a JSON string');
    }
    const pan = requireNumber(input.cardNumber);
    return {
      card: cardOf(pan, input.cardExpiryDate, undefined, now),
      brand: cardBrand(pan),
      kind: 'networkToken',
      source: 'decryptedWallet',
      ...holder,
      isAuthenticated: Boolean(input.digitalWalletCryptogram) || externallyAuthenticated,
    };
  }

  if (input.digitalWallet !== undefined) {
    const payment = reading.walletTokens.decrypt(input.digitalWallet.walletType, input.digitalWallet.data);
    if (!payment) {
      throw validationFailed(
        'transactionOption.digitalWallet.data',
        'the wallet token could not be decrypted',
      );
    }
    const card = { pan: payment.dpan, expiryMonth: payment.expiryMonth, expiryYear: payment.expiryYear };
    if (isExpired(card, now)) {
      throw validationFailed('transactionOption.digitalWallet.data', 'the wallet token has expired');
    }
    return {
      card,
      brand: cardBrand(payment.dpan),
      kind: 'networkToken',
      source: 'walletToken',
      ...holder,
      isAuthenticated: Boolean(payment.cryptogram),
    };
  }

  // A new card: every field of the spec's new-card set.
  const pan = requireNumber(input.cardNumber);
  const brand = cardBrand(pan);
  if (!input.cardCvv) throw validationFailed('cardCvv', 'cardCvv is required');
  if (!new RegExp(`^\\d{${cvvLength(brand)}}$`).test(input.cardCvv)) {
    throw validationFailed('cardCvv', `cardCvv has ${cvvLength(brand)} digits for this card`);
  }
  if (!input.cardHolderName) throw validationFailed('cardHolderName', 'cardHolderName is required');
  if (!input.cardHolderCountry) throw validationFailed('cardHolderCountry', 'cardHolderCountry is required');
  if (['US', 'CA'].includes(input.cardHolderCountry) && !input.cardHolderState) {
    throw validationFailed('cardHolderState', 'cardHolderState is required when the country is US or CA');
  }
  return {
    card: cardOf(pan, input.cardExpiryDate, input.cardCvv, now),
    brand,
    kind: 'card',
    source: 'new',
    ...holder,
    isAuthenticated: externallyAuthenticated,
  };
}

function requireNumber(cardNumber: string | undefined): string {
  if (!cardNumber)
    throw validationFailed('cardNumber', 'cardNumber is required (or cardId for a stored card)');
  return checkedNumber(cardNumber, 'cardNumber');
}

/** The one place a payments card number is checked. */
function checkedNumber(pan: string, field: string): string {
  if (!isLuhnValid(pan)) throw validationFailed(field, `${field} is not a valid card number`);
  return pan;
}

/** A checked number with its expiry, read and compared with the clock, and its CVV when given. */
function cardOf(pan: string, expiry: string | undefined, cvv: string | undefined, now: Date): CardDetails {
  const parsed = parseCardExpiry(expiry ?? '');
  if (!parsed) throw validationFailed('cardExpiryDate', 'cardExpiryDate must be MM/YY');
  const card: CardDetails = { pan, ...parsed, ...(cvv !== undefined ? { cvv } : {}) };
  if (isExpired(card, now)) throw validationFailed('cardExpiryDate', 'the card has expired');
  return card;
}

/** threeDSecureData is Base64 JSON (spec); anything else is named. */
function readThreeDSecureData(value: string): Record<string, unknown> {
  try {
    const parsed = parseClientJson(Buffer.from(value, 'base64').toString('utf8'), 'threeDSecureData');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch (err) {
    if (err instanceof DomainError) throw err; // nested too deep, named as such
  }
  throw validationFailed('threeDSecureData', 'threeDSecureData must be a Base64-encoded JSON object');
}
