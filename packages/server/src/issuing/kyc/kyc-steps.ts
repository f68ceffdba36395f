// The KYC steps of the spec's /kyc routes and what each stores. The spec names the routes only; the
// fields follow what EU e-money issuers collect (identity, residence, tax-relevant origin of funds, PEP).
import { z } from 'zod';
import { country, calendarDate as isoDate } from '../../platform/http/fields.ts';

export { country };

const name = z.string().trim().min(1).max(100);

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
