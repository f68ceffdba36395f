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
  const multipart = multipartError(err);
  if (multipart) return multipart;
  if (e.statusCode === 429) return new DomainError('rate_limited', 'too many requests');
  if (e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500) {
    return new DomainError('validation_failed', 'the request is invalid');
  }
  return new DomainError('internal', 'internal error', { cause: err });
}

/** @fastify/multipart's refusals and busboy's complaints about a body (no boundary, truncated, …). */
const MULTIPART_LIMITS = new Set(['FST_PARTS_LIMIT', 'FST_FILES_LIMIT', 'FST_FIELDS_LIMIT']);
const MULTIPART_MALFORMED = new Set([
  'FST_INVALID_MULTIPART_CONTENT_TYPE',
  'FST_MULTIPART_INVALID_CONTENT_TYPE',
  'FST_PROTO_VIOLATION',
  'FST_NO_FORM_DATA',
]);
const BUSBOY_MESSAGE =
  /^(Multipart: |Unexpected end of (form|file)|Malformed (part header|content type|urlencoded form)|Unsupported content type)/i;

/** A multipart body the parser could not read is the client's bad input (400), never our 500. */
export function multipartError(err: unknown, field = 'body'): DomainError | undefined {
  const e = err as FastifyishError & { message?: string };
  if (e.code === 'FST_REQ_FILE_TOO_LARGE') return new DomainError('payload_too_large', 'a file is too large');
  if (e.code && MULTIPART_LIMITS.has(e.code))
    return new DomainError('validation_failed', 'the body has too many parts', { field });
  if ((e.code && MULTIPART_MALFORMED.has(e.code)) || BUSBOY_MESSAGE.test(e.message ?? '')) {
    const reason = (e.message ?? 'unreadable').slice(0, 120);
    return new DomainError('validation_failed', `the multipart body is malformed: ${reason}`, { field });
  }
  return undefined;
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
