// A tenant's look on its hosted pages (sites of the payments API, stores of the crypto API): the name a
// shopper sees, a logo and an accent colour. The text on the accent colour is black or white, whichever
// reads better (WCAG contrast), so a light brand colour never makes an unreadable button.
import { z } from 'zod';

export interface Brand {
  name?: string;
  logoUrl?: string;
  color?: string;
}

export const brandField = z
  .object({
    name: z.string().trim().min(1).max(80).optional(),
    logoUrl: z
      .url({ protocol: /^https$/ })
      .max(500)
      .optional()
      .describe('an https URL of an image (shown at most 48 px high)'),
    color: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/, 'must be a colour as #RRGGBB')
      .optional(),
  })
  .strict();

/** The brand as stored (a JSON object); anything unexpected in it is ignored. */
export function brandOf(stored: unknown): Brand {
  const parsed = brandField.safeParse(stored ?? {});
  return parsed.success ? parsed.data : {};
}

/** Black or white, whichever contrasts more with the colour (relative luminance, WCAG 2). */
export function textOn(color: string): '#000000' | '#ffffff' {
  const channel = (i: number) => {
    const c = Number.parseInt(color.slice(1 + i * 2, 3 + i * 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
  return (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) ? '#000000' : '#ffffff';
}
