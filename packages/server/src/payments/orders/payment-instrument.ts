// What an order is paid with (spec, Create an order): a stored card, a network token, a decrypted wallet
// payload, an encrypted wallet token or a new card. The API's edge (http/instrument-fields.ts) checks the
// wire's card fields and decrypts a wallet token into an `InstrumentCommand`; here a stored card is
// found for its customer, the one thing that needs the database.
import type { CardBrand } from '../../platform/cards/card-number.ts';
import type { Executor } from '../../platform/db/database.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import type { CardDetails } from '../../rails/card-network/port.ts';
import type { StoredCardsService } from '../cards/stored-cards-service.ts';

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

/** A card given in the request, checked (Luhn, brand, expiry, CVV) or decrypted from its wallet token. */
export interface GivenInstrument extends Instrument {
  brand: CardBrand;
  source: 'new' | 'decryptedWallet' | 'walletToken' | 'networkToken';
  storedCardId: undefined;
}

/** What the request pays with: a card it carries, or one of the customer's stored cards by id. */
export type InstrumentCommand =
  | GivenInstrument
  | { source: 'stored'; cardId: number; isAuthenticated: boolean };

/** The instrument itself: a given card as it is, a stored card found for its customer (404 otherwise). */
export async function resolveInstrument(
  db: Executor,
  cards: StoredCardsService,
  owner: { merchantId: number; customerId: number },
  command: InstrumentCommand,
): Promise<Instrument> {
  if (command.source !== 'stored') return command;
  const found = await cards.forCharge(db, owner.merchantId, owner.customerId, command.cardId);
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
    isAuthenticated: command.isAuthenticated,
  };
}
