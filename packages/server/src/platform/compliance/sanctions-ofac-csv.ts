// OFAC's Specially Designated Nationals list in its legacy CSV files: `sdn.csv` (ent_num, SDN_Name,
// SDN_Type, Program, Title, Call_Sign, Vess_type, Tonnage, GRT, Vess_flag, Vess_owner, Remarks), `alt.csv`
// (ent_num, alt_num, alt_type, alt_name, alt_remarks), `add.csv` (ent_num, add_num, Address,
// City/State/Province/Postal Code, Country, Add_remarks) and `sdn_comments.csv` (ent_num, the remarks
// past sdn.csv's 1,000 characters). No header rows; `-0-` is an empty value; a file may end with a
// Ctrl-Z. An individual's names are written `LAST, First`. What the XML gives in elements the CSV gives in
// the remarks, `;`-separated: `DOB 12 Jan 1965`, `nationality Russia`, `citizen Iran`, `Digital Currency
// Address - XBT 1abc…` (also `alt. Digital Currency Address - …`), `a.k.a. 'NAME'` (a weak alias). The
// same list read from its CSV files and from its XML is the same entries (sanctions-ofac.ts).
import { parse } from 'csv-parse/sync';
import {
  checked,
  compact,
  countryCode,
  type ListEntry,
  type ListFile,
  ListFormatError,
} from './sanctions-entry.ts';
import { birthDate, KINDS } from './sanctions-ofac.ts';

export interface OfacCsvFiles {
  /** sdn.csv: the entries (required) */
  sdn: string;
  /** alt.csv: their alternate names */
  alt?: string;
  /** add.csv: their addresses */
  add?: string;
  /** sdn_comments.csv: the rest of their remarks */
  comments?: string;
}

/** The part names an upload may give each file by (its field name or its file name) */
export const OFAC_CSV_FILES: Record<string, keyof OfacCsvFiles> = {
  'sdn.csv': 'sdn',
  'alt.csv': 'alt',
  'add.csv': 'add',
  'sdn_comments.csv': 'comments',
};

/** The end-of-file mark OFAC's files may end with */
const CTRL_Z = String.fromCharCode(0x1a);
const CRYPTO = /^(?:alt\. )?Digital Currency Address - ([A-Z0-9]+) (\S+)$/;

function rows(text: string | undefined, name: string, width: number): string[][] {
  if (!text) return [];
  let records: string[][];
  try {
    records = parse(text.replaceAll(CTRL_Z, ''), {
      relax_column_count: true,
      skip_empty_lines: true,
      relax_quotes: true,
    }) as string[][];
  } catch (err) {
    throw new ListFormatError(`${name} is not OFAC's CSV: ${(err as Error).message}`);
  }
  for (const [i, record] of records.entries()) {
    if (record.length < width || !/^\d+$/.test((record[0] ?? '').trim()))
      throw new ListFormatError(`${name} is not OFAC's CSV: record ${i + 1} has ${record.length} fields`);
  }
  return records.map((r) => r.map((v) => v.trim()));
}

/** A field's value; `-0-` (OFAC's null) and empty as null */
const value = (v: string | undefined) => (v === undefined || v === '' || v === '-0-' ? null : v);

/** `LAST, First Middle` as `First Middle LAST` (as the XML's firstName and lastName make it) */
const personName = (name: string) => {
  const comma = name.indexOf(', ');
  return comma < 0 ? name : `${name.slice(comma + 2)} ${name.slice(0, comma)}`;
};

export function readOfacCsv(files: OfacCsvFiles): ListFile {
  const entries = rows(files.sdn, 'sdn.csv', 12);
  if (entries.length === 0) throw new ListFormatError('sdn.csv has no entries');
  const byEntry = <T>(records: string[][], make: (r: string[]) => T) => {
    const map = new Map<string, T[]>();
    for (const r of records) map.set(r[0] as string, [...(map.get(r[0] as string) ?? []), make(r)]);
    return map;
  };
  const aliases = byEntry(rows(files.alt, 'alt.csv', 4), (r) => value(r[3]));
  const addresses = byEntry(rows(files.add, 'add.csv', 5), (r) => ({
    text: compact([value(r[2]), value(r[3]), value(r[4])]).join(', '),
    country: countryCode(value(r[4])),
  }));
  const comments = byEntry(rows(files.comments, 'sdn_comments.csv', 2), (r) => value(r[1]) ?? '');
  return {
    source: 'ofac',
    // The CSV files do not say when they were published
    generatedAt: null,
    entries: checked(
      entries.map((r): ListEntry => {
        const id = r[0] as string;
        const type = value(r[2]);
        const individual = type?.toLowerCase() === 'individual';
        const asName = (n: string) => (individual ? personName(n) : n);
        // sdn_comments.csv goes on where the remarks were cut, mid-word as may be
        const remarks = [value(r[11]), ...(comments.get(id) ?? [])]
          .filter(Boolean)
          .join('')
          .split(';')
          .map((item) => item.trim().replace(/\.$/, ''))
          .filter(Boolean);
        const after = (prefix: RegExp) =>
          remarks.flatMap((item) => {
            const m = prefix.exec(item);
            return m ? [item.slice(m[0].length).trim()] : [];
          });
        const primary = value(r[1]);
        return {
          sourceId: id,
          kind: KINDS[type ? type[0]?.toUpperCase() + type.slice(1).toLowerCase() : ''] ?? 'entity',
          names: [
            ...(primary ? [{ name: asName(primary), strong: true }] : []),
            ...(aliases.get(id) ?? []).flatMap((a) => (a ? [{ name: asName(a), strong: true }] : [])),
            ...after(/^a\.k\.a\. /).map((a) => ({ name: asName(a.replace(/^'|'$/g, '')), strong: false })),
          ],
          birthDates: compact(after(/^DOB /).map(birthDate)),
          nationalities: compact([...after(/^nationality /), ...after(/^citizen /)].map(countryCode)),
          addresses: addresses.get(id) ?? [],
          cryptoAddresses: remarks.flatMap((item) => {
            const m = CRYPTO.exec(item);
            return m?.[1] && m[2] ? [{ currency: m[1], address: m[2] }] : [];
          }),
          programs: compact(
            (value(r[3]) ?? '').split('] [').map((p) => value(p.replace(/^\[|\]$/g, '').trim())),
          ),
          reference: null,
          listedOn: null,
        };
      }),
    ),
  };
}
