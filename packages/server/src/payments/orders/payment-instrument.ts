// What an order is paid with (spec, Create an order): a stored card (`cardId`), a network token, a
// decrypted wallet payload, an encrypted wallet token (decrypted by the wallet rail), or a new card.
// Each is checked here and named by its field when wrong; the result is one card for the network.
import {
  cardBrand,
  cvvLength,
  isExpired,
  isLuhnValid,
  parseCardExpiry,
} from '../../platform/cards/card-number.ts';
import type { Executor } from '../../platform/db/database.ts';
import { DomainError, validationFailed } from '../../platform/errors/domain-error.ts';
import { parseClientJson } from '../../platform/http/client-json.ts';
import type { CardDetails } from '../../rails/card-network/port.ts';
import type { WalletPaymentTokens } from '../../rails/wallet-tokenization/payment-tokens.ts';
import type { StoredCardsService } from '../cards/stored-cards-service.ts';

export interface InstrumentInput {
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

export interface Instrument {
  card: CardDetails;
  brand: string;
  kind: 'card' | 'networkToken';
  source: 'new' | 'stored' | 'decryptedWallet' | 'walletToken' | 'networkToken';
  storedCardId: number | undefined;
  holderName: string | null;
  holderCountry: string | null;
  holderState: string | null;
  /** The cardholder was authenticated before reaching us (3DS data, wallet or token cryptogram) */
  isAuthenticated: boolean;
}

export async function resolveInstrument(
  db: Executor,
  deps: { cards: StoredCardsService; walletTokens: WalletPaymentTokens; now: Date },
  owner: { merchantId: number; customerId: number },
  input: InstrumentInput,
): Promise<Instrument> {
  if (input.threeDSecureData !== undefined) parseThreeDSecureData(input.threeDSecureData);
  const externallyAuthenticated = Boolean(input.cavv);
  if (input.networkTransactionId && !input.networkTransactionDate) {
    throw validationFailed(
      'networkTransactionDate',
      'networkTransactionDate is required with networkTransactionId',
    );
  }

  if (input.networkTokenType !== undefined) {
    if (input.cardId !== undefined) {
      throw validationFailed('networkTokenType', 'a network token payment cannot be combined with cardId');
    }
    const token = (input.networkToken ?? '').replace(/[\s-]/g, '');
    if (!token) throw validationFailed('networkToken', 'networkToken is required with networkTokenType');
    const card = newCard(token, input.cardExpiryDate, undefined, deps.now, 'networkToken');
    return {
      card,
      brand: cardBrand(token),
      kind: 'networkToken',
      source: 'networkToken',
      storedCardId: undefined,
      holderName: input.cardHolderName ?? null,
      holderCountry: input.cardHolderCountry ?? null,
      holderState: input.cardHolderState ?? null,
      isAuthenticated: Boolean(input.networkTokenCryptogram) || externallyAuthenticated,
    };
  }

  if (input.cardId !== undefined) {
    const found = await deps.cards.forCharge(db, owner.merchantId, owner.customerId, input.cardId);
    if (!found) throw new DomainError('not_found', 'card not found for this customer', { field: 'cardId' });
    return {
      card: found.card,
      brand: found.stored.brand,
      kind: found.stored.kind,
      source: 'stored',
      storedCardId: found.stored.id,
      holderName: found.stored.nameOnCard,
      holderCountry: found.stored.cardHolderCountry,
      holderState: found.stored.cardHolderState,
      isAuthenticated: externallyAuthenticated,
    };
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
      card: newCard(pan, input.cardExpiryDate, undefined, deps.now, 'cardNumber'),
      brand: cardBrand(pan),
      kind: 'networkToken',
      source: 'decryptedWallet',
      storedCardId: undefined,
      holderName: input.cardHolderName ?? null,
      holderCountry: input.cardHolderCountry ?? null,
      holderState: input.cardHolderState ?? null,
      isAuthenticated: Boolean(input.digitalWalletCryptogram) || externallyAuthenticated,
    };
  }

  if (input.digitalWallet !== undefined) {
    const payment = deps.walletTokens.decrypt(input.digitalWallet.walletType, input.digitalWallet.data);
    if (!payment) {
      throw validationFailed(
        'transactionOption.digitalWallet.data',
        'the wallet token could not be decrypted',
      );
    }
    const card = { pan: payment.dpan, expiryMonth: payment.expiryMonth, expiryYear: payment.expiryYear };
    if (isExpired(card, deps.now)) {
      throw validationFailed('transactionOption.digitalWallet.data', 'the wallet token has expired');
    }
    return {
      card,
      brand: cardBrand(payment.dpan),
      kind: 'networkToken',
      source: 'walletToken',
      storedCardId: undefined,
      holderName: input.cardHolderName ?? null,
      holderCountry: input.cardHolderCountry ?? null,
      holderState: input.cardHolderState ?? null,
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
    card: newCard(pan, input.cardExpiryDate, input.cardCvv, deps.now, 'cardNumber'),
    brand,
    kind: 'card',
    source: 'new',
    storedCardId: undefined,
    holderName: input.cardHolderName,
    holderCountry: input.cardHolderCountry,
    holderState: input.cardHolderState ?? null,
    isAuthenticated: externallyAuthenticated,
  };
}

function requireNumber(cardNumber: string | undefined): string {
  if (!cardNumber)
    throw validationFailed('cardNumber', 'cardNumber is required (or cardId for a stored card)');
  if (!isLuhnValid(cardNumber)) throw validationFailed('cardNumber', 'cardNumber is not a valid card number');
  return cardNumber;
}

function newCard(pan: string, expiry: string | undefined, cvv: string | undefined, now: Date, field: string) {
  if (!isLuhnValid(pan)) throw validationFailed(field, `${field} is not a valid card number`);
  const parsed = parseCardExpiry(expiry ?? '');
  if (!parsed) throw validationFailed('cardExpiryDate', 'cardExpiryDate must be MM/YY');
  const card: CardDetails = { pan, ...parsed, ...(cvv !== undefined ? { cvv } : {}) };
  if (isExpired(card, now)) throw validationFailed('cardExpiryDate', 'the card has expired');
  return card;
}

/** threeDSecureData is Base64 JSON (spec); anything else is named. */
export function parseThreeDSecureData(value: string): Record<string, unknown> {
  try {
    const parsed = parseClientJson(Buffer.from(value, 'base64').toString('utf8'), 'threeDSecureData');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch (err) {
    if (err instanceof DomainError) throw err; // nested too deep, named as such
  }
  throw validationFailed('threeDSecureData', 'threeDSecureData must be a Base64-encoded JSON object');
}
