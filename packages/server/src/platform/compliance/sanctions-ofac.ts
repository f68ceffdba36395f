// OFAC's Specially Designated Nationals list, in its XML (`sdn.xml`): an `sdnList` root with
// `publshInformation/Publish_Date` (MM/DD/YYYY) and `sdnEntry` elements identified by `uid` — firstName and
// lastName, sdnType (Individual, Entity, Vessel, Aircraft), programList, akaList (category strong or weak),
// addressList, nationalityList and citizenshipList, dateOfBirthList (`12 Jan 1965`, `1965`, `circa 1965`),
// and idList, whose `Digital Currency Address - XBT` (ETH, USDT, …) ids are the addresses a crypto store
// must not take from or refund to.
import { field, readListXml, type XmlElement } from './list-xml.ts';
import {
  checked,
  compact,
  countryCode,
  type ListEntry,
  type ListFile,
  many,
  text,
} from './sanctions-entry.ts';

const list = (element: XmlElement, outer: string, inner: string) =>
  many<XmlElement>((element[outer] as XmlElement | undefined)?.[inner]);
export const KINDS: Record<string, ListEntry['kind']> = {
  Individual: 'person',
  Entity: 'entity',
  Vessel: 'vessel',
  Aircraft: 'aircraft',
};
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const CRYPTO = /^Digital Currency Address - ([A-Z0-9]+)$/;

export function readOfacList(body: string): ListFile {
  const root = readListXml(body, 'the OFAC SDN list (XML)', 'sdnList');
  const published = field((root.publshInformation as XmlElement | undefined) ?? {}, 'Publish_Date');
  const [month, day, year] = published?.split('/') ?? [];
  const entries = many<XmlElement>(root.sdnEntry).map((e): ListEntry => {
    const name = (n: XmlElement) => compact([field(n, 'firstName'), field(n, 'lastName')]).join(' ');
    const ids = list(e, 'idList', 'id');
    return {
      sourceId: field(e, 'uid') ?? '',
      kind: KINDS[field(e, 'sdnType') ?? ''] ?? 'entity',
      names: [
        { name: name(e), strong: true },
        ...list(e, 'akaList', 'aka').map((a) => ({ name: name(a), strong: field(a, 'category') !== 'weak' })),
      ].filter((n) => n.name !== ''),
      birthDates: compact(
        list(e, 'dateOfBirthList', 'dateOfBirthItem').map((d) => birthDate(field(d, 'dateOfBirth'))),
      ),
      nationalities: compact(
        [...list(e, 'nationalityList', 'nationality'), ...list(e, 'citizenshipList', 'citizenship')].map(
          (n) => countryCode(field(n, 'country')),
        ),
      ),
      addresses: list(e, 'addressList', 'address').map((a) => ({
        text: compact(
          ['address1', 'address2', 'address3', 'city', 'stateOrProvince', 'postalCode', 'country'].map((n) =>
            field(a, n),
          ),
        ).join(', '),
        country: countryCode(field(a, 'country')),
      })),
      cryptoAddresses: ids.flatMap((id) => {
        const currency = CRYPTO.exec(field(id, 'idType') ?? '')?.[1];
        const address = field(id, 'idNumber');
        return currency && address ? [{ currency, address }] : [];
      }),
      programs: compact(many((e.programList as XmlElement | undefined)?.program).map((p) => text(p))),
      reference: null,
      listedOn: null,
    };
  });
  return {
    source: 'ofac',
    generatedAt: year && month && day ? new Date(`${year}-${month}-${day}T00:00:00Z`) : null,
    entries: checked(entries),
  };
}

/** `12 Jan 1965` as 1965-01-12; `1965`, `circa 1965` or `Jan 1965` as its year */
export function birthDate(value: string | null): string | null {
  if (!value) return null;
  const full = /^(\d{1,2}) ([A-Za-z]{3}) (\d{4})$/.exec(value);
  const month = full ? MONTHS.indexOf((full[2] ?? '').toLowerCase()) : -1;
  if (full && month >= 0)
    return `${full[3]}-${String(month + 1).padStart(2, '0')}-${(full[1] ?? '').padStart(2, '0')}`;
  return /\d{4}/.exec(value)?.[0] ?? null;
}
