// Card issuing errors keep the real service's `{code, message}` (docs/wire-compatibility.md) and add a stable machine
// code, the field and the request id.
import type { ErrorPresenter } from '../../platform/http/api-scope.ts';

const MESSAGES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  402: 'Payment required',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  413: 'Payload too large',
  414: 'URI too long',
  415: 'Unsupported media type',
  422: 'Unprocessable entity',
  429: 'Too many requests',
  431: 'Request header fields too large',
  500: 'Internal server error',
  503: 'Service unavailable',
};

export const presentIssuingError: ErrorPresenter = (error, requestId) => ({
  status: error.status,
  body: {
    code: error.status,
    message: MESSAGES[error.status] ?? 'Error',
    error: error.code,
    detail: error.code === 'internal' ? 'internal error' : error.message,
    ...(error.field ? { field: error.field } : {}),
    ...(error.details && error.status < 500 ? { details: error.details } : {}),
    requestId,
  },
});
