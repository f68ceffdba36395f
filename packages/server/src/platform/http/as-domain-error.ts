// Every error that reaches an API's error handler becomes a DomainError here, once, so each API's
// presenter only has to render DomainErrors. Nothing here echoes request input back.
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { isDatabaseUnavailable } from '../db/database-unavailable.ts';
import { DomainError } from '../errors/domain-error.ts';

interface FastifyishError {
  code?: string;
  statusCode?: number;
  validationContext?: string;
}

export function asDomainError(err: unknown): DomainError {
  if (err instanceof DomainError && err.code !== 'internal') return err;
  if (isDatabaseUnavailable(err)) return databaseUnavailable(err);
  if (err instanceof DomainError) return err;
  if (hasZodFastifySchemaValidationErrors(err)) {
    const first = err.validation[0];
    const context = (err as FastifyishError).validationContext;
    // Body and query fields are named by their path; a missing header or param by its context.
    const path = first ? first.instancePath.replace(/^\//, '').replaceAll('/', '.') : '';
    const field = path === '' ? context : path;
    const message = first
      ? describeIssue(field, first.message ?? 'is invalid', first.keyword)
      : 'the request is invalid';
    return new DomainError('validation_failed', message, field ? { field } : {});
  }
  const e = err as FastifyishError;
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new DomainError('validation_failed', 'the body is not valid JSON', { field: 'body' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new DomainError('unsupported_media_type', 'this content type is not accepted here', {
        field: 'content-type',
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new DomainError('payload_too_large', 'the body is too large');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new DomainError('validation_failed', 'the Content-Length does not match the body', {
        field: 'content-length',
      });
  }
  if (err instanceof SyntaxError) {
    return new DomainError('validation_failed', 'the body could not be parsed', { field: 'body' });
  }
  if (e.statusCode === 429) return new DomainError('rate_limited', 'too many requests');
  if (e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500) {
    return new DomainError('validation_failed', 'the request is invalid');
  }
  return new DomainError('internal', 'internal error', { cause: err });
}

/**
 * The database is restarting or failing over. Whether a write sent just before committed is unknown to
 * us too: a retry with the same Idempotency-Key answers it either way.
 */
function databaseUnavailable(cause: unknown): DomainError {
  return new DomainError(
    'database_unavailable',
    'the database is unavailable for a moment; retry (a write with the same Idempotency-Key)',
    { retryAfterSeconds: 1, cause },
  );
}

function describeIssue(field: string | undefined, message: string, keyword: string): string {
  const name = field ?? 'the request';
  if (keyword === 'invalid_type' && /received undefined/.test(message)) return `${name} is required`;
  return `${name}: ${message}`;
}
