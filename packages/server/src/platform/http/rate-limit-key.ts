// Rate limits apply per credential: the hash of whichever credential header the request carries, so
// one noisy tenant cannot starve another behind the same proxy; anonymous callers are keyed by IP.
import { hash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

const CREDENTIAL_HEADERS = ['authorization', 'x-partner-api-key', 'x-partner-id'] as const;

export function rateLimitKey(request: FastifyRequest): string {
  for (const header of CREDENTIAL_HEADERS) {
    const value = request.headers[header];
    if (typeof value === 'string' && value.length > 0) {
      const key = `${header}:${hash('sha256', value, 'base64url').slice(0, 22)}`;
      // A partner id is public (its customers' apps send it): limit each client, not the partner as a whole.
      return header === 'x-partner-id' ? `${key}:${request.ip}` : key;
    }
  }
  return `ip:${request.ip}`;
}
