// The card a buyer types on a hosted page (the checkout form, a payment link's page), as an order's card
// fields: the number without the spaces and dashes people type, the codes upper-cased. It is read like
// the API's (http/instrument-fields.ts), so the pages refuse what the API refuses, in the same words.
import type { InstrumentFields } from '../http/instrument-fields.ts';

export type TypedCard = Partial<
  Record<
    'cardNumber' | 'cardExpiryDate' | 'cardCvv' | 'cardHolderName' | 'cardHolderCountry' | 'cardHolderState',
    string
  >
>;

/** The typed fields; the holder's country falls back to the one the request already names. */
export function typedCardFields(form: TypedCard, knownCountry = ''): InstrumentFields {
  return {
    cardNumber: (form.cardNumber ?? '').replace(/[\s-]/g, ''),
    cardExpiryDate: (form.cardExpiryDate ?? '').trim(),
    cardCvv: (form.cardCvv ?? '').trim(),
    cardHolderName: (form.cardHolderName ?? '').trim(),
    cardHolderCountry: (form.cardHolderCountry ?? knownCountry).trim().toUpperCase(),
    cardHolderState: (form.cardHolderState ?? '').trim().toUpperCase() || undefined,
  };
}
