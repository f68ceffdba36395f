// The UN Security Council's consolidated list, in its XML: a `CONSOLIDATED_LIST` root (dateGenerated) of
// `INDIVIDUALS/INDIVIDUAL` and `ENTITIES/ENTITY`, identified by `DATAID`. A person's name is its
// FIRST_NAME … FOURTH_NAME in order, with NAME_ORIGINAL_SCRIPT and INDIVIDUAL_ALIAS (QUALITY Good or Low)
// beside it; NATIONALITY/VALUE, INDIVIDUAL_DATE_OF_BIRTH (an exact DATE, a YEAR, or FROM_YEAR–TO_YEAR),
// INDIVIDUAL_ADDRESS. An entity's name is its FIRST_NAME, with ENTITY_ALIAS and ENTITY_ADDRESS.
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

export function readUnList(body: string): ListFile {
  const root = readListXml(body, 'the UN consolidated list (XML)', 'CONSOLIDATED_LIST');
  const generated = text(root['@_dateGenerated']);
  const people = many<XmlElement>((root.INDIVIDUALS as XmlElement | undefined)?.INDIVIDUAL).map((e) =>
    entry(e, 'person', 'INDIVIDUAL'),
  );
  const entities = many<XmlElement>((root.ENTITIES as XmlElement | undefined)?.ENTITY).map((e) =>
    entry(e, 'entity', 'ENTITY'),
  );
  return {
    source: 'un',
    generatedAt: generated ? new Date(generated) : null,
    entries: checked([...people, ...entities]),
  };
}

function entry(e: XmlElement, kind: 'person' | 'entity', prefix: 'INDIVIDUAL' | 'ENTITY'): ListEntry {
  const primary = compact(
    ['FIRST_NAME', 'SECOND_NAME', 'THIRD_NAME', 'FOURTH_NAME'].map((n) => field(e, n)),
  ).join(' ');
  const aliases = many<XmlElement>(e[`${prefix}_ALIAS`]).flatMap((a) => {
    const name = field(a, 'ALIAS_NAME');
    return name ? [{ name, strong: field(a, 'QUALITY') !== 'Low' }] : [];
  });
  const original = field(e, 'NAME_ORIGINAL_SCRIPT');
  return {
    sourceId: field(e, 'DATAID') ?? '',
    kind,
    names: [
      ...(primary ? [{ name: primary, strong: true }] : []),
      ...(original ? [{ name: original, strong: true }] : []),
      ...aliases,
    ],
    birthDates: compact(
      many<XmlElement>(e.INDIVIDUAL_DATE_OF_BIRTH).flatMap((d) => [
        field(d, 'DATE')?.slice(0, 10),
        field(d, 'YEAR'),
        field(d, 'FROM_YEAR'),
        field(d, 'TO_YEAR'),
      ]),
    ),
    nationalities: compact(
      many<XmlElement>(e.NATIONALITY).flatMap((n) => many(n.VALUE).map((v) => countryCode(text(v)))),
    ),
    addresses: many<XmlElement>(e[`${prefix}_ADDRESS`])
      .map((a) => ({
        text: compact(['STREET', 'CITY', 'STATE_PROVINCE', 'COUNTRY'].map((n) => field(a, n))).join(', '),
        country: countryCode(field(a, 'COUNTRY')),
      }))
      .filter((a) => a.text !== ''),
    cryptoAddresses: [],
    programs: compact([field(e, 'UN_LIST_TYPE')]),
    reference: field(e, 'REFERENCE_NUMBER'),
    listedOn: field(e, 'LISTED_ON'),
  };
}
