// Crypto errors as the real service answers them (`{code, message, errors: [{detail}]}`, docs/wire-compatibility.md),
// extended with JSON:API members: status, title and source.pointer naming the field.
import type { ErrorCode } from '../../platform/errors/domain-error.ts';
import type { ErrorPresenter } from '../../platform/http/api-scope.ts';

const TITLES: Partial<Record<ErrorCode, string>> = {
  validation_failed: 'Invalid attribute',
  unauthenticated: 'Unauthorized',
  forbidden: 'Forbidden',
  not_found: 'Not found',
  invalid_state: 'Conflict',
  conflict: 'Conflict',
  rate_limited: 'Too many requests',
};

export const presentCryptoError: ErrorPresenter = (error, requestId) => {
  const message = error.code === 'unauthenticated' ? 'invalid_api_key' : error.code;
  const detail =
    error.code === 'internal'
      ? 'internal error'
      : error.code === 'unauthenticated'
        ? 'invalid_api_key'
        : error.message;
  return {
    status: error.status,
    body: {
      code: error.status,
      message,
      errors: [
        {
          status: String(error.status),
          code: error.code,
          title: TITLES[error.code] ?? 'Error',
          detail,
          ...(error.field ? { source: { pointer: jsonPointer(error.field) } } : {}),
        },
      ],
      requestId,
    },
  };
};

/** "data.attributes.amount" → "/data/attributes/amount"; a header name stays as it is. */
function jsonPointer(field: string): string {
  return field.includes('.') || field === 'data' ? `/${field.replaceAll('.', '/')}` : field;
}
