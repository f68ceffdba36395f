// A key's stored answer in each of its formats (idempotency-store.ts): what is written now opens to the
// answer byte for byte, deflated with the dictionary only where that is shorter, and the formats written
// before it (a row kept across an upgrade is replayed after it) open as they did.
import { randomBytes } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Encryptor } from '../crypto/encryption.ts';
import { openAnswer, storeAnswer } from './idempotency-store.ts';

const encryptor = new Encryptor(randomBytes(32));
const bound = 'idempotency:issuing:partner:ptn_1\nkey-1';

const cardTransaction = JSON.stringify({
  transactionId: '01a24499-a2b5-7138-8b41-fcaccf066bc4',
  type: 'card_payment',
  status: 'authorized',
  cardId: '01a24499-a2b5-7138-8b41-fcaccf066bc5',
  accountId: '01a24499-a2b5-7138-8b41-fcaccf066bc6',
  amount: '25.00',
  settledAmount: null,
  heldAmount: '25.00',
  refundedAmount: '0.00',
  forcePost: false,
  originalTransactionId: null,
  currency: 'EUR',
  merchant: 'Corner Coffee',
  declineReason: null,
  threeDS: null,
  createdAt: '2027-03-05T05:07:15.993Z',
  authorizedAt: '2027-03-05T05:07:15.993Z',
  settledAt: null,
  holdExpiresAt: '2027-03-12T05:07:15.993Z',
});

describe("a key's stored answer", () => {
  it('opens to the answer, sealed or in clear, for any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 600 }), fc.boolean(), (body, inClear) => {
        const stored = storeAnswer(encryptor, body, bound, inClear);
        expect(openAnswer(encryptor, stored, bound)).toBe(body);
        // Never longer than the answer as it is, in its format
        expect(stored.length).toBeLessThanOrEqual(1 + Buffer.byteLength(body) + (inClear ? 0 : 28));
      }),
      { numRuns: 300 },
    );
  });

  it('deflates a common answer with the dictionary: a card transaction in a quarter of its bytes', () => {
    const sealed = storeAnswer(encryptor, cardTransaction, bound, false);
    const clear = storeAnswer(encryptor, cardTransaction, bound, true);
    expect([sealed[0], clear[0]]).toEqual([4, 3]);
    expect(clear.length).toBeLessThan(cardTransaction.length / 4);
    expect(sealed.length).toBe(clear.length + 12 + 16);
    // Sealed to its key: another key's row cannot be replayed as this one's
    expect(() => openAnswer(encryptor, sealed, `${bound}x`)).toThrow();
    // An answer deflate does not shorten is kept as it is
    expect([...storeAnswer(encryptor, 'x', bound, true)]).toEqual([0, 'x'.charCodeAt(0)]);
    expect(storeAnswer(encryptor, 'x', bound, false)[0]).toBe(1);
  });

  it('opens the formats written before: sealed and deflated (2), and the text of migration 0078', () => {
    const deflated = Buffer.concat([
      Buffer.of(2),
      encryptor.seal(deflateRawSync(Buffer.from(cardTransaction)), bound),
    ]);
    expect(openAnswer(encryptor, deflated, bound)).toBe(cardTransaction);
    expect(openAnswer(encryptor, `clear:${cardTransaction}`, bound)).toBe(cardTransaction);
    expect(openAnswer(encryptor, encryptor.encrypt(cardTransaction, bound), bound)).toBe(cardTransaction);
  });
});
