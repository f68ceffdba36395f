// Zod fields for values that arrive as form strings or JSON values alike: integers, booleans, exact
// decimals (the route reads them as ClientAmounts), and JSON members sent as objects or as strings.
import { z } from 'zod';
import { DomainError, validationFailed } from '../../platform/errors/domain-error.ts';
import { parseClientJson } from '../../platform/http/client-json.ts';

/** A positive integer id, as a number or a digit string. */
export const intField = z
  .union([z.number().int(), z.string().regex(/^\d{1,10}$/, 'must be a whole number')])
  .transform(Number)
  .pipe(z.number().int().positive().max(2_147_483_647));

/** 0 or 1 (or true/false, yes/no). */
export const flagField = z
  .union([z.boolean(), z.number(), z.enum(['0', '1', 'true', 'false', 'yes', 'no'])])
  .transform((v) => v === true || v === 1 || v === '1' || v === 'true' || v === 'yes');

/** A decimal amount's text; the route reads it as a ClientAmount, converted in its currency by the service. */
export const decimalField = z.union([
  z
    .string()
    .trim()
    .regex(/^\d{1,12}(\.\d{1,8})?$/, 'must be a decimal amount such as 10.90'),
  z
    .number()
    .nonnegative()
    .finite()
    .transform((n) => String(n)),
]);

export const currencyField = z
  .string()
  .trim()
  .transform((c) => c.toUpperCase())
  .pipe(z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 three-letter code'));

export const countryField = z
  .string()
  .trim()
  .transform((c) => c.toUpperCase())
  .pipe(z.string().regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code'));

export const isoDateTime = z.iso.datetime({ offset: true });

/** A JSON member sent as an object (JSON body, bracket keys) or as a JSON-encoded string. */
export function jsonMember<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => {
    if (typeof value !== 'string') return value;
    try {
      return parseClientJson(value, 'value');
    } catch {
      return value; // not JSON (or nested too deep): the schema names the field
    }
  }, schema);
}

/**
 * Pagination as the service does it (docs/wire-compatibility.md): page 1, 100 per page, newest first by default. Page 0
 * is the first page too: the real service's SDK asks for `page=0`.
 */
export const pageQuery = {
  page: z
    .union([z.number().int(), z.string().regex(/^\d{1,10}$/, 'must be a whole number')])
    .transform(Number)
    .pipe(z.number().int().min(0).max(2_147_483_647))
    .transform((page) => Math.max(1, page))
    .optional()
    .describe(
      'Page number (0 or 1: the first). Pages reach the first 10,000 items from either end of the list ' +
        '(page × perPage ≤ 10000; deeper answers 400 naming page): narrow by createdAtFrom/createdAtTo, or ' +
        'read from the other end with reverseSorting. totalItemCount is exact up to 1,000, an estimate above.',
    ),
  perPage: intField.pipe(z.number().max(500)).optional(),
  reverseSorting: flagField.optional(),
};

/** A member sent as JSON text and stored as sent (level3Data): checked to be JSON, kept as its text. */
export function jsonText(text: string, field: string): string {
  try {
    parseClientJson(text, field);
    return text;
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw validationFailed(field, `${field} must be a JSON string`);
  }
}
