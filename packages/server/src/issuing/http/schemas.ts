// Request and response pieces shared by the issuing routes.
import { z } from 'zod';

export const issuingError = z.object({
  code: z.number().int(),
  message: z.string(),
  error: z.string(),
  detail: z.string(),
  field: z.string().optional(),
  details: z.unknown().optional(),
  requestId: z.string(),
});

export const errors = (...statuses: (400 | 401 | 403 | 404 | 409 | 422 | 429)[]) =>
  Object.fromEntries(statuses.map((s) => [s, issuingError])) as Record<number, typeof issuingError>;

export const email = z.email().max(254);
export const walletAddress = z.string().min(1).max(100);
export const signature = z
  .string()
  .regex(/^(0x)?[0-9a-fA-F]+$/, 'must be hex')
  .max(200);
export const code = z.string().regex(/^\d{6}$/, 'must be 6 digits');

export const tokenPair = z.object({
  customerId: z.string(),
  accessToken: z.string(),
  refreshToken: z.string(),
  tokenType: z.literal('Bearer'),
  expiresIn: z.number().int(),
  refreshExpiresIn: z.number().int(),
});
