// Request fields every API validates the same way.
import { z } from 'zod';

/** A browser-reachable address (return, cancel, callback and back URLs): http or https only. */
export const httpUrl = z
  .string()
  .max(2000)
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL');

/** Free text, trimmed, bounded. */
export const text = (max: number) => z.string().trim().max(max);

/** Whether text is a bigint (int8) id a cursor may hold: digits only, no larger than the column can hold. */
export const isInt8Digits = (v: string): boolean =>
  /^\d{1,19}$/.test(v) && BigInt(v) <= 9_223_372_036_854_775_807n;

/** A cursor over a bigint id: a 400 naming it, never the database's out-of-range error (the pattern is documented). */
export const int8Cursor = (what: string) =>
  z
    .string()
    .regex(/^\d{1,19}$/, `must be ${what}`)
    .refine(isInt8Digits, `must be ${what}: at most 9223372036854775807`);
