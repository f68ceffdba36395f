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
