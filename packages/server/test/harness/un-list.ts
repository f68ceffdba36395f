// A UN Security Council consolidated list in its own XML, of the people a test names: the file an operator
// imports (POST /admin/compliance/sanctions/imports?source=un).
export interface ListedPerson {
  /** The entry's DATAID */
  id: string;
  first: string;
  second: string;
  third?: string;
  dateOfBirth: string;
}

/** The list of these people; `stamp` (its dateGenerated) makes each file's bytes its own */
export function unList(people: readonly ListedPerson[], stamp = '2026-12-03T10:00:00.000Z'): string {
  const individuals = people
    .map(
      (p) => `
    <INDIVIDUAL>
      <DATAID>${p.id}</DATAID>
      <FIRST_NAME>${p.first}</FIRST_NAME>
      <SECOND_NAME>${p.second}</SECOND_NAME>${p.third ? `\n      <THIRD_NAME>${p.third}</THIRD_NAME>` : ''}
      <UN_LIST_TYPE>DPRK</UN_LIST_TYPE>
      <REFERENCE_NUMBER>KPi.${p.id}</REFERENCE_NUMBER>
      <LISTED_ON>2026-01-15</LISTED_ON>
      <INDIVIDUAL_DATE_OF_BIRTH><TYPE_OF_DATE>EXACT</TYPE_OF_DATE><DATE>${p.dateOfBirth}</DATE></INDIVIDUAL_DATE_OF_BIRTH>
    </INDIVIDUAL>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>
<CONSOLIDATED_LIST dateGenerated="${stamp}">
  <INDIVIDUALS>${individuals}
  </INDIVIDUALS>
  <ENTITIES/>
</CONSOLIDATED_LIST>
`;
}
