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

/** ISO 3166-1 alpha-2 codes in use */
const COUNTRIES = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
    'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO ' +
    'FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE ' +
    'JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO ' +
    'MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW ' +
    'PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM ' +
    'TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'
  ).split(' '),
);

/** An ISO 3166-1 alpha-2 country code, in either case (kept upper case) */
export const country = z
  .string()
  .transform((c) => c.toUpperCase())
  .refine((c) => COUNTRIES.has(c), 'must be an ISO 3166-1 alpha-2 country code');

/** A calendar date, YYYY-MM-DD */
export const calendarDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine(
    (d) =>
      !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d),
    'is not a calendar date',
  );
