// The payments envelope (spec, Response envelope): `{code, message, data}`, plus `pagination` on lists.
import { z } from 'zod';

export const ok = <T>(data: T) => ({ code: 200, message: 'Success', data });
export const created = <T>(data: T) => ({ code: 201, message: 'Created', data });
export const accepted = <T>(data: T) => ({ code: 202, message: 'Accepted', data });

export interface Page {
  page: number;
  perPage: number;
  /** 0: oldest first; 1: newest first (the default) */
  newestFirst: boolean;
}

export const pageOf = (q: { page?: number; perPage?: number; reverseSorting?: boolean }): Page => ({
  page: q.page ?? 1,
  perPage: q.perPage ?? 100,
  newestFirst: q.reverseSorting ?? true,
});

export function paged<T>(items: T[], total: number, page: Page) {
  return {
    code: 200,
    message: 'Success',
    pagination: {
      currentPageNumber: page.page,
      totalItemCount: total,
      itemCountPerPage: page.perPage,
      currentItemCount: items.length,
      pageCount: Math.ceil(total / page.perPage),
    },
    data: items,
  };
}

export const envelope = <T extends z.ZodType>(data: T) =>
  z.object({ code: z.number().int(), message: z.string(), data });

export const pagedEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({
    code: z.number().int(),
    message: z.string(),
    pagination: z.object({
      currentPageNumber: z.number().int(),
      totalItemCount: z.number().int(),
      itemCountPerPage: z.number().int(),
      currentItemCount: z.number().int(),
      pageCount: z.number().int(),
    }),
    data: z.array(item),
  });

export const errorEnvelope = z.object({
  code: z.number().int(),
  message: z.string(),
  data: z.record(z.string(), z.unknown()).optional(),
  error: z.array(
    z.object({
      code: z.number().int(),
      message: z.string(),
      type: z.enum(['Exception', 'Validation']),
      field: z.string().optional(),
    }),
  ),
  requestId: z.string(),
});

export const standardErrors = {
  400: errorEnvelope,
  401: errorEnvelope,
  404: errorEnvelope,
  409: errorEnvelope,
};
