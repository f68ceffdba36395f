// The customer identifier rule (spec, Customer): letters, digits, -, _, ., @ and space, 1 to 92
// characters, unique per site. One rule for every way a customer is made: the API and the hosted checkout.
import { createHash } from 'node:crypto';
import { validationFailed } from '../../platform/errors/domain-error.ts';

export const IDENTIFIER_PATTERN = /^[\p{L}\p{N}\-_.@ ]{1,92}$/u;

export function checkIdentifier(identifier: string): string {
  if (identifier.length > 92) throw validationFailed('identifier', 'identifier has at most 92 characters');
  if (!IDENTIFIER_PATTERN.test(identifier)) {
    throw validationFailed('identifier', 'identifier allows letters, digits, -, _, ., @ and space');
  }
  return identifier;
}

/**
 * The identifier of a buyer known only by an email (the hosted checkout): the email itself when the rule
 * allows it, else a stable name derived from it (`a+b@x.io` has a `+`), so one email is one customer.
 */
export function identifierForEmail(email: string): string {
  return IDENTIFIER_PATTERN.test(email)
    ? email
    : `checkout-${createHash('sha256').update(email).digest('hex').slice(0, 32)}`;
}
