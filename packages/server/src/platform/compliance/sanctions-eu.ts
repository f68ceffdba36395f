// The EU's consolidated list of persons, groups and entities subject to financial sanctions, in its XML
// (the Financial Sanctions Files' `xmlFullSanctionsList_1_1`): an `export` root of `sanctionEntity`
// elements whose facts are attributes — `nameAlias` (wholeName, strong), `citizenship`, `birthdate`,
// `address`, `regulation` (programme) — each entity identified by its `logicalId`.
import { attribute as attr, readListXml, type XmlElement } from './list-xml.ts';
import { checked, compact, countryCode, type ListEntry, type ListFile, many } from './sanctions-entry.ts';

/** The EU writes `00` for a country it does not know */
const known = (code: string | null) => (code && code !== '00' ? code : null);

export function readEuList(body: string): ListFile {
  const root = readListXml(body, 'the EU consolidated list (FSF XML)', 'export');
  const generated = attr(root, 'generationDate');
  const entries = many<XmlElement>(root.sanctionEntity).map((e): ListEntry => {
    const subject = attr((e.subjectType as XmlElement | undefined) ?? {}, 'code');
    const names = many<XmlElement>(e.nameAlias).flatMap((a) => {
      const name =
        attr(a, 'wholeName') ??
        compact([attr(a, 'firstName'), attr(a, 'middleName'), attr(a, 'lastName')]).join(' ');
      return name ? [{ name, strong: attr(a, 'strong') !== 'false' }] : [];
    });
    return {
      sourceId: attr(e, 'logicalId') ?? '',
      kind: subject === 'person' ? 'person' : 'entity',
      names,
      birthDates: compact(many<XmlElement>(e.birthdate).map((b) => attr(b, 'birthdate') ?? attr(b, 'year'))),
      nationalities: compact(
        many<XmlElement>(e.citizenship).map((c) =>
          countryCode(known(attr(c, 'countryIso2Code')) ?? attr(c, 'countryDescription')),
        ),
      ),
      addresses: many<XmlElement>(e.address).map((a) => ({
        text: compact([
          attr(a, 'street'),
          attr(a, 'city'),
          attr(a, 'zipCode'),
          attr(a, 'countryDescription'),
        ]).join(', '),
        country: countryCode(known(attr(a, 'countryIso2Code'))),
      })),
      cryptoAddresses: [],
      programs: compact(many<XmlElement>(e.regulation).map((r) => attr(r, 'programme'))),
      reference: attr(e, 'euReferenceNumber'),
      listedOn: attr(e, 'designationDate'),
    };
  });
  return { source: 'eu', generatedAt: generated ? new Date(generated) : null, entries: checked(entries) };
}
