// The lists' XML read once, at the edge: well-formedness checked (a malformed file is refused whole,
// never half-read), namespaces dropped (OFAC's has changed its namespace before), every value kept as
// text. No DTD or external entity is ever fetched: the reader resolves only XML's own five entities.
import { XMLParser } from 'fast-xml-parser';
import { ListFormatError, text } from './sanctions-entry.ts';

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  processEntities: true,
  htmlEntities: false,
});

/** The document's root element, which must be `root`: `what` names the format in the refusal */
export function readListXml(body: string, what: string, root: string): Record<string, unknown> {
  let document: Record<string, unknown>;
  try {
    document = parser.parse(body, true) as Record<string, unknown>;
  } catch (err) {
    throw new ListFormatError(`not well-formed XML: ${(err as Error).message}`);
  }
  const top = document[root];
  if (!top || typeof top !== 'object') {
    const found = Object.keys(document).find((k) => !k.startsWith('?'));
    throw new ListFormatError(`not ${what}: its root element is <${found ?? 'none'}>, not <${root}>`);
  }
  return top as Record<string, unknown>;
}

/** An element as the reader gives it: child elements by name, attributes as `@_name` */
export type XmlElement = Record<string, unknown>;

/** A child element's text, trimmed; null when absent or empty */
export const field = (element: XmlElement, name: string) => text(element[name]);

/** An attribute's text, trimmed; null when absent or empty */
export const attribute = (element: XmlElement, name: string) => text(element[`@_${name}`]);
