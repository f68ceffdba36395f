// What the cards' services take and answer, the card products and the limits of a card's life.

import type { Clock } from '../../platform/clock/clock.ts';
import type { ComplianceHolds } from '../../platform/compliance/compliance-holds.ts';
import type { Encryptor } from '../../platform/crypto/encryption.ts';
import type { Db } from '../../platform/db/database.ts';
import type { CardStatus } from '../../platform/db/schema.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import type { WalletTokenization } from '../../rails/wallet-tokenization/port.ts';
import type { KycService } from '../kyc/kyc-service.ts';
import type { CardMonitoring } from './card-monitoring.ts';

/** The program's card products (`subscriptionCardId` in the real service's body). */
export const CARD_PRODUCTS = {
  '0b5f0d60-4b7e-4b8e-8f2e-7d1a5c9e0001': { name: 'Tessera Debit', network: 'VISA' },
} as const;
export const DEFAULT_PRODUCT_ID = '0b5f0d60-4b7e-4b8e-8f2e-7d1a5c9e0001';

/** Years a new card is valid (default: 4) */
export const CARD_VALIDITY_YEARS = 4;
/** Secret reveals allowed per card per hour (default: 5) */
export const SECRET_REVEALS_PER_HOUR = 5;

export interface DeliveryAddress {
  name: string;
  line1: string;
  line2?: string | undefined;
  city: string;
  postalCode: string;
  country: string;
}

export interface IssueCardInput {
  subscriptionCardId?: string | undefined;
  isVirtual: boolean;
  currency: string;
  label?: string | undefined;
  deliveryAddress?: DeliveryAddress | undefined;
  pin?: string | undefined;
}

export interface Card {
  cardId: string;
  accountId: string;
  currency: string;
  subscriptionCardId: string;
  status: CardStatus;
  isVirtual: boolean;
  label: string | null;
  bin: string;
  last4: string;
  expiryMonth: number;
  expiryYear: number;
  replacesCardId: string | null;
  reissueReason: string | null;
  createdAt: Date;
}

export interface CardSecrets {
  pan: string;
  cvv: string;
  expiryMonth: number;
  expiryYear: number;
}

export interface CardsDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  outbox: Outbox;
  encryptor: Encryptor;
  /** Keys the PAN fingerprint used for uniqueness (never the PAN itself) */
  fingerprintKey: Uint8Array;
  bin: string;
  kyc: KycService;
  tokenization: WalletTokenization;
  /** A cardholder a compliance case holds: cards suspended, none issued (docs/compliance.md, Holds) */
  holds: ComplianceHolds;
  /** New cards counted by the many-cards scenario (docs/compliance.md, Monitoring) */
  monitoring: CardMonitoring;
}

/** An action the card's status does not allow (card.ts, TRANSITIONS), as the 409 its caller sees */
export function stateError(action: string, status: CardStatus): DomainError {
  return new DomainError('invalid_state', `cannot ${action} a card that is ${status}`, {
    details: { status },
  });
}
