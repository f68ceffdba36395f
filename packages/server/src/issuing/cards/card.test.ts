import { describe, expect, it } from 'vitest';
import { isLuhnValid, luhnCheckDigit } from '../../platform/cards/card-number.ts';
import { canApply, generatePan, isWeakPin } from './card.ts';

describe('card rules', () => {
  it('computes Luhn check digits and generates valid numbers in the BIN range', () => {
    expect(luhnCheckDigit('411111111111111')).toBe(1);
    expect(isLuhnValid('4111111111111111')).toBe(true);
    expect(isLuhnValid('4111111111111112')).toBe(false);
    for (let i = 0; i < 200; i++) {
      const pan = generatePan('489537');
      expect(pan).toMatch(/^489537\d{10}$/);
      expect(isLuhnValid(pan)).toBe(true);
    }
  });

  it('allows only the transitions of the table', () => {
    expect(canApply('freeze', 'active')).toBe(true);
    expect(canApply('freeze', 'frozen')).toBe(false);
    expect(canApply('unfreeze', 'active')).toBe(false);
    expect(canApply('activate', 'pending')).toBe(false);
    expect(canApply('reissue', 'closed')).toBe(false);
    expect(canApply('ship', 'pending')).toBe(true);
  });

  it('refuses guessable PINs', () => {
    for (const pin of ['0000', '1111', '1234', '9876', '4567']) expect(isWeakPin(pin), pin).toBe(true);
    for (const pin of ['1357', '2580', '9120']) expect(isWeakPin(pin), pin).toBe(false);
  });
});
