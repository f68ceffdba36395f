// JSON written by a client, read once with a bound on how deep it nests. Nothing Tessera accepts nests
// deeper than a few levels; a body of thousands of nested arrays (a few KB) would otherwise reach every
// walk over the parsed value. The depth is counted on the text, in one pass without recursion, before
// JSON.parse builds anything.
import { DomainError } from '../errors/domain-error.ts';

/** Arrays and objects nested deeper than this are refused (400 naming the field). */
export const MAX_JSON_DEPTH = 32;

/** Whether the JSON text opens more than `limit` arrays or objects inside one another. */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

export function tooDeep(field: string): DomainError {
  return new DomainError(
    'validation_failed',
    `${field} nests arrays or objects deeper than ${MAX_JSON_DEPTH} levels`,
    { field },
  );
}

/**
 * JSON.parse for what a client sent: a DomainError naming `field` when it nests too deep; a
 * SyntaxError, as JSON.parse throws it, when it is not JSON.
 */
export function parseClientJson(text: string, field: string): unknown {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) throw tooDeep(field);
  return JSON.parse(text);
}
