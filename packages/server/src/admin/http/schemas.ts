// Shared request and response pieces of the admin API.
import { z } from 'zod';

export const nameField = z.string().trim().min(1).max(200);
export const urlField = z.string().max(2048).nullable().optional();
export const timestamp = z.iso.datetime({ offset: true });

/**
 * Origins allowed to embed a tenant's hosted pages in a frame (CSP frame-ancestors): `https://host[:port]`,
 * a `*.` subdomain wildcard allowed; plain http only for localhost. Empty: no one.
 */
export const frameAncestorsField = z
  .array(
    z
      .string()
      .max(255)
      .regex(
        /^(https:\/\/(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*|http:\/\/(localhost|127\.0\.0\.1))(:\d{1,5})?$/,
        'must be an origin like https://shop.example (no path)',
      ),
  )
  .max(20)
  .optional();
export const errorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    field: z.string().optional(),
    details: z.unknown().optional(),
  }),
  requestId: z.string(),
});
export const standardErrors = {
  400: errorBody,
  401: errorBody,
  404: errorBody,
  409: errorBody,
  422: errorBody,
};
export const idParam = z.object({ id: z.string().min(1).max(100) });
export const numericIdParam = z.object({ id: z.coerce.number().int().positive() });
