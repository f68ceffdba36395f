// A sanctions list's entry as Tessera keeps it (docs/compliance.md, Sanctions lists): whichever official
// file it came from (the EU's, the UN's or OFAC's), its names, dates of birth, countries, addresses and
// digital-currency addresses, read once at the edge by that format's reader (sanctions-eu.ts,
// sanctions-un.ts, sanctions-ofac.ts).
import { createHash } from 'node:crypto';

export const SANCTIONS_SOURCES = ['eu', 'un', 'ofac'] as const;
export type SanctionsSource = (typeof SANCTIONS_SOURCES)[number];

export interface ListEntry {
  /** The list's own id for the entry: the EU's logicalId, the UN's DATAID, OFAC's uid */
  sourceId: string;
  kind: 'person' | 'entity' | 'vessel' | 'aircraft';
  /** The primary name first; aliases after, `strong` when the list calls them good-quality */
  names: { name: string; strong: boolean }[];
  /** `YYYY-MM-DD`, or `YYYY` when the list gives only a year */
  birthDates: string[];
  /** ISO 3166 alpha-2 where the list gives one or the name is known, else the list's own words */
  nationalities: string[];
  addresses: { text: string; country: string | null }[];
  /** Digital-currency addresses (OFAC's `Digital Currency Address - XBT` ids) */
  cryptoAddresses: { currency: string; address: string }[];
  programs: string[];
  reference: string | null;
  listedOn: string | null;
}

export interface ListFile {
  source: SanctionsSource;
  /** The file's own publication date, when it says */
  generatedAt: Date | null;
  entries: ListEntry[];
}

/** A file that is not the format it was said to be, or not XML at all: a 400 naming the body */
export class ListFormatError extends Error {
  override name = 'ListFormatError';
}

/** The entry's fingerprint: a changed entry is a new version, an unchanged one is left as it is */
export function entryHash(entry: ListEntry): string {
  return createHash('sha256').update(JSON.stringify(entry)).digest('hex');
}

/** Text of an element or attribute as the XML reader gave it: trimmed, empty as null */
export function text(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'object') {
    const inner = (value as Record<string, unknown>)['#text'];
    return inner === undefined ? null : text(inner);
  }
  const s = String(value).replace(/\s+/g, ' ').trim();
  return s === '' ? null : s;
}

/** An element the reader may give once or many times, always as a list */
export function many<T = Record<string, unknown>>(value: unknown): T[] {
  if (value === undefined || value === null || value === '') return [];
  return (Array.isArray(value) ? value : [value]) as T[];
}

export const compact = <T>(values: (T | null | undefined)[]): T[] => [
  ...new Set(values.filter((v): v is T => v !== null && v !== undefined)),
];

/** English country names (and the lists' other spellings) to ISO 3166 alpha-2, for nationality evidence */
let countryCodes: ReadonlyMap<string, string> | undefined;
/** Built on the first list read, not at start-up: 676 region names asked of Intl */
const COUNTRY_CODES = (): ReadonlyMap<string, string> =>
  (countryCodes ??= (() => {
    const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
    const codes = new Map<string, string>();
    for (let a = 65; a <= 90; a++) {
      for (let b = 65; b <= 90; b++) {
        const code = String.fromCharCode(a, b);
        const name = regionNames.of(code);
        if (name && name !== code) codes.set(name.toLowerCase(), code);
      }
    }
    for (const [name, code] of Object.entries({
      'russian federation': 'RU',
      'iran (islamic republic of)': 'IR',
      "democratic people's republic of korea": 'KP',
      'korea, north': 'KP',
      'syrian arab republic': 'SY',
      'united states of america': 'US',
      'united kingdom of great britain and northern ireland': 'GB',
      'viet nam': 'VN',
      'bolivarian republic of venezuela': 'VE',
    })) {
      codes.set(name, code);
    }
    return codes;
  })());

/** A country as an ISO code when it is one or its English name is known; else as the list wrote it */
export function countryCode(value: string | null): string | null {
  if (!value) return null;
  if (/^[A-Z]{2}$/.test(value)) return value;
  return COUNTRY_CODES().get(value.toLowerCase()) ?? value;
}

/** Every entry has its id and a name: one without is refused with the file, not skipped */
export function checked(entries: ListEntry[]): ListEntry[] {
  for (const [i, entry] of entries.entries()) {
    if (!entry.sourceId || entry.names.length === 0) {
      throw new ListFormatError(`entry ${i + 1} has no ${entry.sourceId ? 'name' : 'id'}`);
    }
  }
  return entries;
}
