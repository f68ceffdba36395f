// The country of a payer's IP address (docs/risk.md, IP country), read from an offline database the operator
// supplies in the MaxMind DB format (TESSERA_IP_COUNTRY_DB: MaxMind's GeoLite2 Country, DB-IP's IP to
// Country Lite, IPinfo's Lite, …), loaded once into memory and read with mmdb-lib, so a lookup is no I/O.
// None is bundled: the one freely licensed database on npm is deprecated by its authors for wrong data, and
// the GeoLite2 packages carry MaxMind's licence terms an operator must accept themselves.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { Reader } from 'mmdb-lib';

/** An IP address's ISO 3166 alpha-2 country, "" when there is no database, no address or no entry. */
export type IpCountry = (ip: string | null | undefined) => string;

export const noIpCountry: IpCountry = () => '';

/** Reads the database at `path` whole (a bad file stops the start, naming it); no path: every IP is "". */
export function ipCountryLookup(path: string | undefined): IpCountry {
  if (!path) return noIpCountry;
  let reader: Reader<Record<string, unknown>>;
  try {
    reader = new Reader<Record<string, unknown>>(readFileSync(path));
  } catch (err) {
    throw new Error(`TESSERA_IP_COUNTRY_DB: ${path} is not a MaxMind DB file (${(err as Error).message})`);
  }
  return (ip) => {
    if (!ip || isIP(ip) === 0) return '';
    try {
      return countryCodeOf(reader.get(ip));
    } catch {
      // An IPv6 address in an IPv4-only database
      return '';
    }
  };
}

/** The country in a record of any of the common layouts: `country.iso_code` (MaxMind, DB-IP) or `country_code` (IPinfo). */
function countryCodeOf(record: Record<string, unknown> | null): string {
  if (!record) return '';
  const country = record.country as { iso_code?: unknown } | undefined;
  const code = typeof country?.iso_code === 'string' ? country.iso_code : record.country_code;
  return typeof code === 'string' && /^[A-Za-z]{2}$/.test(code) ? code.toUpperCase() : '';
}
