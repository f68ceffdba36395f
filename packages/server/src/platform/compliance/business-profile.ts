// A merchant's or a store's business profile (docs/compliance.md, Onboarding), as the admin API takes it:
// who the business is, where, what it sells, and the people behind it — every beneficial owner at 25 % or
// more, and the directors. Parsed once at the edge; the service keeps it as this validated JSON.
import { z } from 'zod';
import { calendarDate, country, httpUrl } from '../http/fields.ts';

const personName = z.string().trim().min(1).max(200);
const person = { name: personName, dateOfBirth: calendarDate, nationality: country };

export const businessProfileInput = z
  .strictObject({
    legalName: z.string().trim().min(1).max(200),
    tradingName: z.string().trim().min(1).max(200).optional(),
    registrationNumber: z.string().trim().min(1).max(60),
    country,
    address: z.strictObject({
      line1: z.string().trim().min(1).max(200),
      line2: z.string().trim().max(200).optional(),
      city: z.string().trim().min(1).max(100),
      postalCode: z.string().trim().min(1).max(20),
      country,
    }),
    mcc: z.string().regex(/^\d{4}$/, 'a four-digit merchant category code'),
    website: httpUrl.optional(),
    expectedMonthlyVolume: z
      .strictObject({
        amount: z.string().regex(/^\d{1,15}(\.\d{1,2})?$/, 'a decimal amount, e.g. 25000.00'),
        currency: z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code'),
      })
      .optional(),
    owners: z
      .array(
        z.strictObject({
          ...person,
          countryOfResidence: country,
          ownershipPercent: z.number().min(25, 'owners are those holding 25 % or more').max(100),
        }),
      )
      .max(4),
    directors: z.array(z.strictObject(person)).min(1, 'at least one director').max(20),
  })
  .superRefine((profile, ctx) => {
    const total = profile.owners.reduce((sum, o) => sum + o.ownershipPercent, 0);
    if (total > 100) {
      ctx.addIssue({
        code: 'custom',
        path: ['owners'],
        message: `the owners hold ${total} %, more than 100 %`,
      });
    }
  });

export type BusinessProfile = z.output<typeof businessProfileInput>;

/**
 * What a reviewer approved and must see again when it changes: who the business legally is, what it sells,
 * and who owns and runs it. A new website or address does not reopen the review.
 */
export function needsReviewAgain(before: BusinessProfile, after: BusinessProfile): boolean {
  const material = (p: BusinessProfile) =>
    JSON.stringify([
      p.legalName,
      p.registrationNumber,
      p.country,
      p.mcc,
      p.owners.map((o) => [o.name, o.dateOfBirth, o.nationality, o.ownershipPercent]),
      p.directors.map((d) => [d.name, d.dateOfBirth, d.nationality]),
    ]);
  return material(before) !== material(after);
}
