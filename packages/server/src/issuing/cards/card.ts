// Card rules, pure: the status transition table, reissue reasons, and card numbers.
import { randomInt } from 'node:crypto';
import { luhnCheckDigit } from '../../platform/cards/card-number.ts';
import type { CardStatus } from '../../platform/db/schema.ts';

/**
 * The transition table (the spec lists the statuses only):
 *
 * | action      | from                                   | to                  | who                    |
 * |-------------|----------------------------------------|---------------------|------------------------|
 * | ship        | pending                                | readyToBeActivated  | the card producer      |
 * | activate    | readyToBeActivated                     | active              | the customer           |
 * | freeze      | active                                 | frozen              | the customer           |
 * | unfreeze    | frozen                                 | active              | the customer           |
 * | suspend     | active, frozen                         | suspended           | the issuer (fraud)     |
 * | reinstate   | suspended                              | active              | the issuer             |
 * | reissue     | pending … frozen, suspended            | closed (+ new card) | the customer           |
 * | close       | pending … frozen, suspended            | closed              | its account's closure  |
 *
 * Everything else is refused with 409 naming the current status. Closed is final.
 */
export const TRANSITIONS = {
  ship: { from: ['pending'], to: 'readyToBeActivated' },
  activate: { from: ['readyToBeActivated'], to: 'active' },
  freeze: { from: ['active'], to: 'frozen' },
  unfreeze: { from: ['frozen'], to: 'active' },
  suspend: { from: ['active', 'frozen'], to: 'suspended' },
  reinstate: { from: ['suspended'], to: 'active' },
  reissue: { from: ['pending', 'readyToBeActivated', 'active', 'frozen', 'suspended'], to: 'closed' },
  close: { from: ['pending', 'readyToBeActivated', 'active', 'frozen', 'suspended'], to: 'closed' },
} as const satisfies Record<string, { from: readonly CardStatus[]; to: CardStatus }>;

export type CardAction = keyof typeof TRANSITIONS;

export function canApply(action: CardAction, status: CardStatus): boolean {
  return (TRANSITIONS[action].from as readonly CardStatus[]).includes(status);
}

/**
 * Reissue reasons (the spec's path parameter; values not shown, so Lithic's and Marqeta's): a card that
 * may be in someone else's hands gets a new number; a worn-out or expiring one keeps its number with a
 * new expiry and CVV.
 */
export const REISSUE_REASONS = {
  lost: { isNewNumber: true },
  stolen: { isNewNumber: true },
  compromised: { isNewNumber: true },
  damaged: { isNewNumber: false },
  expired: { isNewNumber: false },
} as const;
export type ReissueReason = keyof typeof REISSUE_REASONS;

/** A random 16-digit number in the BIN range with a valid Luhn check digit. */
export function generatePan(bin: string): string {
  let body = bin;
  while (body.length < 15) body += String(randomInt(0, 10));
  return body + String(luhnCheckDigit(body));
}

export function generateCvv(): string {
  return String(randomInt(0, 1000)).padStart(3, '0');
}

/** PINs easy to guess are refused (all one digit, runs like 1234 or 9876). */
export function isWeakPin(pin: string): boolean {
  if (/^(\d)\1+$/.test(pin)) return true;
  const steps = [...pin].slice(1).map((c, i) => Number(c) - Number(pin.charAt(i)));
  return steps.every((s) => s === 1) || steps.every((s) => s === -1);
}
