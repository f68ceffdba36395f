// Card number rules shared by the issuing and payments APIs and the card network rail: the Luhn check,
// the brand a number belongs to, and how a number may be shown.

export type CardBrand = 'visa' | 'mastercard' | 'amex' | 'maestro' | 'discover' | 'unknown';

export function luhnCheckDigit(digits: string): number {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits.charAt(digits.length - 1 - i));
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

export function isLuhnValid(number: string): boolean {
  return /^\d{12,19}$/.test(number) && luhnCheckDigit(number.slice(0, -1)) === Number(number.slice(-1));
}

/** The scheme a number belongs to, from its leading digits (the schemes' published IIN ranges). */
export function cardBrand(number: string): CardBrand {
  if (/^3[47]/.test(number)) return 'amex';
  if (/^4/.test(number)) return 'visa';
  const two = Number(number.slice(0, 2));
  const four = Number(number.slice(0, 4));
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return 'mastercard';
  if (/^(6011|65|64[4-9])/.test(number)) return 'discover';
  if (/^(50|5[6-9]|6)/.test(number)) return 'maestro';
  return 'unknown';
}

/** Amex prints a 4-digit security code; every other scheme 3. */
export const cvvLength = (brand: CardBrand) => (brand === 'amex' ? 4 : 3);

/** First six and last four, the rest masked: 411111******1111 (PCI DSS display rule). */
export function maskCardNumber(number: string): string {
  return `${number.slice(0, 6)}${'*'.repeat(Math.max(0, number.length - 10))}${number.slice(-4)}`;
}

/** `MM/YY` (or `MM/YYYY`) as a month and a four-digit year; undefined when it is neither. */
export function parseCardExpiry(text: string): { expiryMonth: number; expiryYear: number } | undefined {
  const match = /^(0[1-9]|1[0-2])\/(\d{2}|\d{4})$/.exec(text.trim());
  if (!match) return undefined;
  const [, month = '', year = ''] = match;
  return { expiryMonth: Number(month), expiryYear: year.length === 2 ? 2000 + Number(year) : Number(year) };
}

/** A card is valid through the last day of its expiry month. */
export function isExpired(card: { expiryMonth: number; expiryYear: number }, now: Date): boolean {
  return Date.UTC(card.expiryYear, card.expiryMonth, 1) <= now.getTime();
}
