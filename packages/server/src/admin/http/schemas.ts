// Shared request and response pieces of the admin API.
import { z } from 'zod';

export const nameField = z.string().trim().min(1).max(200);
export const urlField = z.string().max(2048).nullable().optional();
export const timestamp = z.iso.datetime({ offset: true });
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
