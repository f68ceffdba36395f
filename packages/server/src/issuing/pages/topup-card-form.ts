// The hosted topup page's card form, read once here: the number Luhn-checked, the expiry read and compared
// with the clock, the security code as long as the brand prints it, the name given. Its words are the
// page's ("Enter a valid card number."), shown beside the field.
import {
  cardBrand,
  cvvLength,
  isExpired,
  isLuhnValid,
  parseCardExpiry,
} from '../../platform/cards/card-number.ts';
import { validationFailed } from '../../platform/errors/domain-error.ts';
import type { CardDetails } from '../../rails/card-network/port.ts';

export interface CardInput {
  cardNumber?: string | undefined;
  cardExpiryDate?: string | undefined;
  cardCvv?: string | undefined;
  cardHolderName?: string | undefined;
}

/** The card form's fields, checked as the payments API checks a new card. */
export function readCard(input: CardInput, now: Date): CardDetails {
  const pan = (input.cardNumber ?? '').replace(/[\s-]/g, '');
  if (!isLuhnValid(pan)) throw validationFailed('cardNumber', 'Enter a valid card number.');
  const expiry = parseCardExpiry(input.cardExpiryDate ?? '');
  if (!expiry) throw validationFailed('cardExpiryDate', 'Enter the expiry as MM/YY.');
  const card = { pan, ...expiry, cvv: (input.cardCvv ?? '').trim() };
  if (isExpired(card, now)) throw validationFailed('cardExpiryDate', 'The card has expired.');
  const digits = cvvLength(cardBrand(pan));
  if (!new RegExp(`^\\d{${digits}}$`).test(card.cvv)) {
    throw validationFailed('cardCvv', `Enter the ${digits}-digit security code.`);
  }
  if (!(input.cardHolderName ?? '').trim())
    throw validationFailed('cardHolderName', 'Enter the name on the card.');
  return card;
}
