// The KYC steps of the spec's /kyc routes and what each stores. The spec names the routes only; the
// fields follow what EU e-money issuers collect (identity, residence, tax-relevant origin of funds, PEP).
import { z } from 'zod';

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

export const country = z
  .string()
  .transform((c) => c.toUpperCase())
  .refine((c) => COUNTRIES.has(c), 'must be an ISO 3166-1 alpha-2 country code');
const name = z.string().trim().min(1).max(100);
const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine(
    (d) =>
      !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d),
    'is not a calendar date',
  );

export const KYC_STEPS = {
  agreement: z.object({
    termsAccepted: z.literal(true),
    privacyPolicyAccepted: z.literal(true),
    version: z.string().max(32).optional(),
  }),
  'personal-info': z.object({
    firstName: name,
    lastName: name,
    dateOfBirth: isoDate,
    nationality: country,
    phone: z
      .string()
      .regex(/^\+[1-9]\d{6,14}$/, 'must be E.164, e.g. +40712345678')
      .optional(),
  }),
  residence: z.object({
    country,
    state: z.string().trim().max(100).optional(),
    city: name,
    postalCode: z.string().trim().min(1).max(20),
    addressLine1: z.string().trim().min(1).max(200),
    addressLine2: z.string().trim().max(200).optional(),
  }),
  gender: z.object({ gender: z.enum(['female', 'male', 'non_binary', 'undisclosed']) }),
  birthplace: z.object({ country, city: name }),
  'wealth-and-income': z.object({
    employmentStatus: z.enum(['employed', 'self_employed', 'unemployed', 'student', 'retired']),
    occupation: z.string().trim().max(100).optional(),
    annualIncome: z.enum(['under_25k', '25k_50k', '50k_100k', '100k_250k', 'over_250k']),
    sourceOfFunds: z
      .array(z.enum(['salary', 'savings', 'investments', 'business', 'inheritance', 'pension', 'other']))
      .min(1)
      .max(7),
    expectedMonthlySpend: z.enum(['under_1k', '1k_5k', '5k_20k', 'over_20k']),
  }),
  pep: z.object({ isPoliticallyExposed: z.boolean() }),
  'confirm-pep': z.object({
    confirmed: z.literal(true),
    position: z.string().trim().min(1).max(200),
    country,
  }),
} as const;

export type KycStep = keyof typeof KYC_STEPS;
export const STEP_NAMES = Object.keys(KYC_STEPS) as KycStep[];
